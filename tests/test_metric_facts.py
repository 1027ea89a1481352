"""Metric facts are declared on each registered scorer (issue 17): direction, natural range,
lexical or model-based, default output, the option that selects outputs, idf, the search panel,
the options it takes, and one format of model revision (the weights' part of every cache key).
Every scorer's facts must be consistent, and what the runner, the deviation protocol, the Space's
stress tab and the search derive from them must equal what their side tables said before."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from blindspot.models import folder_revision, model_revision, resolve_model
from blindspot.protocols.deviation import natural_range
from blindspot.runner.metric_spec import lower_is_better, parse_metric_spec
from blindspot.runner.scorers import _idf_on
from blindspot.scoring.facts import lexical_metrics, registered_metrics, scorer_facts
from blindspot.scoring.scorer import get_scorer
from blindspot.search.panel import DEFAULT_PANEL
from blindspot.space.tabs.stress import metric_choices

# The side tables these facts replaced, as they stood on main before (runner/metric_spec.py,
# protocols/deviation.py, space/tabs/stress.py, search/panel.py).
OLD_DEFAULT_OUTPUTS = {"rouge": "rougeL", "bertscore": "f1", "bartscore": "f", "unieval": "overall",
                       "mauve": "mauve"}
OLD_OUTPUT_SELECTORS = {"rouge": "rouge_types"}
OLD_LOWER_IS_BETTER = {("ter", "ter")}
# metrics added since (issue 33), declared the same way
OLD_LOWER_IS_BETTER |= {("wmd", "wmd"), ("baryscore", "baryscore"), ("discoscore", "discoscore")}
OLD_NATURAL_RANGES = {("rouge", None): (0.0, 1.0), ("bleu", "bleu"): (0.0, 100.0),
                      ("chrf", "chrf"): (0.0, 100.0)}
OLD_NATURAL_RANGES |= {("embedding_average", None): (-1.0, 1.0), ("vector_extrema", None): (-1.0, 1.0),
                       ("greedy_matching", None): (-1.0, 1.0), ("wmd", "wms"): (0.0, 1.0),
                       ("sms", None): (0.0, 1.0), ("mark_evaluate", None): (0.0, 1.0)}
OLD_LEXICAL = ("rouge", "chrf", "bleu", "ter", "rep_ngram", "ngram_entropy")
# issue 33 (metlex): the lexical metrics the papers examine, with their declared facts
OLD_LEXICAL += ("meteor", "google_bleu", "nist_mt", "bleu_n", "cider", "parent", "qbleu")
OLD_DEFAULT_OUTPUTS |= {"bleu_n": "bleu4"}
OLD_NATURAL_RANGES |= {("meteor", "meteor"): (0.0, 1.0), ("google_bleu", "google_bleu"): (0.0, 1.0),
                       ("bleu_n", None): (0.0, 100.0), ("parent", None): (0.0, 1.0),
                       ("qbleu", None): (0.0, 1.0)}
OLD_PANEL = ("chrf", "bleu", "rouge", "bertscore.f1@minilm")


@pytest.mark.parametrize("metric", registered_metrics())
def test_declared_facts_are_consistent(metric: str) -> None:
    cls = scorer_facts(metric)
    assert cls.name == metric
    assert cls.kind in ("lexical", "model")
    assert cls.outputs and len(set(cls.outputs)) == len(cls.outputs)
    assert cls.judged_output() in cls.outputs
    assert cls.lower_is_better <= set(cls.outputs)
    for output, (low, high) in cls.natural_ranges.items():
        assert output is None or output in cls.outputs
        assert low < high
    options = cls.option_names()
    assert options, "every registered scorer lists its options (from its signature)"
    with pytest.raises(ValueError, match=f"metric '{metric}' has no option 'colour'; its "
                                         f"options are {', '.join(options)} "):
        get_scorer(metric, colour=1)
    if cls.output_selector is not None:
        assert cls.output_selector in options
    if cls.supports_idf:
        assert {"idf", "idf_references"} <= set(options)
    if cls.kind == "model":
        assert cls.model_option is not None  # a model-based metric lets a spec name its model
    if cls.search_panel is not None:
        assert parse_metric_spec(cls.search_panel[1]).metric == metric


def test_unknown_metric_is_named() -> None:
    with pytest.raises(ValueError, match=r"unknown metric 'rogue'.*did you mean 'rouge'"):
        scorer_facts("rogue")


def test_lexical_scorers_load_no_model() -> None:
    """Every lexical scorer scores a row with its default options without importing torch or
    transformers (a fresh interpreter: other tests may have imported them)."""
    script = (
        "import json, sys\n"
        "from blindspot.scoring.scorer import ScoreInput, get_scorer\n"
        "from blindspot.scoring.facts import lexical_metrics\n"
        "row = ScoreInput('the cat sat on the mat', ('the cat sat on a mat',))\n"
        "scores = {m: get_scorer(m).score_batch([row])[0] for m in lexical_metrics()}\n"
        "print(json.dumps({'scores': scores, 'heavy': sorted(\n"
        "    m for m in ('torch', 'transformers') if m in sys.modules)}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["heavy"] == []
    assert sorted(result["scores"]) == sorted(lexical_metrics())
    assert result["scores"]["ter"]["ter"] == pytest.approx(100 / 6)  # one substitution in six


def test_derived_values_equal_the_old_tables() -> None:
    for metric in registered_metrics():
        cls = scorer_facts(metric)
        assert cls.judged_output() == OLD_DEFAULT_OUTPUTS.get(metric, cls.outputs[0])
        assert cls.output_selector == OLD_OUTPUT_SELECTORS.get(metric)
        for output in cls.outputs:
            assert lower_is_better(metric, output) == ((metric, output) in OLD_LOWER_IS_BETTER)
            old = (OLD_NATURAL_RANGES.get((metric, output))
                   or OLD_NATURAL_RANGES.get((metric, None)))
            assert natural_range(metric, output) == old
    assert natural_range("rouge", "rouge3") == (0.0, 1.0)  # any ROUGE type the options ask for
    assert lower_is_better("ter") and not lower_is_better("chrf")
    assert parse_metric_spec("ter").higher_is_better is False
    assert parse_metric_spec("rouge").options == {"rouge_types": ["rougeL"]}
    assert set(lexical_metrics()) == set(OLD_LEXICAL)
    assert metric_choices()[:len(OLD_LEXICAL)] == lexical_metrics()
    assert DEFAULT_PANEL == OLD_PANEL


def test_idf_follows_the_declared_default() -> None:
    """MoverScore weights by idf unless told not to, BERTScore only when told; a metric without
    idf never asks for a corpus."""
    assert _idf_on("moverscore", {}) and not _idf_on("moverscore", {"idf": False})
    assert not _idf_on("bertscore", {}) and _idf_on("bertscore", {"idf": True})
    assert not _idf_on("bertscore", {"idf": True, "idf_references": ["a"]})
    assert not _idf_on("chrf", {"idf": True})


def test_one_revision_format_for_every_model_scorer(tmp_path: Path) -> None:
    """The same weights get the same revision whichever scorer uses them (BERTScore adds its
    library's version); a COMET-style checkpoint file is keyed by its path, size and run
    settings, as before (its cached scores stay valid); an uncached Hub id is its own identity."""
    encoder = model_revision("minilm")
    assert encoder == folder_revision(resolve_model("minilm"))
    assert get_scorer("bertscore", model_type="minilm").model_revision().split(";")[0] == encoder
    assert get_scorer("mlm_ppl", model="minilm").model_revision() == encoder
    assert get_scorer("rep_ngram", tokenizer="minilm").model_revision() == encoder
    assert get_scorer("rep_ngram").model_revision() == ""  # whitespace words: no model
    checkpoint = tmp_path / "run" / "checkpoints" / "model.ckpt"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(b"weights")
    (tmp_path / "run" / "hparams.yaml").write_text("layer: mix\n")
    digest = hashlib.sha256(f"{checkpoint.resolve()}:7".encode())
    digest.update(b"layer: mix\n")
    assert model_revision(str(checkpoint)) == digest.hexdigest()[:16]
    (tmp_path / "run" / "hparams.yaml").write_text("layer: 12\n")
    assert model_revision(str(checkpoint)) != digest.hexdigest()[:16]
    assert model_revision("no-such-org/no-such-model") == "no-such-org/no-such-model"
