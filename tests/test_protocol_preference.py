"""The MENLI preference protocol: hand-computed figures, the set loader, the run (CLI, registry,
report), the evaluate modules, and an independent recomputation on the shipped WMT20_de set."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import datasets
import evaluate
import pytest
from conftest import SHARED_DATA
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.protocols.interface import get_protocol
from blindspot.protocols.preference import (
    ADEQUACY_TYPES,
    ERROR_TYPES,
    FLUENCY_TYPES,
    accuracy_by_type,
    combine,
    combine_pairs,
    get_mode,
    hits,
    kendall_like,
    minmax,
    outcome,
    preference_accuracy,
    summarise,
    tally,
)
from blindspot.protocols.preference_data import check_columns, load_preference_set
from blindspot.protocols.preference_run import anchor_inputs, parse_options, run_preference

MENLI_SET = SHARED_DATA / "menli_wmt20_de_adversarial.csv"
ROOT = Path(__file__).resolve().parents[1]


def _csv_rows() -> list[dict[str, str]]:
    with open(MENLI_SET, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def slice_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first two rows of every error type of the shipped set (24 rows), as a CSV."""
    rows, seen = [], {}
    for row in _csv_rows():
        if seen.get(row["error"], 0) < 2:
            seen[row["error"]] = seen.get(row["error"], 0) + 1
            rows.append(row)
    path = tmp_path_factory.mktemp("menli") / "slice.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


# -- the figures, by hand -------------------------------------------------------------------------

def test_outcomes_are_strict_and_ties_fail() -> None:
    assert [outcome(p, a) for p, a in [(0.6, 0.5), (0.5, 0.5), (0.4, 0.5), (math.nan, 0.1),
                                       (None, 0.1)]] == ["hit", "tie", "miss", "nan", "nan"]
    assert hits([0.6, 0.5, 0.4, math.nan], [0.5, 0.5, 0.5, 0.0]) == [True, False, False, False]


def test_tally_and_kendall_like_exclude_ties() -> None:
    # 3 hits, 1 miss, 2 ties, 1 NaN: accuracy 3/7, Kendall-like (3 - 1) / (3 + 1)
    para = [2, 2, 2, 0, 1, 1, math.nan]
    adv = [1, 1, 1, 1, 1, 1, 0]
    assert tally(para, adv) == {"n": 7, "hits": 3, "misses": 1, "ties": 2, "n_nan": 1,
                                "accuracy": 3 / 7, "kendall_like": 0.5}
    assert kendall_like(0, 0) is None and kendall_like(1, 3) == -0.5
    assert tally([1, 1], [1, 1])["kendall_like"] is None


def test_accuracy_by_type_mean_adequacy_fluency() -> None:
    # neg: 1 of 2, num: 2 of 2, typo: 0 of 1 (a tie), jumble: 1 of 1
    para = [1, 0, 3, 3, 5, 2]
    adv = [0, 1, 1, 2, 5, 1]
    types = ["neg", "neg", "num", "num", "typo", "jumble"]
    out = preference_accuracy(para, adv, types)
    assert list(out["per_type"]) == ["neg", "num", "typo", "jumble"]  # MENLI's order
    assert {t: e["accuracy"] for t, e in out["per_type"].items()} == {
        "neg": 0.5, "num": 1.0, "typo": 0.0, "jumble": 1.0}
    assert out["mean"] == pytest.approx(2.5 / 4)  # unweighted over types, not over pairs
    assert out["adequacy"] == pytest.approx(0.75) and out["fluency"] == pytest.approx(0.5)
    assert (out["hits"], out["misses"], out["ties"], out["n"]) == (4, 1, 1, 6)
    assert out["kendall_like"] == pytest.approx(3 / 5)
    assert summarise({})["mean"] is None
    only = accuracy_by_type(para, adv, types, include=["typo"])
    assert list(only) == ["typo"]


def test_error_type_groups() -> None:
    assert len(ADEQUACY_TYPES) == 9 and FLUENCY_TYPES == ("typo", "jumble", "subject_verb_dis")
    assert len(set(ERROR_TYPES)) == 12


