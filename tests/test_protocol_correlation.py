"""The correlation protocol on SummEval's expert judgments, recomputed independently: ROUGE-L with
rouge-score and chrF with sacrebleu called directly, correlations with pandas and scipy; every
figure must match the protocol's to 1e-9. The real data is cut to its first 25 documents (400
outputs of all 16 systems) to keep the test fast; the code path is the one of the full run."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from conftest import SHARED_DATA
from rouge_score import rouge_scorer
from sacrebleu.metrics import CHRF
from scipy import stats

from blindspot.protocols.correlation import correlations, summary_level, system_level
from blindspot.protocols.interface import ProtocolRequest, get_protocol

#: one xdist group: its module fixtures (the SummEval judgments and scores)
#: are set up once, not once per worker
pytestmark = pytest.mark.xdist_group("protocol_correlation")

JUDGMENTS = SHARED_DATA / "summeval_expert_judgments.jsonl"
REFERENCES = SHARED_DATA / "cnndm_summeval100_summarization.jsonl"
CRITERIA = ["expert_coherence", "expert_consistency", "expert_fluency", "expert_relevance"]
COEFFICIENTS = {"kendall": stats.kendalltau, "pearson": stats.pearsonr,
                "spearman": stats.spearmanr}


def test_definitions_by_hand() -> None:
    # two systems, two documents; per-system metric means A (1+3)/2 = 2 < B (2+5)/2 = 3.5,
    # human means A (0+4)/2 = 2 > B (1+2)/2 = 1.5: the systems are ranked the other way round
    systems, docs = ["A", "B", "A", "B"], ["d1", "d1", "d2", "d2"]
    metric, human = [1.0, 2.0, 3.0, 5.0], [0.0, 1.0, 4.0, 2.0]
    sys = system_level(systems, metric, human)
    assert sys["n"] == 2 and sys["pearson"] == pytest.approx(-1.0) and sys["kendall"] == -1.0
    summ = summary_level(docs, metric, human)  # d1 agrees (+1), d2 disagrees (-1)
    assert summ["kendall"] == pytest.approx(0.0) and summ["n_documents"] == 2
    flat = summary_level(["d"] * 3, [1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert flat["n_undefined"] == 1 and math.isnan(flat["kendall"])
    assert correlations([1, 2, 3], [1, 3, 2])["kendall"] == pytest.approx(1 / 3)


def _independent(frame: pd.DataFrame, column: str) -> dict[str, dict[str, dict[str, float]]]:
    """System and summary level correlations with pandas groupby and scipy, nothing else."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    means = frame.groupby("system")[[column, *CRITERIA]].mean()
    for criterion in CRITERIA:
        system = {n: float(f(means[column], means[criterion])[0]) for n, f in COEFFICIENTS.items()}
        per_doc = {n: [] for n in COEFFICIENTS}
        for _, doc in frame.groupby("id"):
            if doc[column].nunique() < 2 or doc[criterion].nunique() < 2:
                continue
            for n, f in COEFFICIENTS.items():
                per_doc[n].append(float(f(doc[column], doc[criterion])[0]))
        summary = {n: sum(v) / len(v) for n, v in per_doc.items()}
        out[criterion] = {"system": system, "summary": summary}
    return out


DOCUMENTS = 25


@pytest.fixture(scope="module")
def judgments(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The judgments of the first 25 documents (all their systems), as a jsonl file."""
    rows = [json.loads(line) for line in JUDGMENTS.read_text().splitlines()]
    keep = list(dict.fromkeys(r["id"] for r in rows))[:DOCUMENTS]
    path = tmp_path_factory.mktemp("summeval") / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["id"] in keep))
    return str(path)


@pytest.fixture(scope="module")
def summeval(judgments: str) -> pd.DataFrame:
    frame = pd.read_json(judgments, lines=True)
    refs = pd.read_json(REFERENCES, lines=True)
    refs["all_refs"] = [[g, *r] for g, r in zip(refs["gold"], refs["references"], strict=True)]
    frame = frame.merge(refs[["id", "all_refs"]], on="id", how="left", validate="many_to_one")
    assert len(frame) == 16 * DOCUMENTS and frame["all_refs"].notna().all()
    rouge = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    frame["rougeL"] = [rouge.score_multi(r, s)["rougeL"].fmeasure
                       for s, r in zip(frame["summary"], frame["all_refs"], strict=True)]
    chrf = CHRF()
    frame["chrf"] = [chrf.sentence_score(s, r).score
                     for s, r in zip(frame["summary"], frame["all_refs"], strict=True)]
    return frame


def test_summeval_correlations_match_an_independent_recomputation(summeval, judgments,
                                                                  tmp_path) -> None:
    request = ProtocolRequest(data=judgments, metrics="rouge,chrf", progress=False,
                              out=tmp_path, options={"references": str(REFERENCES)})
    results = get_protocol("correlation").run(request).to_dict()
    assert results["protocol"] == "correlation" and results["config"]["criteria"] == CRITERIA
    assert (results["dataset"]["documents"], results["dataset"]["systems"]) == (DOCUMENTS, 16)
    for name, column in (("rouge.rougeL", "rougeL"), ("chrf.chrf", "chrf")):
        expected = _independent(summeval, column)
        got = results["metrics"][name]["criteria"]
        for criterion in CRITERIA:
            for level in ("system", "summary"):
                for coefficient in COEFFICIENTS:
                    assert got[criterion][level][coefficient] == pytest.approx(
                        expected[criterion][level][coefficient], abs=1e-9), \
                        (name, criterion, level, coefficient)
    matrix = results["criteria_correlations"]
    for a in CRITERIA:
        assert matrix[a][a]["kendall"] == pytest.approx(1.0)
        for b in CRITERIA:
            direct = stats.kendalltau(summeval[a], summeval[b])[0]
            assert matrix[a][b]["kendall"] == pytest.approx(direct, abs=1e-9)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved == json.loads(json.dumps(results))
    assert "| rouge.rougeL | expert_relevance |" in (tmp_path / "report.md").read_text()


def test_missing_references_are_named(judgments, tmp_path) -> None:
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"id": "other", "gold": "x", "references": ["y"]}) + "\n")
    request = ProtocolRequest(data=judgments, metrics="rouge", progress=False,
                              options={"references": str(refs)})
    with pytest.raises(ValueError, match="25 document id.* have no references"):
        get_protocol("correlation").run(request)
    bad = ProtocolRequest(data=judgments, metrics="rouge", progress=False,
                          options={"references": str(REFERENCES), "criteria": "expert_joy"})
    with pytest.raises(ValueError, match="criterion column 'expert_joy' not found"):
        get_protocol("correlation").run(bad)
    with pytest.raises(ValueError, match=r"correlation protocol judges one dataset at a time; "
                                         r"got 2 \(--data once\)"):
        get_protocol("correlation").run(ProtocolRequest(data=[judgments, judgments],
                                                        metrics="rouge", progress=False))
