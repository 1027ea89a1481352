"""The lexical metric modules (BLEU, chrF, TER, ROUGE, rep-n, n-gram entropy): parity with
sacrebleu and rouge-score on the shared real data, hand-computed diversity scores, each distinct
input scored once and cached, and clear errors on bad input."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import evaluate
import pytest
import sacrebleu
from engine_support import cnndm_rows, wmt21_rows
from rouge_score import rouge_scorer

from blindspot.scorers.rouge import MEASURES
from blindspot.scoring import ScoreCache, ScoreInput, score_corpus, score_rows
from blindspot.scoring.scorer import Scorer, get_scorer

ROUGE_KEYS = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


@pytest.fixture(scope="module")
def wmt() -> dict[str, list]:
    rows = wmt21_rows(200)
    return {"gold": [r["gold"] for r in rows], "reference": [r["reference"] for r in rows],
            "other": [r["systems"]["Online-B"] for r in rows]}


@pytest.fixture(scope="module")
def cnndm() -> dict[str, list]:
    rows = cnndm_rows(30)
    return {"gold": [r["gold"] for r in rows], "references": [r["references"] for r in rows]}


def _module(name: str) -> evaluate.EvaluationModule:
    return evaluate.load(f"metrics/{name}")


def _one_sentence_per_line(text: str) -> str:
    """Sentences on their own lines, the layout rouge-score's rougeLsum expects."""
    return re.sub(r"(?<=[.!?]) +", "\n", text)


# -- parity with sacrebleu on 200 WMT21 rows ---------------------------------------------------------

SACREBLEU = {
    "bleu": (sacrebleu.sentence_bleu, sacrebleu.corpus_bleu),
    "chrf": (sacrebleu.sentence_chrf, sacrebleu.corpus_chrf),
    "ter": (sacrebleu.sentence_ter, sacrebleu.corpus_ter),
}


#: our module doing sacrebleu's job for each sacrebleu metric (the runner's scorer name)
SACREBLEU_MODULES = {"bleu": "sacrebleu", "chrf": "chrf", "ter": "ter"}


@pytest.mark.parametrize("name", sorted(SACREBLEU))
def test_sacrebleu_parity_sentence_and_corpus(name: str, wmt) -> None:
    """Per row (use_aggregator=False) the module scores what the runner judges, sacrebleu's
    sentence score; by default the canonical module's corpus score."""
    sentence, corpus = SACREBLEU[name]
    hyps, refs = wmt["gold"], wmt["reference"]
    module = _module(SACREBLEU_MODULES[name])
    rows = module.compute(predictions=hyps, references=refs, use_aggregator=False)["score"]
    direct = [sentence(h, [r]).score for h, r in zip(hyps, refs, strict=True)]
    assert rows == direct
    assert score_rows(get_scorer(name), hyps, refs, cache=None)[name] == direct
    got = module.compute(predictions=hyps, references=refs)["score"]
    assert got == corpus(hyps, [refs]).score
    assert 0 < got < 100


@pytest.mark.parametrize("name", sorted(SACREBLEU))
def test_sacrebleu_parity_two_references(name: str, wmt) -> None:
    sentence, corpus = SACREBLEU[name]
    hyps = wmt["gold"][:60]
    refs = [list(pair) for pair in zip(wmt["reference"][:60], wmt["other"][:60], strict=True)]
    scorer = get_scorer(name)
    rows = score_rows(scorer, hyps, refs, cache=None)[name]
    assert rows == [sentence(h, r).score for h, r in zip(hyps, refs, strict=True)]
    streams = [[r[0] for r in refs], [r[1] for r in refs]]
    assert score_corpus(scorer, hyps, refs, cache=None)[name] == corpus(hyps, streams).score


def test_sacrebleu_options_reach_sacrebleu(wmt) -> None:
    hyps, refs = wmt["gold"][:50], wmt["reference"][:50]
    got = _module("sacrebleu").compute(predictions=hyps, references=refs, lowercase=True,
                                       tokenize="intl")["score"]
    assert got == sacrebleu.corpus_bleu(hyps, [refs], lowercase=True, tokenize="intl").score
    ter = _module("ter").compute(predictions=hyps, references=refs, use_aggregator=False,
                                 case_sensitive=True)["score"]
    assert ter == [sacrebleu.sentence_ter(h, [r], case_sensitive=True).score
                   for h, r in zip(hyps, refs, strict=True)]