def test_minmax_and_combination_by_hand() -> None:
    assert minmax([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]
    assert minmax([7.0, 7.0]) == [0.0, 0.0]
    assert math.isnan(minmax([1.0, math.nan, 3.0])[1])
    # N = [0, 10] -> [0, 1]; M = [1, 3] -> [0, 1]; w = 0.25
    assert combine([0.0, 10.0], [3.0, 1.0], 0.25) == [0.75, 0.25]
    # pooled over para and adv: N para [0], adv [10]; M para [3], adv [1]
    assert combine_pairs([0.0], [10.0], [3.0], [1.0], 0.25) == ([0.75], [0.25])
    # the pooling matters: M min-max'd over para and adv together ([1, 2, 3, 5] -> /4)
    para, adv = combine_pairs([1.0, 1.0], [1.0, 1.0], [2.0, 5.0], [1.0, 3.0], 0.5)
    assert para == [0.125, 0.5] and adv == [0.0, 0.25]


def test_bad_inputs_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown error type.*'nope'"):
        preference_accuracy([1], [0], ["nope"])
    with pytest.raises(ValueError, match="unknown error type.*'negation'"):
        accuracy_by_type([1], [0], ["neg"], include=["negation"])
    with pytest.raises(ValueError, match="2 paraphrase scores but 1 adversarial"):
        tally([1, 2], [0])
    with pytest.raises(ValueError, match="error_types must have one item per pair"):
        accuracy_by_type([1, 2], [0, 0], ["neg"])
    with pytest.raises(ValueError, match=r"weight must be in \[0, 1\]"):
        combine([1.0], [1.0], 1.5)
    with pytest.raises(ValueError, match="unknown preference mode 'ref-less'.*ref-based"):
        get_mode("ref-less")


# -- options ---------------------------------------------------------------------------------------

def test_options_are_checked() -> None:
    settings = parse_options({"mode": "ref_free", "error_types": "neg,typo"})
    assert settings["mode"].name == "ref-free" and settings["error_types"] == ["neg", "typo"]
    with pytest.raises(ValueError, match="'colour' is not an option of the preference"):
        parse_options({"colour": "red"})
    with pytest.raises(ValueError, match="mode='both' is not accepted by the preference "
                                         "protocol: mode must be one of ref-based, ref-free"):
        parse_options({"mode": "both"})
    with pytest.raises(ValueError, match="error_types='negation' .* must be comma-separated "
                                         "names from add, drop, name, neg"):
        parse_options({"error_types": "negation"})
    with pytest.raises(ValueError, match="weight needs combine_with"):
        parse_options({"weight": 0.3})
    with pytest.raises(ValueError, match="fixed must be true or false"):
        parse_options({"fixed": "maybe"})
    with pytest.raises(ValueError, match="ref-free mode does not read"):
        parse_options({"mode": "ref-free", "fixed": True})


# -- the loader ------------------------------------------------------------------------------------

def test_shipped_set_loads_with_original_or_fixed_columns() -> None:
    plain = load_preference_set(MENLI_SET)
    fixed = load_preference_set(MENLI_SET, fixed=True)
    rows = _csv_rows()
    assert plain.num_rows == fixed.num_rows == 2400
    assert plain["hyp_para"] == [r["hyp_para"] for r in rows]
    assert fixed["hyp_para"] == [r["hyp_para_fixed"] for r in rows]
    assert fixed["hyp_adv_based"] == [r["hyp_adv_based_fixed"] for r in rows]
    assert "hyp_para_fixed" not in fixed.column_names
    assert sum(a != b for a, b in zip(plain["hyp_adv_based"], fixed["hyp_adv_based"], strict=True)) > 0
    for mode in ("ref-based", "ref-free"):
        check_columns(plain, get_mode(mode))


def test_loader_errors_and_csv_text_kept(tmp_path: Path) -> None:
    path = tmp_path / "set.csv"
    path.write_text("error,ref,hyp_para,hyp_adv_based\nneg,NA,null,\n", encoding="utf-8")
    loaded = load_preference_set(path)
    assert (loaded["ref"], loaded["hyp_para"], loaded["hyp_adv_based"]) == (["NA"], ["null"],
                                                                           [""])
    with pytest.raises(ValueError, match=r"missing: \['source', 'hyp_adv_free'\]"):
        check_columns(loaded, get_mode("ref-free"))
    with pytest.raises(ValueError, match="fixed=True needs the columns"):
        load_preference_set(path, fixed=True)
    bad = datasets.Dataset.from_dict({"error": ["negation"], "ref": ["a"], "hyp_para": ["b"],
                                      "hyp_adv_based": ["c"]})
    with pytest.raises(ValueError, match="unknown error type.*'negation'"):
        check_columns(bad, get_mode("ref-based"))
    with pytest.raises(ValueError, match="row 0, column 'ref': expected text"):
        check_columns(load_preference_set({"error": ["neg"], "ref": [None], "hyp_para": ["b"],
                                           "hyp_adv_based": ["c"]}), get_mode("ref-based"))


# -- anchor routing --------------------------------------------------------------------------------

class _Uses:
    def __init__(self, references: str, source: str) -> None:
        self.name, self.uses_references, self.uses_source = "x", references, source


def test_anchor_reaches_the_metric_as_the_mode_says() -> None:
    data = datasets.Dataset.from_dict({"error": ["neg"], "source": ["S"], "ref": ["R"],
                                       "hyp_para": ["P"], "hyp_adv_based": ["A"],
                                       "hyp_adv_free": ["F"]})
    based, free = get_mode("ref-based"), get_mode("ref-free")
    assert anchor_inputs(_Uses("required", "none"), based, data) == {"references": ["R"],
                                                                     "sources": None}
    assert anchor_inputs(_Uses("required", "required"), based, data) == {"references": ["R"],
                                                                         "sources": ["S"]}
    assert anchor_inputs(_Uses("required", "none"), free, data) == {"references": ["S"],
                                                                    "sources": None}
    assert anchor_inputs(_Uses("none", "required"), free, data) == {"references": None,
                                                                    "sources": ["S"]}
    with pytest.raises(ValueError, match="needs a reference as well as the source"):
        anchor_inputs(_Uses("required", "required"), free, data)


# -- the independent check on the whole shipped set ------------------------------------------------

def _independent_accuracies(score, anchor: str, good: str, bad: str) -> dict[str, float]:
    by_type: dict[str, list[bool]] = {}
    for row in _csv_rows():
        hit = score(row[good], row[anchor]) > score(row[bad], row[anchor])
        by_type.setdefault(row["error"], []).append(hit)
    return {t: sum(v) / len(v) for t, v in by_type.items()}


def _independent_metrics() -> dict[str, object]:
    import sacrebleu
    from rouge_score import rouge_scorer

    rouge = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return {"bleu.bleu": lambda hyp, ref: sacrebleu.sentence_bleu(hyp, [ref]).score,
            "chrf.chrf": lambda hyp, ref: sacrebleu.sentence_chrf(hyp, [ref]).score,
            "rouge.rougeL": lambda hyp, ref: rouge.score(ref, hyp)["rougeL"].fmeasure}


def test_wmt20_de_accuracies_match_sacrebleu_and_rouge_score() -> None:
    """Sentence BLEU, chrF (sacrebleu defaults) and ROUGE-L F (rouge-score, Porter stemmer), all
    2400 rows, ref-based, original columns: our protocol agrees with a direct computation."""
    results = run_preference(str(MENLI_SET), "bleu,chrf,rouge", progress=False)
    metrics = results["datasets"]["menli_wmt20_de_adversarial.csv"]["metrics"]
    for name, score in _independent_metrics().items():
        expected = _independent_accuracies(score, "ref", "hyp_para", "hyp_adv_based")
        got = {t: e["accuracy"] for t, e in metrics[name]["per_type"].items()}
        assert set(got) == set(ERROR_TYPES) and all(e["n"] == 200 for e in
                                                    metrics[name]["per_type"].values())
        for error_type in ERROR_TYPES:
            assert got[error_type] == pytest.approx(expected[error_type], abs=1e-9), name
        assert metrics[name]["mean"] == pytest.approx(sum(expected.values()) / 12, abs=1e-9)
    assert metrics["rouge.rougeL"]["scorer_config"]["use_stemmer"] is True


def test_ref_free_bleu_compares_with_the_source(slice_csv: Path) -> None:
    import sacrebleu

    results = run_preference(str(slice_csv), "bleu", mode="ref-free", progress=False)
    entry = results["datasets"]["slice.csv"]["metrics"]["bleu.bleu"]
    with open(slice_csv, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    expected = sum(sacrebleu.sentence_bleu(r["ref"], [r["source"]]).score
                   > sacrebleu.sentence_bleu(r["hyp_adv_free"], [r["source"]]).score
                   for r in rows)
    assert entry["hits"] == expected and entry["n"] == 24
    assert results["config"]["preference"] == "m(source, ref) > m(source, hyp_adv_free)"


def test_combination_in_a_run_is_the_minmax_mix(slice_csv: Path) -> None:
    results = run_preference(str(slice_csv), "bleu", combine_with="chrf", weight=0.3,
                             error_types=["neg", "typo"], progress=False)
    data = results["datasets"]["slice.csv"]
    assert (data["rows"], data["judged"], data["error_types"]) == (24, 4, {"neg": 2, "typo": 2})
    assert list(data["metrics"]) == ["chrf.chrf", "bleu.bleu", "0.3*chrf.chrf+0.7*bleu.bleu"]
    import sacrebleu

    rows = [r for r in csv.DictReader(open(slice_csv, encoding="utf-8", newline=""))
            if r["error"] in ("neg", "typo")]
    n_para = [sacrebleu.sentence_chrf(r["hyp_para"], [r["ref"]]).score for r in rows]
    n_adv = [sacrebleu.sentence_chrf(r["hyp_adv_based"], [r["ref"]]).score for r in rows]
    m_para = [sacrebleu.sentence_bleu(r["hyp_para"], [r["ref"]]).score for r in rows]
    m_adv = [sacrebleu.sentence_bleu(r["hyp_adv_based"], [r["ref"]]).score for r in rows]
    para, adv = combine_pairs(n_para, n_adv, m_para, m_adv, 0.3)
    expected = preference_accuracy(para, adv, [r["error"] for r in rows])
    combined = data["metrics"]["0.3*chrf.chrf+0.7*bleu.bleu"]
    assert combined["per_type"] == expected["per_type"]
    assert combined["combination"] == {"other": "chrf.chrf", "metric": "bleu.bleu",
                                       "weight": 0.3}


# -- registry, CLI and report ----------------------------------------------------------------------

def test_cli_run_writes_a_reproducible_report(slice_csv: Path, tmp_path: Path) -> None:
    assert get_protocol("preference").name == "preference"
    args = ["run", "--protocol", "preference", "--data", str(slice_csv), "--metrics",
            "bleu,chrf,rouge,ter", "--protocol-option", "mode=ref-based"]
    first = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert first.exit_code == 0, first.output
    assert "preference accuracy" in first.output and "Kendall-like" in first.output
    second = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b")])
    assert second.exit_code == 0, second.output
    a, b = tmp_path / "a", tmp_path / "b"
    results = json.loads((a / "results.json").read_text(encoding="utf-8"))
    assert results["protocol"] == "preference"
    data = results["datasets"]["slice.csv"]
    assert data["error_types"] == {t: 2 for t in ERROR_TYPES}
    assert data["metrics"]["ter.ter"]["higher_is_better"] is False
    markdown = (a / "report.md").read_text(encoding="utf-8")
    rouge = data["metrics"]["rouge.rougeL"]
    assert "| typo (fluency) |" in markdown
    assert f"{rouge['per_type']['typo']['accuracy']:.3f}" in markdown.split("| typo (fluency) |")[1]
    assert "fluency (mean of 3 types)" in markdown and (a / "report.html").is_file()
    pngs = sorted(p.relative_to(a) for p in (a / "plots").glob("*.png"))
    assert len(pngs) == 1
    for name in ["results.json", "report.md", "report.html", *map(str, pngs)]:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_cli_errors_are_clear(slice_csv: Path, tmp_path: Path) -> None:
    bad = CliRunner().invoke(app, ["run", "--protocol", "preference", "--data", str(slice_csv),
                                   "--metrics", "bleu", "--protocol-option", "mode=sideways",
                                   "--out", str(tmp_path / "x")])
    assert bad.exit_code != 0 and "mode='sideways' is not accepted by the preference protocol" \
        in " ".join(bad.output.split())
    missing = tmp_path / "m.csv"
    missing.write_text("error,ref,hyp_para\nneg,a,b\n", encoding="utf-8")
    bad = CliRunner().invoke(app, ["run", "--protocol", "preference", "--data", str(missing),
                                   "--metrics", "bleu", "--out", str(tmp_path / "y")])
    assert bad.exit_code != 0 and "missing: ['hyp_adv_based']" in bad.output


# -- evaluate modules ------------------------------------------------------------------------------

def test_preference_accuracy_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    judge = evaluate.load("metrics/preference_accuracy")
    out = judge.compute(para_scores=[1.0, 1.0, 0.0, 2.0], adv_scores=[0.0, 1.0, 1.0, 1.0],
                        error_types=["name", "name", "jumble", "jumble"])
    assert out["accuracy"] == {"name": 0.5, "jumble": 0.5}
    assert (out["hits"], out["ties"], out["misses"]) == (2, 1, 1)
    assert out["kendall_like"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="unknown error type"):
        judge.compute(para_scores=[1.0], adv_scores=[0.0], error_types=["spelling"])
    with pytest.raises(ValueError, match="give both other_para_scores and other_adv_scores"):
        judge.compute(para_scores=[1.0], adv_scores=[0.0], error_types=["neg"],
                      other_para_scores=[1.0])


def test_blindspot_module_runs_the_preference_protocol(slice_csv: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    module = evaluate.load("metrics/blindspot")
    out = module.compute(data=str(slice_csv), metric="chrf", protocol="preference",
                         protocol_options={"mode": "ref-based"}, progress=False)
    direct = run_preference(str(slice_csv), "chrf", progress=False)
    entry = direct["datasets"]["slice.csv"]["metrics"]["chrf.chrf"]
    assert out["metric"] == "chrf.chrf" and out["mode"] == "ref-based"
    assert out["accuracy"] == {t: e["accuracy"] for t, e in entry["per_type"].items()}
    assert out["mean"] == entry["mean"] and out["results"]["protocol"] == "preference"
    with pytest.raises(ValueError, match="give either data="):
        module.compute(data=str(slice_csv), predictions=["a"], metric="chrf",
                       protocol="preference")



def test_a_failing_metric_is_reported_and_the_others_run(slice_csv: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import blindspot.protocols.preference_run as run

    real = run.scorer_for

    def broken_chrf(spec, idf):
        if spec.metric == "chrf":
            raise RuntimeError("weights missing")
        return real(spec, idf)

    monkeypatch.setattr(run, "scorer_for", broken_chrf)
    results = run_preference(str(slice_csv), "chrf,bleu", examples=2, progress=False)
    metrics = results["datasets"]["slice.csv"]["metrics"]
    assert metrics["chrf.chrf"]["error"] == "RuntimeError: weights missing"
    assert metrics["chrf.chrf"]["mean"] is None and metrics["chrf.chrf"]["per_type"] == {}
    bleu = metrics["bleu.bleu"]
    assert bleu["error"] is None and bleu["n"] == 24
    # the kept examples are failed pairs, the attack's largest win first, at most 2 per type
    for error_type, examples in bleu["examples"].items():
        failed = bleu["per_type"][error_type]["misses"] + bleu["per_type"][error_type]["ties"]
        assert len(examples) == min(2, failed)
        margins = [e["adv_score"] - e["para_score"] for e in examples]
        assert all(m >= 0 for m in margins) and margins == sorted(margins, reverse=True)
    with pytest.raises(ValueError, match="examples must be a whole number"):
        run_preference(str(slice_csv), "bleu", examples=-1, progress=False)


def test_fixed_run_reads_the_fixed_columns(slice_csv: Path) -> None:
    import sacrebleu

    results = run_preference(str(slice_csv), "chrf", fixed=True, progress=False)
    assert results["config"]["columns"] == {"anchor": "ref", "paraphrase": "hyp_para_fixed",
                                            "adversarial": "hyp_adv_based_fixed"}
    rows = list(csv.DictReader(open(slice_csv, encoding="utf-8", newline="")))
    expected = sum(sacrebleu.sentence_chrf(r["hyp_para_fixed"], [r["ref"]]).score
                   > sacrebleu.sentence_chrf(r["hyp_adv_based_fixed"], [r["ref"]]).score
                   for r in rows)
    assert results["datasets"]["slice.csv"]["metrics"]["chrf.chrf"]["hits"] == expected
