"""ROUGE-1/2/L/Lsum (Lin, 2004) through rouge-score: a drop-in for evaluate's canonical ``rouge``.

The same arguments, defaults and outputs as ``evaluate.load("rouge")``: F-measures under the keys
``rouge1``, ``rouge2``, ``rougeL``, ``rougeLsum`` (or those of ``rouge_types``); NO stemming by
default (``use_stemmer=False``); ``use_aggregator=True`` gives rouge-score's bootstrap mid value
(``BootstrapAggregator``: the median of 1,000 resampled means, drawn from numpy's global random
state, so it varies slightly between calls unless ``np.random.seed`` is set), and
``use_aggregator=False`` one list per key, one value per row; a ``tokenizer`` callable
(str -> list of tokens) replaces rouge-score's. A list of references per row is rouge-score's
``score_multi``: for each ROUGE type separately, the reference with the best F-measure.

Added: ``measure="precision"`` or ``"recall"`` reports that measure of the best-F reference
instead of the F-measure; per-row scores are deduplicated and cached. The blind-spot protocol
(``blindspot run --metrics rouge``) judges per-row rougeL WITH the Porter stemmer, the
blind-spots paper's setting: here that is ``use_stemmer=True, use_aggregator=False``.

``rougeLsum`` is summary-level LCS over sentences separated by NEWLINES ("\\n"), as rouge-score
expects: put each sentence on its own line first, otherwise Lsum equals rougeL. Texts are
lower-cased and split on non-alphanumeric characters by rouge-score's tokenizer, so non-Latin
scripts score 0.

Examples:
    >>> import evaluate
    >>> rouge = evaluate.load("metrics/rouge")
    >>> predictions = ["hello there", "general kenobi"]
    >>> references = ["hello there", "general kenobi"]
    >>> rouge.compute(predictions=predictions, references=references)
    {'rouge1': 1.0, 'rouge2': 1.0, 'rougeL': 1.0, 'rougeLsum': 1.0}
    >>> out = rouge.compute(predictions=["The cats sat on the mat."],
    ...                     references=[["The cat sat on the mat.", "A cat was on a mat."]],
    ...                     rouge_types=["rouge2"], use_aggregator=False)
    >>> [round(v, 4) for v in out["rouge2"]]
    [0.6]
    >>> out = rouge.compute(predictions=["The cats sat on the mat."],
    ...                     references=[["The cat sat on the mat.", "A cat was on a mat."]],
    ...                     rouge_types=["rouge2"], use_stemmer=True, use_aggregator=False)
    >>> out["rouge2"]
    [1.0]

    Sentences on separate lines: rougeLsum matches each sentence, rougeL the whole text.

    >>> out = rouge.compute(predictions=["The cat sat.\\nThe dog ran."],
    ...                     references=["The dog ran.\\nThe cat sat."], use_aggregator=False)
    >>> out["rougeL"], out["rougeLsum"]
    ([0.5], [1.0])

    ROUGE-W and ROUGE-SU* (Lin, 2004) on Lin's own example, as ROUGE-1.5.5.pl computes them
    (the default), and by the paper's formulas:

    >>> out = rouge.compute(predictions=["police kill the gunman"],
    ...                     references=["police killed the gunman"],
    ...                     rouge_types=["rougeSU", "rougeW"], use_aggregator=False)
    >>> [round(v, 4) for v in out["rougeSU"]], [round(v, 4) for v in out["rougeW"]]
    ([0.5556], [0.5826])
    >>> out = rouge.compute(predictions=["police kill the gunman"],
    ...                     references=["police killed the gunman"],
    ...                     rouge_types=["rougeSU", "rougeW"], definition="paper",
    ...                     use_aggregator=False)
    >>> out["rougeSU"], [round(v, 4) for v in out["rougeW"]]
    ([0.6], [0.6757])
"""

from collections.abc import Callable, Sequence
from typing import Any