# -- parity with rouge-score on 30 CNN/DM documents ------------------------------------------------

def test_rouge_parity_best_of_ten_references(cnndm) -> None:
    hyps, refs = cnndm["gold"], cnndm["references"]
    assert all(len(r) == 10 for r in refs)
    module = _module("rouge")
    rows = module.compute(predictions=hyps, references=refs, use_aggregator=False,
                          use_stemmer=True)
    direct = rouge_scorer.RougeScorer(ROUGE_KEYS, use_stemmer=True)
    expected = [direct.score_multi(r, h) for h, r in zip(hyps, refs, strict=True)]
    assert list(rows) == ROUGE_KEYS
    for key in ROUGE_KEYS:
        assert rows[key] == [e[key].fmeasure for e in expected], key
    assert rows == score_rows(get_scorer("rouge"), hyps, refs, cache=None)  # what runs judge


def test_rouge_lsum_splits_on_newlines(cnndm) -> None:
    """One sentence per line: Lsum differs from L and still equals rouge-score's score_multi."""
    hyps = [_one_sentence_per_line(h) for h in cnndm["gold"]]
    refs = [[_one_sentence_per_line(r) for r in rs] for rs in cnndm["references"]]
    rows = score_rows(get_scorer("rouge"), hyps, refs, cache=None)
    direct = rouge_scorer.RougeScorer(ROUGE_KEYS, use_stemmer=True)
    expected = [direct.score_multi(r, h) for h, r in zip(hyps, refs, strict=True)]
    assert rows["rougeLsum"] == [e["rougeLsum"].fmeasure for e in expected]
    assert rows["rougeL"] == [e["rougeL"].fmeasure for e in expected]
    assert rows["rougeLsum"] != rows["rougeL"]


@pytest.mark.parametrize("measure", ["precision", "recall"])
def test_rouge_measure_is_that_of_the_best_f_reference(measure: str, cnndm) -> None:
    hyps, refs = cnndm["gold"][:10], cnndm["references"][:10]
    rows = score_rows(get_scorer("rouge", rouge_types=["rouge2", "rougeL"], measure=measure,
                                 use_stemmer=False), hyps, refs, cache=None)
    assert list(rows) == ["rouge2", "rougeL"]
    direct = rouge_scorer.RougeScorer(["rouge2", "rougeL"], use_stemmer=False)
    expected = [direct.score_multi(r, h) for h, r in zip(hyps, refs, strict=True)]
    for key in ("rouge2", "rougeL"):
        assert rows[key] == [getattr(e[key], measure) for e in expected]


def test_rouge_stemming_matters() -> None:
    hyp, ref = ["The cats were running."], ["The cat was running."]
    stem = score_rows(get_scorer("rouge"), hyp, ref, cache=None)["rouge1"][0]
    plain = score_rows(get_scorer("rouge", use_stemmer=False), hyp, ref, cache=None)["rouge1"][0]
    # stemmed: the, cat, run match out of 4 tokens each; unstemmed: the, running
    assert stem == pytest.approx(0.75) and plain == pytest.approx(0.5)



# -- the fast LCS (rapidfuzz) gives rouge-score's rougeL / rougeLsum exactly -----------------------

#: (test, level) cells on CNN/DM golds: deterministic truncation, random drops and swaps, noised
#: punctuation and repetition; every perturbed text stays on one line (Lsum's fast path too)
_CELLS = (("truncation", 0.1), ("truncation", 0.5), ("token_drop", 0.2), ("token_drop", 0.5),
          ("local_swap", 0.3), ("local_swap", 0.6), ("noised_punctuation", 1.0),
          ("repetition", 30))


@pytest.fixture(scope="module")
def cnndm_perturbed(cnndm) -> list[tuple[str, list[str]]]:
    """(hypothesis, references) pairs: 12 golds and each of their perturbed versions, seeds 1-2."""
    from blindspot.perturbations import get_perturbation

    pairs = []
    for gold, refs in zip(cnndm["gold"][:12], cnndm["references"][:12], strict=True):
        pairs.append((gold, refs))
        for test, level in _CELLS:
            for seed in (1, 2):
                result = get_perturbation(test).apply(gold, level, seed=seed)
                if result.applied:
                    pairs.append((result.perturbed, refs))
    return pairs


