"""Question to assertion (Sai et al. 2021, question generation answerability: "change question to
assertive statement", Table 5 and App. B).

App. B: the question word is replaced by the masked LM's mask token and the final "?" by ".";
the masked LM (RoBERTa in the paper; the ``mlm`` resource here, loaded through BERT-diverge's
:class:`Predictor`) fills the mask, and one of its suggestions is used. Here the suggestion is
drawn from the top-10 standalone words that are not themselves question words (softmax over
their logits, as in BERT-diverge), so the row's random stream decides. "Who is the director of
Titanic?" -> "<mask> is the director of Titanic." -> "Cameron is the director of Titanic."
A question word of several subwords, or a text without one, is not applied.
"""

from __future__ import annotations

import random
import re

from blindspot.perturbations._checklist import CATEGORY, PAPER
from blindspot.perturbations._questions import QUESTION_WORDS, first_question_word
from blindspot.perturbations.bert_diverge import BertDiverge, Predictor, mask_single_subword, sample_index
from blindspot.perturbations.perturbation import Level, NoLevel, Row, register
from blindspot.perturbations.text_utils import match_case

_QUESTION_MARK = re.compile(r"\?(?=[\"'\u201d\u2019)\]]*\s*$)")


def as_statement(text: str) -> str:
    """``text`` with its final question mark turned into a full stop."""
    return _QUESTION_MARK.sub(".", text.rstrip()) if "?" in text else text


def fill_question_word(text: str, predictor: Predictor, rng: random.Random) -> str | None:
    """The question as a statement whose wh-word the masked LM replaced, or None."""
    match = first_question_word(text)
    if match is None:
        return None
    statement = as_statement(text)
    masked = mask_single_subword(predictor.tokenizer, statement, match.span(),
                                 predictor.max_tokens)
    if masked is None:
        return None
    words, probabilities = predictor.candidates(masked, k=10 + len(QUESTION_WORDS))
    kept = [(w, p) for w, p in zip(words, probabilities, strict=True) if w.lower() not in QUESTION_WORDS][:10]
    if not kept:
        return None
    total = sum(p for _, p in kept)
    choice = kept[sample_index([p / total for _, p in kept], rng)][0]
    return statement[:match.start()] + match_case(match.group(1), choice) + statement[match.end():]


@register
class QuestionToAssertion(BertDiverge):
    """BERT-diverge's masked-LM plumbing (loaded once per process, never pickled), another edit."""

    name = "question_to_assertion"
    aliases = ("change question to assertive statement",)
    category = CATEGORY
    paper = PAPER
    description = "Mask the question word, end with '.', let a masked LM fill the mask."
    level_kind = NoLevel()
    whitespace_words = False  # a question of spaCy tokens, not the masked words of its parent
    levels = {}  # question generation only (the deviation protocol's templates)

    def perturb(self, row: Row, level: Level, rng: random.Random) -> str | None:
        return fill_question_word(row.text, self.predictor, rng)
