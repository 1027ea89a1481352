"""Q-BLEU and Q-ROUGE (Nema & Khapra, 2018): n-gram metrics for question generation weighted by
answerability. Option ``definition`` (:mod:`blindspot.scorers.definition`) picks the reading.

A question's words fall in four types: question words (who, what, when... and the word after
"what" / "which", which names the answer type), named entities (capitalised words), function
words (the authors' stop-word list, NLTK's English one of 2018) and relevant content words (the
rest). For each type, F is the harmonic mean of the hypothesis's unigram precision and recall
against the reference's words of that type; where neither question has a word of the type, F = 1.

    answerability = w_ner F_ner + w_qt F_qt + w_re F_re + (1 - w_ner - w_qt - w_re) F_sw
    Q-metric = delta * answerability + (1 - delta) * metric

with the weights of the authors' SQuAD example (ner 0.6, question type 0.2, relevant words 0.1,
function words 0.1, delta 0.7).

* ``"released"`` (default): what the authors' ``answerability_score.py`` computes (its last
  commit, 2019; facts read from it and its outputs recorded in tests/fixtures/reference/): types
  from the whitespace-separated words as written; a question word counts only as written in full
  ("What", "what"; not "what's"), and every other occurrence of a question-type word is no
  relevant word; only a LEADING question word is no named entity ("At what..." has the entity
  "At"). Each type's words, and the whole questions, are then tokenized as the COCO evaluation
  does (:func:`blindspot.scorers.coco.coco_tokens`: lower-cased, punctuation dropped), P and R are
  COCO's sentence BLEU-1 in each direction (brevity penalty included), and the n-gram metrics are
  COCO's sentence BLEU-1..4 and its ROUGE-L (beta 1.2).
* ``"paper"``: words are ``\\w+`` tokens, P and R plain clipped unigram precision and recall,
  BLEU-n sacreBLEU's sentence BLEU with that maximum order (0-1 scale), ROUGE-L rouge-score's
  F-measure (no stemming).

Outputs ``qbleu4`` (judged by default), ``qbleu1``, ``qbleu2``, ``qbleu3``, ``qrougeL`` and
``answerability`` itself; several references: the best of each output.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from blindspot.scorers.coco import coco_bleu, coco_rouge_l, coco_tokens
from blindspot.scorers.definition import check_definition
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, Scorer, register_scorer

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


#: the question words as the authors' script matches them: written in full, capitalised or not
_QUESTION_FORMS = QUESTION_WORDS | {w.capitalize() for w in QUESTION_WORDS}


def question_parts(question: str) -> dict[str, list[str]]:
    """The question's words by type (``ner``, ``qt``, ``re``, ``sw``), the paper's reading."""
    words = _WORD.findall(question)
    parts: dict[str, list[str]] = {key: [] for key in TYPES}
    after_type = False
    for word in words:
        lower = word.lower()
        if lower in QUESTION_WORDS or after_type:
            parts["qt"].append(lower)
            after_type = lower in ("what", "which") and not after_type
        elif lower in FUNCTION_WORDS:
            parts["sw"].append(lower)
        elif word[0].isupper():
            parts["ner"].append(word)
        else:
            parts["re"].append(lower)
    return parts


def released_parts(question: str) -> dict[str, str]:
    """The question's words by type as the authors' script forms them, each type one string."""
    words = question.split()
    question_type = []
    for i, word in enumerate(words):
        if word in _QUESTION_FORMS:
            question_type.append(word)
            if i + 1 < len(words) and word.lower() in ("what", "which"):
                question_type.append(words[i + 1])
    marked = set(question_type)
    entities = words[1:] if words and words[0].lower() in QUESTION_WORDS else words
    return {"qt": " ".join(question_type),
            "ner": " ".join(w for w in entities if w[0].isupper()),
            "re": " ".join(w for w in words if w not in marked and not w[0].isupper()
                           and w not in FUNCTION_WORDS),
            "sw": " ".join(w.lower() for w in words if w.lower() in FUNCTION_WORDS)}


def _released_f1(hypothesis: str, reference: str) -> float:
    """The authors' F of one type: COCO's BLEU-1 of the hypothesis against the reference and of
    the reference against the hypothesis, on COCO's tokens; 1 where both are empty."""
    if not hypothesis and not reference:
        return 1.0
    hyp, ref = coco_tokens(hypothesis), coco_tokens(reference)
    precision, recall = coco_bleu(hyp, [ref], 1)[0], coco_bleu(ref, [hyp], 1)[0]
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _f1(hypothesis: Sequence[str], reference: Sequence[str]) -> float:
    if not hypothesis and not reference:
        return 1.0
    hits = sum((Counter(hypothesis) & Counter(reference)).values())
    if not hits:
        return 0.0
    precision, recall = hits / len(hypothesis), hits / len(reference)
    return 2 * precision * recall / (precision + recall)