def _as_floats(score: Any) -> tuple[float, float, float]:
    return (float(score.precision), float(score.recall), float(score.fmeasure))


@pytest.mark.parametrize("use_stemmer", [True, False])
def test_fast_rouge_l_equals_rouge_score_on_perturbed_cnndm(use_stemmer: bool,
                                                            cnndm_perturbed) -> None:
    """Precision, recall and F of every type are rouge-score's to the bit (same float ops), for
    each reference alone and for the best of ten; no tolerance is needed."""
    assert len(cnndm_perturbed) > 150
    assert all("\n" not in h for h, _ in cnndm_perturbed)
    ours = get_scorer("rouge", use_stemmer=use_stemmer)
    direct = rouge_scorer.RougeScorer(ROUGE_KEYS, use_stemmer=use_stemmer)
    for hyp, refs in cnndm_perturbed:
        got, expected = ours.best_scores(refs, hyp), direct.score_multi(refs, hyp)
        for key in ROUGE_KEYS:
            assert _as_floats(got[key]) == _as_floats(expected[key]), (key, hyp)
    only_l = get_scorer("rouge", rouge_types=["rougeL"], use_stemmer=use_stemmer)
    for hyp, refs in cnndm_perturbed[::5]:
        for ref in refs:  # each pair on its own, not only the best one
            assert _as_floats(only_l.best_scores([ref], hyp)["rougeL"]) == \
                _as_floats(direct.score(ref, hyp)["rougeL"])


def test_fast_rouge_rows_equal_rouge_score_rows(cnndm_perturbed) -> None:
    """Through the scoring engine, every measure: the rows are rouge-score's score_multi ones."""
    hyps = [h for h, _ in cnndm_perturbed]
    refs = [r for _, r in cnndm_perturbed]
    direct = rouge_scorer.RougeScorer(["rougeL", "rougeLsum"], use_stemmer=True)
    expected = [direct.score_multi(r, h) for h, r in zip(hyps, refs, strict=True)]
    for measure in MEASURES:
        rows = score_rows(get_scorer("rouge", rouge_types=["rougeL", "rougeLsum"],
                                     measure=measure), hyps, refs, cache=None)
        for key in ("rougeL", "rougeLsum"):
            assert rows[key] == [float(getattr(e[key], measure)) for e in expected], \
                (measure, key)


#: (references, hypothesis) edge cases: empty and punctuation-only sides, single tokens,
#: repeated tokens, stemming, several lines on one side or both, and F-measure ties between
#: references with different precision / recall (the first best reference wins, as np.argmax)
_EDGE_CASES = [
    ([""], "the cat sat"),
    (["the cat sat"], ""),
    ([""], ""),
    (["!!! ... ?"], "the cat sat"),
    (["the cat sat"], "-- ; !"),
    (["?!"], "..."),
    (["cat"], "cat"),
    (["cat"], "dog"),
    (["a"], "a b a"),
    (["the the the"], "the"),
    (["The cats were running."], "The cat was running quickly."),
    (["", "!!!", "the cat sat on the mat"], "cat sat the mat"),
    (["a b", "a b c d e f g h"], "a b c d"),
    (["a b c d e f g h", "a b"], "a b c d"),
    (["b a", "a b"], "a b"),
    (["Line one here.\nLine two there."], "line two there. line one here."),
    (["One line only."], "Line one.\nOnly one line."),
    (["x\n\n", "\n"], "x"),
    (["first part.\nsecond part.", "second part first part"], "\nfirst part second part\n"),
]


@pytest.mark.parametrize("use_stemmer", [True, False])
@pytest.mark.parametrize("refs,hyp", _EDGE_CASES)
def test_fast_rouge_edge_cases(refs: list[str], hyp: str, use_stemmer: bool) -> None:
    got = get_scorer("rouge", use_stemmer=use_stemmer).best_scores(refs, hyp)
    expected = rouge_scorer.RougeScorer(ROUGE_KEYS, use_stemmer=use_stemmer).score_multi(refs, hyp)
    for key in ROUGE_KEYS:
        assert _as_floats(got[key]) == _as_floats(expected[key]), key


