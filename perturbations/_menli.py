"""What the MENLI attacks share: their paper, category, and the one-level "every task" setting.

Chen & Eger (TACL 2023), "MENLI: Robust Evaluation Metrics from Natural Language Inference", §3
define twelve attacks (nine on adequacy, three on fluency) that turn an anchor text (a reference,
or a literal translation ``r`` of the source for reference-free metrics) into ``cand_adv``. Each
attack is a test of category ``menli`` here, so ``--tests menli`` runs them as a suite, and keeps
the MENLI set's error-type name (``add``, ``num``, ``word_NN``...) as an alias.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations._fluency_edits import every_task, parse_of
from blindspot.perturbations._word_lists import random_word
from blindspot.perturbations._word_lists import word_list as load_word_list
from blindspot.perturbations.perturbation import REGISTRY, Level, LevelKind, NoLevel, Perturbation, Row
from blindspot.perturbations.text_utils import replace_spans

MENLI_PAPER = ("Chen & Eger 2023, MENLI: Robust Evaluation Metrics from Natural Language "
               "Inference (TACL)")
CATEGORY = "menli"
#: MENLI's error types in the order of its released sets
MENLI_ERRORS = ("add", "drop", "name", "neg", "num", "pron", "word_JJ", "word_NN", "word_VB", "typo",
                "jumble", "subject_verb_dis")
#: the attacks without a level run once per row at the level "-", on every task
NO_LEVEL = every_task(("-",))


def row_parse(row: Row) -> ParsedText | None:
    """The row's parse when it belongs to the row's text (else the attack does not apply)."""
    return parse_of(row.text, row.parsed)


class MenliAttack(Perturbation):
    """Base of the MENLI attacks: category ``menli``, MENLI's citation, no level by default."""

    category: ClassVar[str] = CATEGORY
    paper: ClassVar[str] = MENLI_PAPER
    #: the error type's name in MENLI's released sets (``add``, ``word_NN``...); also an alias
    menli_error: ClassVar[str]
    level_kind: ClassVar[LevelKind] = NoLevel()
    levels: ClassVar[Mapping[str, tuple[Level, ...]]] = NO_LEVEL


def menli_error_types() -> dict[str, str]:
    """MENLI error type -> the registered attack, for every MENLI attack in the catalogue."""

    return {cls.menli_error: name for name, cls in REGISTRY.items()
            if issubclass(cls, MenliAttack) and getattr(cls, "menli_error", None)}


class TokenEditAttack(MenliAttack):
    """A MENLI attack that rewrites single spaCy tokens in place (numbers, verbs, pronouns)."""

    needs_parse = True

    def new_text(self, parsed: ParsedText, token: Token, rng: random.Random) -> str | None:
        """The replacement of ``token`` (of ``parsed``), or None to leave it."""
        raise NotImplementedError

    def perturb(self, row: Row, level: Any, rng: random.Random) -> str | None:
        parsed = row_parse(row)
        if parsed is None:
            return None
        edits = []
        for token in parsed.tokens:
            new = self.new_text(parsed, token, rng)
            if new is not None and new != token.text:
                edits.append((token.idx, token.idx + len(token.text), new))
        return replace_spans(parsed.text, edits) if edits else None


class RandomWordAttack(MenliAttack):
    """A MENLI attack at one random word of a part of speech, with a random word of that part of
    speech from our lists (``_word_lists``): mismatch replaces the word, addition adds after it."""

    needs_parse = True
    #: spaCy coarse POS and fine tags of the words that may be attacked
    upos: ClassVar[str]
    tags: ClassVar[frozenset[str]]
    #: the word list the new word comes from
    word_list: ClassVar[str]

    def preload(self) -> None:
        load_word_list(self.word_list)

    def is_target(self, token: Token) -> bool:
        return token.pos == self.upos and token.tag in self.tags and token.text.isalpha()

    def edit(self, target: Token, new: str) -> tuple[int, int, str]:
        """The character edit that puts ``new`` at ``target``: here, replacing it."""
        return target.idx, target.idx + len(target.text), new

    def perturb(self, row: Row, level: Any, rng: random.Random) -> str | None:
        parsed = row_parse(row)
        if parsed is None:
            return None
        targets = [t for t in parsed.tokens if self.is_target(t)]
        if not targets:
            return None
        target = rng.choice(targets)
        new = random_word(self.word_list, target, rng)
        return None if new is None else replace_spans(parsed.text, [self.edit(target, new)])
