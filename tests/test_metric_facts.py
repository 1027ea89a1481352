"""Metric facts are declared on each registered scorer (issue 17): direction, natural range,
lexical or model-based, default output, the option that selects outputs, idf, the search panel,
the options it takes, and one format of model revision (the weights' part of every cache key).
Every scorer's facts must be consistent, what the runner, the deviation protocol, the Space's
stress tab and the search derive from them must follow them, and every lexical metric's
declared direction and scales must hold on real scores. No list of metrics is kept here: every
check reads the registry, so a new scorer (or a plugin's) is checked without an edit."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from blindspot.models import available_models, folder_revision, model_revision, resolve_model
from blindspot.protocols.deviation import natural_range
from blindspot.runner.metric_spec import lower_is_better, parse_metric_spec
from blindspot.runner.scorers import _idf_on
from blindspot.scoring.facts import (
    default_panel,
    lexical_metrics,
    registered_metrics,
    scorer_facts,
)
from blindspot.scoring.scorer import SCORERS, get_scorer
from blindspot.search.panel import DEFAULT_PANEL
from blindspot.space.tabs.stress import metric_choices


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
    assert options is not None, "every registered scorer names its options (from its signature)"
    with pytest.raises(ValueError, match=f"metric '{metric}' has no option 'colour'; its "
                                         f"options are {', '.join(options) or 'none'} "):
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


def test_lexical_scorers_load_no_model_and_keep_their_declared_direction_and_scale() -> None:
    """Every lexical scorer scores rows with its default options without importing torch or
    transformers (a fresh interpreter: other tests may have imported them). A text equal to its
    reference (and source) beats a repetitive copy of its first words on the judged output, in
    the direction the scorer declares, and every output lies in its declared natural range: a
    flipped ``lower_is_better`` or a wrong scale fails here, whichever metric declares it."""
    script = (
        "import json, sys\n"
        "from blindspot.scoring.scorer import ScoreInput, get_scorer\n"
        "from blindspot.scoring.facts import lexical_metrics\n"
        "ref = 'the council approved the new budget for the city schools on monday'\n"
        "rep = 'the council the council the council the council the council'\n"
        "rows = [ScoreInput(ref, (ref,), ref), ScoreInput(rep, (ref,), ref),\n"
        "        ScoreInput('the cat sat on the mat', ('the cat sat on a mat',))]\n"
        "scores = {m: get_scorer(m).score_batch(rows) for m in lexical_metrics()}\n"
        "print(json.dumps({'scores': scores, 'heavy': sorted(\n"
        "    m for m in ('torch', 'transformers') if m in sys.modules)}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["heavy"] == []
    assert sorted(result["scores"]) == sorted(lexical_metrics())
    for metric, (same, repeated, _) in result["scores"].items():
        cls = scorer_facts(metric)
        judged = cls.judged_output()
        better, worse = (same, repeated) if cls.higher_is_better(judged) else (repeated, same)
        assert better[judged] > worse[judged], (metric, judged, same, repeated)
        for row in (same, repeated):
            assert set(row) == set(cls.outputs), metric
            for output, value in row.items():
                scale = cls.natural_range(output)
                if scale is not None:  # to float rounding (sacrebleu's 100.00000000000004)
                    slack = 1e-9 * (scale[1] - scale[0])
                    assert scale[0] - slack <= value <= scale[1] + slack, (metric, output, value)
    assert result["scores"]["ter"][2]["ter"] == pytest.approx(100 / 6)  # one substitution in six


def test_derived_values_follow_the_declarations() -> None:
    """What the runner, the deviation protocol, the Space and the search read is what each
    registered scorer declares."""
    for metric in registered_metrics():
        cls = scorer_facts(metric)
        for output in cls.outputs:
            assert lower_is_better(metric, output) is not cls.higher_is_better(output)
            assert natural_range(metric, output) == cls.natural_range(output)
    for metric in lexical_metrics():  # a model metric's spec resolves its default model
        cls = scorer_facts(metric)
        spec = parse_metric_spec(metric)
        assert spec.output == cls.judged_output()
        assert spec.higher_is_better is cls.higher_is_better(cls.judged_output())
        if cls.output_selector is not None:  # a spec computes only the output it judges
            assert spec.options == {cls.output_selector: [cls.judged_output()]}
    assert natural_range("rouge", "rouge3") == (0.0, 1.0)  # any ROUGE type the options ask for
    assert not lower_is_better("no-such-metric") and natural_range("no-such-metric", "x") is None
    assert lexical_metrics() == [name for name, cls in SCORERS.items() if cls.kind == "lexical"]
    assert metric_choices()[:len(lexical_metrics())] == lexical_metrics()  # any machine runs them


def test_the_default_search_panel_is_declared_and_runs_offline() -> None:
    assert DEFAULT_PANEL == default_panel() and DEFAULT_PANEL
    places = [cls.search_panel[0] for cls in SCORERS.values() if cls.search_panel]
    assert len(places) == len(set(places)) == len(DEFAULT_PANEL)
    for spec in DEFAULT_PANEL:
        parsed = parse_metric_spec(spec)
        cls = scorer_facts(parsed.metric)
        assert cls.kind == "lexical" or parsed.options[cls.model_option] in available_models()


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