def test_fast_rouge_tie_keeps_first_best_reference() -> None:
    """Both references have F = 2/3; score_multi keeps the first, so precision follows order."""
    precision = [score_rows(get_scorer("rouge", rouge_types=["rougeL"], measure="precision"),
                            ["a b c d"], [refs], cache=None)["rougeL"][0]
                 for refs in (["a b", "a b c d e f g h"], ["a b c d e f g h", "a b"])]
    assert precision == [0.5, 1.0]


def test_fast_rouge_skips_the_python_lcs_table(monkeypatch, cnndm) -> None:
    """Single-line texts never reach rouge-score's O(n*m) Python table (the cost removed)."""
    def boom(*args: Any) -> None:
        raise AssertionError("rouge_score's Python LCS table was used")

    monkeypatch.setattr(rouge_scorer, "_lcs_table", boom)
    rows = score_rows(get_scorer("rouge"), cnndm["gold"][:5], cnndm["references"][:5],
                      cache=None)
    assert all(0 < v < 1 for v in rows["rougeL"]) and rows["rougeLsum"] == rows["rougeL"]


def test_fast_rouge_empty_references_raise_as_rouge_score() -> None:
    with pytest.raises(ValueError, match="empty sequence"):
        rouge_scorer.RougeScorer(["rougeL"]).score_multi([], "a b")
    with pytest.raises(ValueError, match="empty sequence"):
        get_scorer("rouge", rouge_types=["rougeL"]).best_scores([], "a b")


# -- rep-n and n-gram entropy by hand ------------------------------------------------------------

def _rep(texts: Sequence[str], **options: Any) -> list[float]:
    return score_rows(get_scorer("rep_ngram", **options), texts, cache=None)["rep_ngram"]


def _ent(texts: Sequence[str], **options: Any) -> list[float]:
    return score_rows(get_scorer("ngram_entropy", **options), texts, cache=None)["ngram_entropy"]


def test_rep4_by_hand() -> None:
    # 13 words, 10 4-grams; "the cat sat on" and "cat sat on the" occur twice: 8 distinct
    text = "the cat sat on the mat and the cat sat on the hat"
    assert _rep([text]) == [pytest.approx(-0.2)]
    assert _rep([text], n=2) == [pytest.approx(-(1 - 8 / 12))]
    # the paper's repetition test: k copies of the last 4-gram appended
    gold = "one two three four five six"
    rep2 = gold + " three four five six three four five six"
    # 14 words, 11 4-grams, 6 distinct (the 3 of the gold and the 3 that cross into a copy)
    assert _rep([gold, rep2]) == [0.0, pytest.approx(-(1 - 6 / 11))]
    # no n-grams (fewer than n tokens, empty text): nothing repeats
    assert _rep(["a b c", "", "   "]) == [0.0, 0.0, 0.0]
    # all the same 4-gram: 5 4-grams, 1 distinct
    assert _rep(["x x x x x x x x"]) == [pytest.approx(-0.8)]


def test_rep_is_case_and_punctuation_sensitive_whitespace_tokens() -> None:
    assert _rep(["a b c d a b c d"]) == [pytest.approx(-0.2)]  # ("a","b","c","d") repeats once
    assert _rep(["A b c d a b c d", "a b c d a b c d."]) == [0.0, 0.0]  # "A" != "a", "d." != "d"


def test_entropy_by_hand() -> None:
    assert _ent(["a b c d", "a a b c", "a a a a"], n=1, log_base=2) == [2.0, 1.5, 0.0]
    # natural log by default; bigrams of "a b a b a": ab x2, ba x2 -> ln 2
    assert _ent(["a b a b a"], n=2) == [pytest.approx(math.log(2))]
    # 4-grams of 5 distinct words: 2 distinct 4-grams, uniform
    assert _ent(["a b c d e"]) == [pytest.approx(math.log(2))]
    assert _ent(["", "a b"]) == [0.0, 0.0]


