"""Q-BLEU and Q-ROUGE (Nema & Khapra, 2018): n-gram metrics for question generation weighted by
answerability, written from the paper's definition.

A question's words fall in four types: question words (who, what, when... and the word after
"what" / "which", which names the answer type), named entities (capitalised words, a leading
question word aside), function words (a fixed stop-word list) and relevant content words (the
rest). For each type i, P_i and R_i are the unigram precision and recall of the hypothesis's
words of that type against the reference's (clipped counts) and F_i their harmonic mean; where
neither question has a word of the type, F_i = 1 (they agree; the authors' script scores such a
type 0, which caps even a copy of the reference below 1).

    answerability = w_ner F_ner + w_qt F_qt + w_re F_re + (1 - w_ner - w_qt - w_re) F_sw
    Q-metric = delta * answerability + (1 - delta) * metric

with the weights of the authors' SQuAD example (ner 0.6, question type 0.2, relevant words 0.1,
function words 0.1, delta 0.7). The n-gram metrics: BLEU-1..4 (sacreBLEU's sentence BLEU with
that maximum order, on a 0-1 scale) and ROUGE-L (rouge-score's F-measure, no stemming).
Outputs ``qbleu4`` (judged by default), ``qbleu1``, ``qbleu2``, ``qbleu3``, ``qrougeL`` and
``answerability`` itself; several references: the best of each output.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from blindspot.scoring.scorer import ScoreInput, Scorer, register_scorer

QUESTION_WORDS = frozenset({"what", "which", "why", "who", "whom", "whose", "where", "when", "how"})
#: the function words of the authors' script (NLTK's English stop words of 2018)
FUNCTION_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can did do does doing don down during each few for from further had has have
having he her here hers herself him himself his i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own s same she
should so some such t than that the their theirs them themselves then there these they this
those through to too under until up very was we were what which while who whom why will with you
your yours yourself yourselves""".split()) - QUESTION_WORDS
_WORD = re.compile(r"\w+(?:'\w+)?")
TYPES = ("ner", "qt", "re", "sw")
_BLEU_ORDERS = (1, 2, 3, 4)


def question_parts(question: str) -> dict[str, list[str]]:
    """The question's words by type: ``ner``, ``qt``, ``re``, ``sw``."""
    words = _WORD.findall(question)
    parts: dict[str, list[str]] = {key: [] for key in TYPES}
    after_type = False
    for index, word in enumerate(words):
        lower = word.lower()
        if lower in QUESTION_WORDS or after_type:
            parts["qt"].append(lower)
            after_type = lower in ("what", "which") and not after_type
        elif lower in FUNCTION_WORDS:
            parts["sw"].append(lower)
        elif word[0].isupper() and index > 0:
            parts["ner"].append(word)
        else:
            parts["re"].append(lower)
    return parts


def _f1(hypothesis: Sequence[str], reference: Sequence[str]) -> float:
    if not hypothesis and not reference:
        return 1.0
    hits = sum((Counter(hypothesis) & Counter(reference)).values())
    if not hits:
        return 0.0
    precision, recall = hits / len(hypothesis), hits / len(reference)
    return 2 * precision * recall / (precision + recall)


def answerability(hypothesis: str, reference: str, weights: dict[str, float]) -> float:
    """The weighted sum of the four types' F-scores."""
    hyp, ref = question_parts(hypothesis), question_parts(reference)
    return sum(weights[key] * _f1(hyp[key], ref[key]) for key in TYPES)


@register_scorer
class QBleu(Scorer):
    """Q-BLEU-1..4 and Q-ROUGE-L in [0, 1], and the answerability they mix in."""

    name = "qbleu"
    outputs = ("qbleu4", "qbleu1", "qbleu2", "qbleu3", "qrougeL", "answerability")
    model_option = None
    kind = "lexical"
    uses_references = "required"
    natural_ranges = MappingProxyType({None: (0.0, 1.0)})
    default_batch_size = 256

    def __init__(self, ner_weight: float = 0.6, qt_weight: float = 0.2, re_weight: float = 0.1,
                 delta: float = 0.7) -> None:
        values = {"ner_weight": ner_weight, "qt_weight": qt_weight, "re_weight": re_weight,
                  "delta": delta}
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"qbleu option {key} must be a number in [0, 1], got {value!r}")
        if ner_weight + qt_weight + re_weight > 1:
            raise ValueError("qbleu options ner_weight + qt_weight + re_weight must be at most 1 "
                             "(function words get the rest)")
        super().__init__(**{k: float(v) for k, v in values.items()})
        self._weights = {"ner": float(ner_weight), "qt": float(qt_weight),
                         "re": float(re_weight),
                         "sw": 1.0 - float(ner_weight) - float(qt_weight) - float(re_weight)}
        self._bleu: dict[int, Any] = {}
        self._rouge: Any = None

    def _ngram_scores(self, hypothesis: str, reference: str) -> dict[str, float]:
        import sacrebleu  # lazy: ~0.2 s
        from rouge_score import rouge_scorer  # lazy: imports nltk

        if not self._bleu:
            self._bleu = {n: sacrebleu.metrics.BLEU(max_ngram_order=n, effective_order=True)
                          for n in _BLEU_ORDERS}
            self._rouge = rouge_scorer.RougeScorer(["rougeL"])
        scores = {f"qbleu{n}": bleu.sentence_score(hypothesis, [reference]).score / 100.0
                  for n, bleu in self._bleu.items()}
        scores["qrougeL"] = self._rouge.score(reference, hypothesis)["rougeL"].fmeasure
        return scores

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        delta = self.config["delta"]
        rows = []
        for item in batch:
            best: dict[str, float] = {}
            for reference in item.references:
                answer = answerability(item.hypothesis, reference, self._weights)
                row = {key: delta * answer + (1 - delta) * value
                       for key, value in self._ngram_scores(item.hypothesis, reference).items()}
                row["answerability"] = answer
                best = {key: max(best.get(key, 0.0), value) for key, value in row.items()}
            rows.append({key: float(best.get(key, 0.0)) for key in self.outputs})
        return rows
