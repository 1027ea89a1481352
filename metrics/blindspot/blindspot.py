"""Blind spots of a text-generation metric: perturb gold hypotheses, score them, judge each test.

This is the main job of blindspot as one ``evaluate`` module. Given a metric (a name such as
``"rouge"`` or ``"bertscore@minilm"``, or a loaded evaluate module), gold hypotheses and, as the
task needs, their references and sources, it builds every stress test of the chosen suites at the
paper's levels and seeds (He et al., 2023), scores gold and noised sets with the metric, and
judges each test with the rank and monotonicity protocol: the metric passes only if its mean score
strictly decreases as the noise ratio grows (tolerance 1e-5, points with noise ratio >= 0.6 left
out). Each test comes with its curve, the per-sample view (fraction of rows the noise did not
lower, paired Wilcoxon p-value, bootstrap CI) and the examples the metric penalised least.

Examples:
    >>> import evaluate
    >>> blindspot = evaluate.load("blindspot")
    >>> golds = ["The council approved the new budget on Monday. Spending on schools rises by 4 percent.",
    ...          "Heavy rain closed the coastal road for two days. Engineers say repairs will take a week."]
    >>> refs = ["On Monday the council passed the budget, raising school spending by 4 percent.",
    ...         "Repairs to the coastal road, shut for two days by rain, will take a week."]
    >>> out = blindspot.compute(predictions=golds, references=refs, metric="rouge",
    ...                         tests="truncation,negation", seeds=[1], progress=False)
    >>> out["metric"], sorted(out["verdicts"])
    ('rouge.rougeL', ['negation', 'truncation'])
    >>> out["verdicts"]["negation"]
    'pass'
    >>> [p["level"] for p in out["tests"]["truncation"]["points"]][:3]
    ['gold', '0.1', '0.2']

Protocols that read their own columns take the whole set as ``data=`` (a path, a Dataset or a
dict of columns) instead of predictions: the MENLI preference protocol reads a MENLI-style set
(columns error, source, ref, hyp_para, hyp_adv_based, hyp_adv_free) and reports how often the
metric scores the paraphrase strictly above the adversarial candidate, per error type:

    >>> pairs = {"error": ["neg", "neg", "typo"],
    ...          "ref": ["The road is open.", "He sold the car.", "She likes tea."],
    ...          "hyp_para": ["The road has been opened.", "The car was sold by him.",
    ...                       "She is fond of tea."],
    ...          "hyp_adv_based": ["The road is not open.", "He did not sell the car.",
    ...                            "She likes tee."]}
    >>> out = blindspot.compute(data=pairs, metric="chrf", protocol="preference",
    ...                         protocol_options={"mode": "ref-based"}, progress=False)
    >>> out["metric"], out["accuracy"]
    ('chrf.chrf', {'neg': 0.0, 'typo': 0.0})
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets
import evaluate

from blindspot import errors
from blindspot.errors import check_text_list
from blindspot.protocols.interface import ProtocolRequest, get_protocol

_CITATION = """\
@inproceedings{he-etal-2023-blind,
    title = "On the Blind Spots of Model-Based Evaluation Metrics for Text Generation",
    author = "He, Tianxing and Zhang, Jingyu and Wang, Tianle and Kumar, Sachin and
      Cho, Kyunghyun and Glass, James and Tsvetkov, Yulia",
    booktitle = "Proceedings of the 61st Annual Meeting of the Association for Computational
      Linguistics (Volume 1: Long Papers)",
    year = "2023",
    publisher = "Association for Computational Linguistics",
    pages = "12067--12097",
}
"""

_INPUTS = """
Args:
    predictions (list of str): the gold hypotheses to perturb (e.g. reference summaries).
    references (list of str or list of list of str, optional): what the metric compares with.
    sources (list of str, optional): source documents (copy-source, COMET, UniEval...).
    ids (list, optional): row ids (default: a hash of each hypothesis).
    metric (str, evaluate module or function): the metric to judge, ``metric[.output][@model]``,
        a loaded module (ours use their scorer; others are called per batch), a function
        ``f(predictions, references=None, sources=None) -> list[float]`` (set
        ``f.higher_is_better = False`` when lower is better), ``my_metric.py:function``, a module
        folder ``./my_module/`` or a Hub module id ``org/name``.
    task (str): summarization (default), translation, translation_paragraph or open_ended.
    tests (str or list): suites (fluency, consistency, targeted, all; other papers' categories
        such as examination) and/or test names (default "fluency,consistency").
    seeds (list of int): seeds of the random tests (default 1..5).
    metric_options (dict): extra options of the metric's scorer.
    report_dir (str, optional): also write results.json, report.md, plots and report.html there.
    data (path, Dataset or dict of columns, optional): the whole input set, for protocols that
        read their own columns (``protocol="preference"``: a MENLI-style set); then give no
        predictions or references.
    protocol (str): the meta-evaluation protocol, "rank" (default) or another registered one
        (``blindspot.protocols.interface``); its own settings go in ``protocol_options`` (dict)
        or as further keywords, checked against the protocol's declared options (a clear
        ValueError names a bad one and lists the valid ones; ``blindspot protocols`` shows them).
    Further keywords (rank): noise_cap (0.6), tolerance (1e-5), worst_examples (3), levels,
    resources (mlm=, lm=, ngram_corpus=), num_proc, progress, state_dir, chunk_size (with
    ``data=`` a local .jsonl/.parquet file: streamed that many rows at a time, same results).