def test_entropy_corpus_pools_counts_and_rep_corpus_is_the_mean() -> None:
    ent = get_scorer("ngram_entropy", n=1, log_base=2)
    # rows have entropy 1 each; pooled {a, b, c, d} uniform -> 2 bits
    assert score_corpus(ent, ["a b", "c d"], cache=None) == {"ngram_entropy": 2.0}
    assert score_corpus(ent, ["a b", "a b"], cache=None) == {"ngram_entropy": 1.0}
    rep = score_corpus(get_scorer("rep_ngram"), ["x x x x x x x x", "a b c d"], cache=None)
    assert rep["rep_ngram"] == pytest.approx(-0.4)
    module = _module("ngram_entropy")
    assert module.compute(predictions=["a b", "c d"], n=1, log_base=2, level="corpus") == \
        {"ngram_entropy": 2.0}


def test_rep_and_entropy_modules() -> None:
    texts = ["the cat sat on the mat and the cat sat on the hat", "a b c d e"]
    rep = _module("rep_ngram").compute(predictions=texts, use_aggregator=False)
    assert rep == {"rep_ngram": [pytest.approx(-0.2), 0.0]}
    ent = _module("ngram_entropy").compute(predictions=texts, use_aggregator=False)
    # 10 4-grams: two occur twice (p = 0.2), six once (p = 0.1)
    expected = -(2 * 0.2 * math.log(0.2) + 6 * 0.1 * math.log(0.1))
    assert ent["ngram_entropy"] == [pytest.approx(expected), pytest.approx(math.log(2))]


def test_diversity_tokenizer_option_counts_subwords() -> None:
    from blindspot.models import available_models

    if "smollm2" not in available_models():
        pytest.skip("the offline SmolLM2 tokenizer is not installed")
    from blindspot.models import load_tokenizer

    text = "antidisestablishmentarianism antidisestablishmentarianism antidisestablishmentarianism"
    assert _rep([text]) == [0.0]  # three words: no whitespace 4-gram at all
    tokens = load_tokenizer("smollm2").tokenize(text)
    grams = [tuple(tokens[i: i + 4]) for i in range(len(tokens) - 3)]
    expected = -(1 - len(set(grams)) / len(grams))
    assert expected < 0  # the second and third words give the same subword 4-grams
    assert _rep([text], tokenizer="smollm2") == [pytest.approx(expected)]
    assert get_scorer("rep_ngram", tokenizer="smollm2").model_revision() != ""