def answerability(hypothesis: str, reference: str, weights: dict[str, float],
                  definition: str = "released") -> float:
    """The weighted sum of the four types' F-scores."""
    if definition == "released":
        hyp_text, ref_text = released_parts(hypothesis), released_parts(reference)
        return sum(weights[key] * _released_f1(hyp_text[key], ref_text[key]) for key in TYPES)
    hyp, ref = question_parts(hypothesis), question_parts(reference)
    return sum(weights[key] * _f1(hyp[key], ref[key]) for key in TYPES)


_QBLEU_CARD = ModuleCard(
    title="Q-BLEU / Q-ROUGE", emoji="❓",
    summary=("Q-BLEU-1..4 and Q-ROUGE-L (answerability-weighted) for question generation, on "
             "blindspot's cached scoring layer."),
    description="""\
Q-BLEU and Q-ROUGE (Nema & Khapra, 2018): question-generation metrics that mix an n-gram
metric with the answerability of the question.

Answerability compares the question words, named entities, relevant content words and function
words of the generated and reference questions (an F-score per type, weighted 0.2 / 0.6 / 0.1 /
0.1); ``qbleuN = delta * answerability + (1 - delta) * BLEU-N`` (delta 0.7) and ``qrougeL`` the
same with ROUGE-L. By default these are what the authors' ``answerability_score.py`` computes (its
2019 version; equal to its recorded outputs on 48 rows): types from the words as written, a
question word only as a whole word, only a leading question word kept out of the named entities,
COCO's tokens, BLEU-1 F per type and COCO's sentence BLEU and ROUGE-L. ``definition="paper"`` is
the paper's reading (plain unigram F per type, sacreBLEU's BLEU-N, rouge-score's ROUGE-L).
``use_aggregator=False`` gives per-row scores, what ``blindspot run --metrics qbleu`` judges
(``qbleu4``).""",
    examples="""\
>>> import evaluate
>>> qbleu = evaluate.load("blindspot/qbleu")
>>> out = qbleu.compute(predictions=["At what temperature does water boil?",
...                                  "When was Beethoven born?"],
...                     references=["What is the boiling point of water?",
...                                 "When was Beethoven born?"], use_aggregator=False)
>>> [round(v, 4) for v in out["qbleu1"]], [round(v, 4) for v in out["answerability"]]
([0.1769, 1.0], [0.1318, 1.0])

The paper's reading scores the first pair higher ("At" is a function word there, not an entity):

>>> out = qbleu.compute(predictions=["At what temperature does water boil?"],
...                     references=["What is the boiling point of water?"],
...                     definition="paper", use_aggregator=False)
>>> round(out["qbleu1"][0], 4)
0.5923
""",
    inputs="""\
Args:
    predictions (list of str): generated questions.
    references (list of str or list of list of str): reference questions.
    ner_weight, qt_weight, re_weight (float): weights of named entities (0.6), question words
        (0.2) and relevant content words (0.1); function words get the rest.
    delta (float): weight of answerability against the n-gram metric, default 0.7.
    definition (str): "released" (default): the authors' script; "paper": the paper's reading.
    use_aggregator (bool): True (default): the mean over rows; False: one score per row.
Returns:
    qbleu4, qbleu1, qbleu2, qbleu3, qrougeL, answerability: in [0, 1], higher is better.
""",
    citation="""\
@inproceedings{nema-khapra-2018-towards,
    title = "Towards a Better Metric for Evaluating Question Generation Systems",
    author = "Nema, Preksha and Khapra, Mitesh M.",
    booktitle = "Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing",
    year = "2018",
    pages = "3950--3959",
}
""",
    sections="""\
## Metric description
Q-BLEU and Q-ROUGE (Nema & Khapra, 2018): question-generation metrics that mix an n-gram
metric with the answerability of the question.

Answerability compares the question words, named entities, relevant content words and function
words of the generated and reference questions (an F-score per type, weighted 0.2 / 0.6 / 0.1 /
0.1); ``qbleuN = delta * answerability + (1 - delta) * BLEU-N`` (delta 0.7) and ``qrougeL`` the
same with ROUGE-L. By default these are what the authors' ``answerability_score.py`` computes (its
2019 version; equal to its recorded outputs on 48 rows): types from the words as written, a
question word only as a whole word, only a leading question word kept out of the named entities,
COCO's tokens, BLEU-1 F per type and COCO's sentence BLEU and ROUGE-L. ``definition="paper"`` is
the paper's reading (plain unigram F per type, sacreBLEU's BLEU-N, rouge-score's ROUGE-L).
``use_aggregator=False`` gives per-row scores, what ``blindspot run --metrics qbleu`` judges
(``qbleu4``).

Offline after `make env`: `evaluate.load("blindspot/qbleu")`; `blindspot run --data demo --metrics qbleu` judges the
per-row scores. The full list of metrics the papers examine, with what is left out and why:
`docs/metrics.md`.
""",  # noqa: E501
)


