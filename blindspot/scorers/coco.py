"""The COCO caption evaluation's conventions (pycocoevalcap 1.2, the code behind the published CIDEr
and, in the Q-BLEU authors' copy, Q-BLEU numbers), written from its definitions: its tokens, its
sentence BLEU and its ROUGE-L.

:func:`coco_tokens`: pycocoevalcap lower-cases and tokenizes every text with Stanford's
PTBTokenizer (a Java jar, CoreNLP 3.4.1, run with ``-preserveLines -lowerCase``) and then drops
the tokens of its punctuation list (``. , ? ! : ; - -- ...`` and the quote tokens). This is that in
Python, with no Java, for what English text holds: PTB contractions (``do n't``, ``it 's``,
``can not``), brackets as ``-lrb-``/``-rrb-``... (the jar lower-cases them and COCO's list is in
capitals, so they stay), ``£`` as ``#`` and ``€`` as ``$``, ``%``, ``$``, ``#``, ``*`` apart,
hyphenated words, numbers, URLs and abbreviations (``mr.``, ``u.s.``, ``p.m.``) whole, other
final periods split off. Measured against the jar on the 13,913 distinct texts of the shared data
(WMT21, CNN/DM, TED-MT): 63 (0.5%) get other tokens (a single letter before a sentence's period,
slashes between capitals, spaces inside numbers).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence

#: pycocoevalcap's PUNCTUATIONS: the tokens it drops after the PTB tokenizer
COCO_PUNCTUATION = frozenset({"''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?",
                              "!", ",", ":", "-", "--", "...", ";"})
#: abbreviations the PTB tokenizer keeps with their period (a common subset of its list)
_ABBREVIATIONS = frozenset("""
mr mrs ms dr st jr sr prof gen gov sen rep ave mt messrs rev hon col capt lt sgt maj jan feb mar
apr jun jul aug sep sept oct nov dec inc corp ltd co vs etc bros cie assn dept univ est calif ariz
ark colo conn del fla ga ill ind kan ky la md mass mich minn miss mo mont neb nev okla ore pa tenn
tex va vt wash wis wyo""".split())
_BRACKETS = {"(": "-lrb-", ")": "-rrb-", "[": "-lsb-", "]": "-rsb-", "{": "-lcb-", "}": "-rcb-",
             "£": "#", "€": "$"}
_CHARACTERS = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "–": " -- ",
                             "—": " -- ", "…": " ... ", "½": " 1/2 "})
#: what the tokenizer always splits off a word (a tag such as <unk> stays whole)
_SPLIT = re.compile(r"""(</?\w+>|\*+|[!?]{2,}|[()\[\]{}"=<>~^|\\%$#°£€]|\+(?!\d)|^/|\.\.\.+"""
                    r"""|--+|(?<!\w)'|'(?!\w))""")
_SYMBOLS = frozenset("+=<>~^|\\%$#°/")
#: a decimal, time or thousands number glued to a unit: "9.25am", "1,000ft" are two tokens
_NUMBER_UNIT = re.compile(r"^(\d+(?:[.,:]\d+)+)([a-z]+)$")
_LETTER_PERIODS = re.compile(r"^(?:[a-z]\.)+[a-z]?\.?$")
_CONTRACTION = re.compile(r"^(.+?)(n't|'s|'re|'ve|'ll|'m|'d)$")
_SPLIT_WORDS = {"cannot": ("can", "not"), "gonna": ("gon", "na"), "wanna": ("wan", "na"),
                "gotta": ("got", "ta"), "gimme": ("gim", "me"), "lemme": ("lem", "me"),
                "'tis": ("'t", "is"), "'twas": ("'t", "was")}
_EDGE_PUNCTUATION = ",;:!?'\"`"


def _word(piece: str, out: list[str]) -> None:
    """One piece of a whitespace chunk: final punctuation and periods off, contractions split."""
    piece = piece.rstrip(_EDGE_PUNCTUATION)
    if piece.endswith(".") and not piece.endswith(".."):
        stem = piece.rstrip(".")
        if not (stem in _ABBREVIATIONS or _LETTER_PERIODS.match(piece)):
            piece = stem
    else:
        piece = piece.rstrip(".")
    piece = piece.lstrip(_EDGE_PUNCTUATION)
    if not piece:
        return
    if piece in _SPLIT_WORDS:
        out.extend(_SPLIT_WORDS[piece])
        return
    number = _NUMBER_UNIT.match(piece)
    if number:
        out.extend(number.groups())
        return
    contraction = _CONTRACTION.match(piece)
    if contraction and contraction[1] != "'":
        _word(contraction[1], out)
        out.append(contraction[2])
        return
    out.append(piece)


@functools.lru_cache(maxsize=65536)
def coco_tokens(text: str) -> tuple[str, ...]:
    """The tokens pycocoevalcap scores ``text`` on: PTB tokens, lower-cased, its punctuation
    dropped (see the module's docstring)."""
    text = text.lower().translate(_CHARACTERS)
    text = re.sub(r"(?<=\w)[’‘](?=\w)", "'", text).replace("’", " ' ").replace("‘", " ` ")
    text = re.sub(r"(?<=[\w.])\+(?=\d)", " +", text)
    out: list[str] = []
    for chunk in text.split():
        for piece in _SPLIT.split(chunk):
            if not piece:
                continue
            if piece in _BRACKETS:
                out.append(_BRACKETS[piece])
            elif piece in _SYMBOLS or piece[0] in "<*" or piece[:2] in ("!!", "??", "!?", "?!"):
                out.append(piece)
            else:
                _word(piece, out)
    return tuple(t for t in out if t not in COCO_PUNCTUATION and t.strip("."))


def ngram_counts(tokens: Sequence[str], order: int) -> Counter[tuple[str, ...]]:
    """Every n-gram of ``tokens`` for n = 1..order, with its count."""
    return Counter(tuple(tokens[i: i + n]) for n in range(1, order + 1)
                   for i in range(len(tokens) - n + 1))


#: pycocoevalcap's smoothing constants: a zero count gives ~1e-6, never a zero division
_TINY, _SMALL = 1e-15, 1e-9


def coco_bleu(hypothesis: Sequence[str], references: Sequence[Sequence[str]],
              order: int = 4) -> list[float]:
    """BLEU-1..``order`` of one tokenized sentence as pycocoevalcap's ``BleuScorer`` scores it:
    clipped n-gram precisions (counts + 1e-15) / (n-grams + 1e-9), their geometric mean, times the
    brevity penalty against the reference closest in length."""
    counts = ngram_counts(hypothesis, order)
    most: Counter[tuple[str, ...]] = Counter()
    for reference in references:
        most |= ngram_counts(reference, order)
    correct = [0] * order
    for ngram, count in counts.items():
        correct[len(ngram) - 1] += min(most[ngram], count)
    length = len(hypothesis)
    closest = min((abs(len(r) - length), len(r)) for r in references)[1]
    ratio = (length + _TINY) / (closest + _SMALL)
    penalty = math.exp(1 - 1 / ratio) if ratio < 1 else 1.0
    scores, product = [], 1.0
    for k in range(order):
        product *= (correct[k] + _TINY) / (max(0, length - k) + _SMALL)
        scores.append(product ** (1 / (k + 1)) * penalty)
    return scores


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        row = [0]
        for j, y in enumerate(b, start=1):
            row.append(previous[j - 1] + 1 if x == y else max(previous[j], row[j - 1]))
        previous = row
    return previous[-1]


#: pycocoevalcap's ROUGE-L weight of recall (beta 1.2)
COCO_ROUGE_BETA = 1.2


def coco_rouge_l(hypothesis: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """pycocoevalcap's ROUGE-L: LCS precision and recall, each the best over the references,
    combined as (1 + b^2) P R / (R + b^2 P), b = 1.2. An empty text is one empty token there."""
    candidate = list(hypothesis) or [""]
    precision = recall = 0.0
    for reference in references:
        tokens = list(reference) or [""]
        common = _lcs(tokens, candidate)
        precision = max(precision, common / len(candidate))
        recall = max(recall, common / len(tokens))
    if not precision or not recall:
        return 0.0
    beta2 = COCO_ROUGE_BETA ** 2
    return (1 + beta2) * precision * recall / (recall + beta2 * precision)