@pytest.mark.parametrize("name, options, message", [
    ("rep_ngram", {"n": 0}, "n must be a positive integer"),
    ("ngram_entropy", {"n": "4"}, "n must be a positive integer"),
    ("ngram_entropy", {"log_base": 1}, "log_base must be"),
    ("rouge", {"rouge_types": ["rouge0"]}, "rouge_types must be"),
    ("rouge", {"rouge_types": []}, "rouge_types must be"),
    ("rouge", {"measure": "f1"}, "measure must be one of"),
    ("rouge", {"use_stemmer": "yes"}, "use_stemmer must be"),
])
def test_bad_options_name_the_option(name: str, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_scorer(name, **options)


# -- each distinct input once; the second call from the cache --------------------------------------

def _count_calls(scorer: Scorer) -> list[ScoreInput]:
    """Wrap ``scorer.score_batch`` so that every input it is asked to score is recorded."""
    seen: list[ScoreInput] = []
    original = scorer.score_batch

    def counting(batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        seen.extend(batch)
        return original(batch)

    scorer.score_batch = counting  # type: ignore[method-assign]
    return seen


def _forbid_calls(scorer: Scorer) -> None:
    def refuse(batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        raise AssertionError(f"{scorer.name}: score_batch called although every input is cached")

    scorer.score_batch = refuse  # type: ignore[method-assign]


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter", "rouge", "rep_ngram", "ngram_entropy"])
def test_duplicates_scored_once_then_served_from_cache(name: str, wmt, tmp_path: Path) -> None:
    golds = wmt["gold"][:5]
    refs = [list(pair) for pair in zip(wmt["reference"][:5], wmt["other"][:5], strict=True)]
    hyps = golds * 3 + [golds[0]]  # 16 rows, 5 distinct
    references = refs * 3 + [refs[0]]
    cache = ScoreCache(tmp_path / "scores.sqlite")
    scorer = get_scorer(name)
    seen = _count_calls(scorer)
    first = score_rows(scorer, hyps, references, cache=cache)
    assert len(seen) == len(set(seen)) == 5
    uncached = score_rows(get_scorer(name), golds, refs, cache=None)
    for key, values in first.items():
        assert values == uncached[key] * 3 + [uncached[key][0]]
    warm = get_scorer(name)
    _forbid_calls(warm)
    assert score_rows(warm, hyps, references, cache=cache) == first


def test_changed_rouge_option_is_not_served_from_cache(cnndm, tmp_path: Path) -> None:
    cache = ScoreCache(tmp_path / "scores.sqlite")
    hyps, refs = cnndm["gold"][:3], cnndm["references"][:3]
    score_rows(get_scorer("rouge"), hyps, refs, cache=cache)
    other = get_scorer("rouge", use_stemmer=False)
    seen = _count_calls(other)
    score_rows(other, hyps, refs, cache=cache)
    assert len(seen) == 3


# -- bad input ---------------------------------------------------------------------------------------

REFERENCE_BASED = ["bleu", "chrf", "ter", "rouge"]


@pytest.mark.parametrize("name", REFERENCE_BASED)
@pytest.mark.parametrize("kwargs, message", [
    (dict(predictions=["a", "b"], references=[["x"]]), "references must have one item per"),
    (dict(predictions=["a", None], references=["x", "y"]), r"predictions\[1\] must be a string"),
    (dict(predictions=["a"], references=[3]), r"references\[0\] must be a string or a list"),
    (dict(predictions=["a"], references=[["x", 3]]), r"references\[0\] must be a string or a list"),
    (dict(predictions=["a"], references=None), "needs references"),
    (dict(predictions=["a"], references=[[]]), r"references\[0\] is empty"),
    (dict(predictions="a", references=["x"]), "predictions must be a list"),
])
def test_bad_input_names_the_argument(name: str, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        score_rows(get_scorer(name), cache=None, **kwargs)


@pytest.mark.parametrize("name", ["rep_ngram", "ngram_entropy"])
def test_reference_free_bad_input(name: str) -> None:
    with pytest.raises(ValueError, match=r"predictions\[0\] must be a string"):
        score_rows(get_scorer(name), [None], cache=None)
    # references are not needed and, when given, are ignored
    assert score_rows(get_scorer(name), ["a b c d e"], None, cache=None) == \
        score_rows(get_scorer(name), ["a b c d e"], ["x"], cache=None)


@pytest.mark.parametrize("name", ["bleu", "ter", "rouge"])
def test_module_bad_input(name: str) -> None:
    module = _module(name)
    with pytest.raises(ValueError, match="predictions"):
        module.compute(predictions=["a", "b"], references=["x"])
    with pytest.raises(ValueError, match=r"predictions\[1\] must be a string"):
        module.compute(predictions=["a", None], references=["x", "y"])
    with pytest.raises(ValueError, match="references"):
        module.compute(predictions=["a"], references=[3])


def test_module_without_references_names_the_argument() -> None:
    with pytest.raises(ValueError, match="needs references"):
        _module("rouge").compute(predictions=["a"])
    with pytest.raises(ValueError, match=r"references\[0\] must be a string or a list"):
        _module("rouge").compute(predictions=["a"], references=[{"x": 1}])


@pytest.mark.parametrize("name", REFERENCE_BASED + ["rep_ngram", "ngram_entropy"])
def test_empty_strings_score(name: str) -> None:
    refs = None if name in ("rep_ngram", "ngram_entropy") else [[""], ["a b"], [""]]
    out = score_rows(get_scorer(name), ["", "", "a b"], refs, cache=None)
    values = [v for vs in out.values() for v in vs]
    assert values and all(math.isfinite(v) for v in values)
    module_out = _module(name).compute(predictions=[""], references=None if refs is None else [""])
    numbers = [v for v in module_out.values() if isinstance(v, float)]
    assert numbers and all(math.isfinite(v) for v in numbers)