@register_scorer
class QBleu(Scorer):
    """Q-BLEU-1..4 and Q-ROUGE-L in [0, 1], and the answerability they mix in."""

    name = "qbleu"
    card = _QBLEU_CARD
    outputs = ("qbleu4", "qbleu1", "qbleu2", "qbleu3", "qrougeL", "answerability")
    model_option = None
    kind = "lexical"
    uses_references = "required"
    natural_ranges = MappingProxyType({None: (0.0, 1.0)})
    default_batch_size = 256
    #: 2: the authors' script by default (``definition``)
    version = "2"
    reference = Reference(
        "answerability_score.py (PrekshaNema25/Answerability-Metric @ ec5cf5e)", max_abs_diff=1e-9,
        rows=48)

    def __init__(self, ner_weight: float = 0.6, qt_weight: float = 0.2, re_weight: float = 0.1,
                 delta: float = 0.7, definition: str = "released") -> None:
        values = {"ner_weight": ner_weight, "qt_weight": qt_weight, "re_weight": re_weight,
                  "delta": delta}
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"qbleu option {key} must be a number in [0, 1], got {value!r}")
        if ner_weight + qt_weight + re_weight > 1:
            raise ValueError("qbleu options ner_weight + qt_weight + re_weight must be at most 1 "
                             "(function words get the rest)")
        super().__init__(**{k: float(v) for k, v in values.items()},
                         definition=check_definition(definition, "qbleu"))
        self._weights = {"ner": float(ner_weight), "qt": float(qt_weight),
                         "re": float(re_weight),
                         "sw": 1.0 - float(ner_weight) - float(qt_weight) - float(re_weight)}
        self._bleu: dict[int, Any] = {}
        self._rouge: Any = None

    def _ngram_scores(self, hypothesis: str, reference: str) -> dict[str, float]:
        if self.config["definition"] == "released":
            hyp, ref = coco_tokens(hypothesis), coco_tokens(reference)
            scores = dict(zip((f"qbleu{n}" for n in _BLEU_ORDERS),
                              coco_bleu(hyp, [ref], max(_BLEU_ORDERS)), strict=True))
            scores["qrougeL"] = coco_rouge_l(hyp, [ref])
            return scores
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
                answer = answerability(item.hypothesis, reference, self._weights,
                                       self.config["definition"])
                row = {key: delta * answer + (1 - delta) * value
                       for key, value in self._ngram_scores(item.hypothesis, reference).items()}
                row["answerability"] = answer
                best = {key: max(best.get(key, 0.0), value) for key, value in row.items()}
            rows.append({key: float(best.get(key, 0.0)) for key in self.outputs})
        return rows
