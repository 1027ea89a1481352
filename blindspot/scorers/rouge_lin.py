"""ROUGE-W and ROUGE-S / ROUGE-SU (Lin, 2004), which rouge-score does not implement, written from
the paper's definitions; the ``rouge`` scorer offers them as ROUGE types next to rouge-score's.

* ``rougeW``: weighted LCS. A dynamic program keeps, for each prefix pair, the WLCS score ``c``
  and the length ``w`` of the run of consecutive matches ending there; a match extending a run
  of k adds f(k+1) - f(k), with f(k) = k ** weight (weight 1.2, ROUGE-1.5.5's default), so
  consecutive matches are worth more than scattered ones. Recall = f^-1(WLCS / f(m)), precision
  = f^-1(WLCS / f(n)) for a reference of m tokens and a hypothesis of n, f^-1(x) = x ** (1 /
  weight).
* ``rougeS<d>`` / ``rougeSU<d>``: skip-bigram co-occurrence: every ordered pair of tokens (i < j)
  with at most d tokens between them (``rougeS`` / ``rougeSU`` without a number: any distance,
  Lin's ROUGE-S* / ROUGE-SU*), counted as multisets and clipped; recall = matches / the
  reference's pairs, precision = matches / the hypothesis's pairs. ``SU`` adds unigrams as
  counting units (ROUGE-1.5.5 does this with a start-of-sentence token, whose pairs with every
  word are exactly the unigrams): matches and totals then include the unigram ones.

F-measure is the balanced F of precision and recall, as rouge-score's (``scoring.fmeasure``).
Tokens are the ``rouge`` scorer's (rouge-score's tokenizer, Porter stemming by default), and the
whole text is one sequence, as rougeL.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rouge_score import scoring

#: ROUGE-1.5.5's default weighting exponent of ROUGE-W (``-w 1.2``)
ROUGE_W_WEIGHT = 1.2
_LIN_TYPE = re.compile(r"rouge(?:(W)|(SU|S)([0-9]*))$")


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


def _score(hits: float, hyp_total: float, ref_total: float) -> Any:
    precision = hits / hyp_total if hyp_total else 0.0
    recall = hits / ref_total if ref_total else 0.0
    return scoring.Score(precision=precision, recall=recall,
                         fmeasure=scoring.fmeasure(precision, recall))


def wlcs(reference: Sequence[Any], hypothesis: Sequence[Any], weight: float) -> float:
    """Lin's weighted longest common subsequence of two token sequences."""
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
    """ROUGE-W of two token sequences (a rouge-score ``Score``)."""
    if not reference or not hypothesis:
        return scoring.Score(precision=0.0, recall=0.0, fmeasure=0.0)
    score = wlcs(reference, hypothesis, weight)
    recall = (score / len(reference) ** weight) ** (1 / weight)
    precision = (score / len(hypothesis) ** weight) ** (1 / weight)
    return scoring.Score(precision=precision, recall=recall,
                         fmeasure=scoring.fmeasure(precision, recall))


def skip_bigrams(tokens: Sequence[Any], max_gap: int | None) -> Counter[tuple[Any, Any]]:
    """Every ordered pair (tokens[i], tokens[j]), i < j, with at most ``max_gap`` tokens between
    (None: any), with its count."""
    pairs: Counter[tuple[Any, Any]] = Counter()
    for i, first in enumerate(tokens):
        end = len(tokens) if max_gap is None else min(len(tokens), i + max_gap + 2)
        for j in range(i + 1, end):
            pairs[(first, tokens[j])] += 1
    return pairs


def rouge_s(reference: Sequence[Any], hypothesis: Sequence[Any], max_gap: int | None = None,
            unigrams: bool = False) -> Any:
    """ROUGE-S (``unigrams`` False) or ROUGE-SU of two token sequences."""
    ref_pairs, hyp_pairs = skip_bigrams(reference, max_gap), skip_bigrams(hypothesis, max_gap)
    hits = sum((ref_pairs & hyp_pairs).values())
    ref_total, hyp_total = sum(ref_pairs.values()), sum(hyp_pairs.values())
    if unigrams:
        hits += sum((Counter(reference) & Counter(hypothesis)).values())
        ref_total += len(reference)
        hyp_total += len(hypothesis)
    return _score(hits, hyp_total, ref_total)


def lin_score(kind: LinType, reference: Sequence[Any], hypothesis: Sequence[Any]) -> Any:
    """The score of a parsed ROUGE-W / ROUGE-S type on two token sequences."""
    if kind.kind == "W":
        return rouge_w(reference, hypothesis)
    return rouge_s(reference, hypothesis, kind.max_gap, kind.unigrams)