from rouge_score import rouge_scorer

import blindspot.scoring.module as base
from blindspot.scorers.rouge import MEASURES
from blindspot.scorers.rouge_lin import lin_type
from blindspot.scoring.canonical import bootstrap_mid

_CITATION = """\
@inproceedings{lin-2004-rouge,
    title = "{ROUGE}: A Package for Automatic Evaluation of Summaries",
    author = "Lin, Chin-Yew",
    booktitle = "Text Summarization Branches Out",
    year = "2004",
    address = "Barcelona, Spain",
    publisher = "Association for Computational Linguistics",
    pages = "74--81",
}
"""

_INPUTS = """
Args:
    predictions (list of str): hypotheses (sentences separated by "\\n" for rougeLsum).
    references (list of str or list of list of str): one or several references per hypothesis.
    rouge_types (list of str): default ["rouge1", "rouge2", "rougeL", "rougeLsum"]; any
        "rouge<N>", "rougeL", "rougeLsum", and (Lin, 2004; not with a custom tokenizer)
        "rougeW" (weighted LCS), "rougeS<d>" / "rougeSU<d>" (skip bigrams at most d words
        apart, SU with unigrams; no d: any distance, ROUGE-S* / ROUGE-SU*).
    use_stemmer (bool): Porter stemming, default False.
    use_aggregator (bool): True (default): bootstrap mid value over rows; False: per-row lists.
    tokenizer (callable): str -> list of tokens, instead of rouge-score's tokenizer.
    measure (str): "fmeasure" (default), "precision" or "recall".
    definition (str): rougeW/S/SU only: "released" (default), what ROUGE-1.5.5.pl computes (a text
        against itself has ROUGE-W 0.862: the script weights the reference length twice; SU
        leaves out the last token's unigram), or "paper", Lin's formulas.
Returns:
    one key per ROUGE type ("rouge1", "rouge2", "rougeL", "rougeLsum"), each in [0, 1], higher
    is better (a list per row when use_aggregator=False).
"""


class _Tokenizer:
    """A str -> tokens callable as the object with a ``tokenize`` method rouge-score takes."""

    def __init__(self, function: Callable[[str], list[str]]) -> None:
        self.tokenize = function


class Rouge(base.ScorerMetric):
    """ROUGE: evaluate's ``rouge``, per-row scores on the blindspot scoring layer."""

    scorer_name = "rouge"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any],
                 rouge_types: Sequence[str] | None = None, use_aggregator: bool = True,
                 use_stemmer: bool = False, tokenizer: Callable[[str], list[str]] | None = None,
                 measure: str = "fmeasure", definition: str = "released") -> dict[str, Any]:
        types = list(rouge_types or ("rouge1", "rouge2", "rougeL", "rougeLsum"))
        if tokenizer is None:
            rows = self.scorer_rows(predictions, references, rouge_types=types,
                                    use_stemmer=use_stemmer, measure=measure,
                                    definition=definition)
        else:  # a callable has no stable identity to cache scores under: score directly
            rows = _rows_with_tokenizer(predictions, references, types, use_stemmer,
                                        _Tokenizer(tokenizer), measure)
        return bootstrap_mid(rows) if use_aggregator else rows


def _rows_with_tokenizer(predictions: list[str], references: list[Any], types: list[str],
                         use_stemmer: bool, tokenizer: _Tokenizer,
                         measure: str) -> dict[str, list[float]]:
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
    lin = [t for t in types if lin_type(t)]
    if lin:
        raise ValueError(f"rouge_types {lin} are computed on the scorer's own tokens; drop the "
                         "tokenizer argument to use them")
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=use_stemmer, tokenizer=tokenizer)
    scores = [scorer.score_multi([refs] if isinstance(refs, str) else refs, pred)
              for refs, pred in zip(references, predictions, strict=True)]
    return {key: [float(getattr(score[key], measure)) for score in scores] for key in types}