Returns:
    metric (its display name), gold (gold score summary), verdicts ({test: pass|fail|error|
    undecided}), failed (tests the metric fails), explanations ({test: the sentence naming the
    step that decided it}), gate (errors, fails, significant_fails -- the fails not within
    noise -- and the exit_code `blindspot run --fail-on error|fail|significant` would end
    with), errors ({test: message}), skipped_tests ({test: why}), tests ({test: rule, curve
    points, explanation, within_noise, per_sample, worst_examples, ...}),
    expectations (the examination paper's checks when its tests ran, else []) and results
    (the whole results.json dict).
"""


def _rows(predictions: Sequence[Any], references: Sequence[Any] | None,
          sources: Sequence[Any] | None, ids: Sequence[Any] | None) -> datasets.Dataset:
    """The inputs as one Dataset with conventional column names, checked for equal lengths
    and for text in every row (a number or None is named, not converted)."""
    check_text_list(predictions, "predictions")
    for argument, values in (("references", references), ("sources", sources)):
        if values is not None and not isinstance(values, str):
            check_text_list(values, argument, allow_lists=argument == "references")
    columns: dict[str, list[Any]] = {"gold": list(predictions)}
    given = (("references", "references", references), ("sources", "source", sources),
             ("ids", "id", ids))
    for argument, column, values in given:
        if values is None:
            continue
        if isinstance(values, str) or len(values) != len(predictions):
            got = "a string" if isinstance(values, str) else f"{len(values)} items"
            raise ValueError(f"`{argument}` must have one item per prediction: "
                             f"{len(predictions)} predictions but {got}")
        columns[column] = list(values)
    return datasets.Dataset.from_dict(columns)


class Blindspot(evaluate.Metric):
    """The blind-spot report of one metric on gold data, as an evaluate module."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=__doc__, citation=_CITATION, inputs_description=_INPUTS,
            features=[datasets.Features({"predictions": datasets.Value("string"),
                                         "references": datasets.Sequence(datasets.Value("string"))}),
                      datasets.Features({"predictions": datasets.Value("string"),
                                         "references": datasets.Value("string")})])

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any
                ) -> dict[str, Any]:
        """Perturb, score and judge in one call (the inputs are texts, not scores, so evaluate's
        batching and feature encoding are bypassed: references and sources are optional).

        Bad input (an unknown metric, test or option, a missing column...) raises one
        :class:`~blindspot.errors.BlindspotInputError` with the fix, not the checks' traceback:
        what the command line prints as its one line."""
        try:
            return self._checked_compute(predictions, references, **kwargs)
        except (ValueError, KeyError, FileNotFoundError) as error:
            raise errors.as_input_error(error) from None

    def _checked_compute(self, predictions: Any, references: Any, **kwargs: Any
                         ) -> dict[str, Any]:
        if kwargs.get("data") is not None:
            if predictions is not None or references is not None:
                raise ValueError("give either data= (the whole set, e.g. a MENLI-style set for "
                                 "protocol='preference') or predictions/references, not both")
            return self._compute(None, None, **kwargs)
        if predictions is None or isinstance(predictions, str) or not len(predictions):
            raise ValueError("predictions must be a non-empty list of gold hypotheses (strings), "
                             "or give the whole set as data=")
        return self._compute(list(predictions), references, **kwargs)

    def _compute(self, predictions: list[str] | None, references: Any = None,
                 sources: Sequence[str] | None = None, ids: Sequence[Any] | None = None,
                 metric: Any = None, task: str = "summarization", report_dir: Any = None,
                 protocol: str = "rank", data: Any = None, **settings: Any) -> dict[str, Any]:
        if metric is None:
            raise ValueError("name the metric to judge: metric='rouge' (or a loaded module)")
        if not isinstance(metric, str) and isinstance(metric, (list, tuple)):
            raise ValueError("one metric per call; for several use `blindspot run --metrics a,b`")
        chosen = get_protocol(protocol)
        if data is None:
            if predictions is None:
                raise ValueError("give predictions=[...] (with references=[...]) or data=...")
            data = _rows(predictions, references, sources, ids)
        common = {k: settings.pop(k) for k in _COMMON if k in settings}
        options = dict(settings.pop("protocol_options", None) or {})
        options.update(settings)  # the protocol's own settings (noise_cap, levels, tolerance...)
        request = ProtocolRequest(data=data, metrics=[metric], task=task, out=report_dir,
                                  options=options, **common)
        return chosen.view(chosen.run(request))


#: ProtocolRequest fields that may be given to compute() as keywords.
_COMMON = ("tests", "seeds", "metric_options", "resources", "noise_cap", "num_proc", "progress")
