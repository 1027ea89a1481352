"""The one interface every perturbation implements, and the registry that names them.

A perturbation turns one gold text (plus, for some, its parse, its source, a corpus or a model)
into a noised text at a level. The base class owns everything the tests share: level checking,
the per-row random stream, bad-input handling (the row comes back unchanged, ``applied=False``),
and the output columns ``perturbed, applied, noise_ratio, perturbation, level, seed``.
"""

from __future__ import annotations

import math
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from blindspot.noise import noise_ratio
from blindspot.parsing import ParsedText, get_parser
from blindspot.registry import Registry, snake
from blindspot.seeding import row_rng, text_row_id
from blindspot.suggest import did_you_mean

Level = float | int | str

#: Tasks and their datasets in the blind-spots paper (aliases: short names); levels are given per
#: test and task.
TASKS: Registry[str] = Registry("task", normalise=snake)
TASKS.register("summarization", "CNN/DailyMail with 10 extra references", aliases=("sum",))
TASKS.register("translation", "WMT21 de-en, sentence level", aliases=("wmt", "mt"))
TASKS.register("translation_paragraph", "TED-MT zh-en, paragraph level (about 7 sentences)",
               aliases=("ted",))
TASKS.register("open_ended", "WikiText-103 paragraphs (about 256 tokens)",
               aliases=("wiki", "open-ended"))

OUTPUT_COLUMNS = ("perturbed", "applied", "noise_ratio", "perturbation", "level", "seed")
#: Unicode blocks of the scripts written without spaces between words: whitespace cannot cut
#: their text into words, so a whitespace-word test (``whitespace_words = True``) leaves it alone
UNSPACED_SCRIPTS: dict[str, str] = {
    "Thai": "\u0e00-\u0e7f", "Lao": "\u0e80-\u0eff", "Tibetan": "\u0f00-\u0fff",
    "Myanmar": "\u1000-\u109f", "Khmer": "\u1780-\u17ff",
    "CJK radicals": "\u2e80-\u2fdf", "Hiragana and Katakana": "\u3040-\u30ff\u31f0-\u31ff",
    "CJK ideographs": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f",
    "half-width Katakana": "\uff66-\uff9f",
}
_UNSPACED = re.compile("[" + "".join(UNSPACED_SCRIPTS.values()) + "]")
#: a character for which str.isalnum() holds (\w without the underscore)
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")


def canonical_task(task: str) -> str:
    """The canonical task name; a clear error lists the valid ones."""
    return TASKS.canonical(task)


def level_str(level: Level) -> str:
    """A level's canonical text, used in seeds, config names and the ``level`` column."""
    if isinstance(level, bool):
        raise TypeError("a level cannot be a bool")
    if isinstance(level, float):
        return f"{level:g}"
    return str(level)


# -- level kinds ----------------------------------------------------------------------------------

class LevelKind(ABC):
    """What a perturbation's level means and which values are valid."""

    @abstractmethod
    def parse(self, value: Level) -> Level: ...

    @abstractmethod
    def describe(self) -> str: ...


@dataclass(frozen=True)
class Ratio(LevelKind):
    """A probability or proportion p with low < p <= high."""

    low: float = 0.0
    high: float = 1.0

    def parse(self, value: Level) -> float:
        try:
            p = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"level must be a number in ({self.low}, {self.high}], got {value!r}") from None
        if not (self.low < p <= self.high) or math.isnan(p):
            raise ValueError(f"level {value!r} is out of range; use a number in ({self.low}, {self.high}]")
        return p

    def describe(self) -> str:
        return f"ratio in ({self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Count(LevelKind):
    """A whole number of operations, at least ``minimum``."""

    minimum: int = 1
    maximum: int = 10_000

    def parse(self, value: Level) -> int:
        try:
            as_float = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"level must be a whole number >= {self.minimum}, got {value!r}") from None
        if not as_float.is_integer() or not (self.minimum <= as_float <= self.maximum):
            raise ValueError(f"level {value!r} is out of range; use a whole number in "
                             f"[{self.minimum}, {self.maximum}]")
        return int(as_float)

    def describe(self) -> str:
        return f"count >= {self.minimum}"


@dataclass(frozen=True)
class Choice(LevelKind):
    """One of a fixed set of named variants."""

    options: tuple[str, ...]

    def parse(self, value: Level) -> str:
        text = str(value)
        if text not in self.options:
            raise ValueError(f"unknown level {value!r}; choose one of {list(self.options)}")
        return text

    def describe(self) -> str:
        return "one of " + ", ".join(self.options)


@dataclass(frozen=True)
class NoLevel(LevelKind):
    """A perturbation without a level (copy-source): the only level is ``"-"``."""

    def parse(self, value: Level) -> str:
        if value not in ("-", None, ""):
            raise ValueError(f"this test takes no level; use '-' (got {value!r})")
        return "-"

    def describe(self) -> str:
        return "no level ('-')"


# -- rows ----------------------------------------------------------------------------------------

@dataclass
class Row:
    """What a perturbation sees of one input row."""

    text: str
    row_id: Any
    parsed: ParsedText | None = None
    source: str | None = None


@dataclass
class Result:
    """One perturbed row's new columns."""

    perturbed: str | None
    applied: bool
    noise_ratio: float
    perturbation: str
    level: str
    seed: int

    def as_dict(self) -> dict[str, Any]:
        return {"perturbed": self.perturbed, "applied": self.applied,
                "noise_ratio": self.noise_ratio, "perturbation": self.perturbation,
                "level": self.level, "seed": self.seed}


def is_usable_text(text: Any) -> bool:
    """A string with at least one letter or digit (of any script): something a test can noise.

    Empty and whitespace-only text, and text of only punctuation, symbols or emoji, is not.
    """
    return isinstance(text, str) and _LETTER_OR_DIGIT.search(text) is not None


def can_segment(text: str) -> bool:
    """Whether whitespace splits ``text`` into its words: no character of a script written
    without spaces between words (:data:`UNSPACED_SCRIPTS`)."""
    return text.isascii() or _UNSPACED.search(text) is None


# -- the interface ---------------------------------------------------------------------------------

class Perturbation(ABC):
    """Base class of every stress test.

    Subclasses set the class attributes and implement :meth:`perturb`; they return ``None`` (or
    the text unchanged) when the row cannot be perturbed, and the base class marks it not applied.

    Rows a test cannot perturb come back unchanged with ``applied=False`` and noise ratio 0; the
    base class decides this for every test, so no test special-cases it:

    * the gold is not a string, or has no letter or digit (empty, whitespace only, only
      punctuation, symbols or emoji): :func:`is_usable_text`; :meth:`perturb` never sees it;
    * a whitespace-word test (``whitespace_words = True``: its unit is ``text.split()``, the
      unit of the noise ratio) is given text that whitespace cannot cut into words: text with a
      character of a script written without spaces (Chinese, Japanese, Thai...;
      :func:`can_segment`). Such text is left alone rather than, say, truncated to itself plus a
      period with noise ratio 1.0. A single word is a text of one word: each test says what it
      does with one (repetition repeats it, a typo swaps two letters, a drop or swap needs two);
    * the test returns ``None``, the text unchanged, or a text with no letter or digit (all of
      the gold removed, as punctuation removal would do to a gold of only punctuation).
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    category: ClassVar[str]  # "fluency", "consistency", "targeted"
    description: ClassVar[str]
    paper: ClassVar[str] = "He et al. 2023, On the Blind Spots of Model-Based Evaluation Metrics"
    level_kind: ClassVar[LevelKind]
    #: paper levels per task; a task that is missing means "not applied to that task in the paper"
    levels: ClassVar[Mapping[str, tuple[Level, ...]]]
    deterministic: ClassVar[bool] = False
    swap: ClassVar[bool] = False
    needs_parse: ClassVar[bool] = False
    needs_source: ClassVar[bool] = False
    #: whether the test's unit is the whitespace word: it then needs two words (see above)
    whitespace_words: ClassVar[bool] = False
    #: resources the constructor must be given (e.g. "mlm", "lm", "ngram_corpus", "pool")
    requires: ClassVar[tuple[str, ...]] = ()
    #: what the test loads on its first row (CheckList, WordNet, word lists), once per process:
    #: a suite keeps such a test on one worker, a streamed run loads it before it forks any
    preloads: ClassVar[tuple[Callable[[], Any], ...]] = ()
    #: how a metric's scores on this test are judged: a rule registered in
    #: ``blindspot.protocols.rank.RULES`` (the paper's rule for the test)
    verdict_rule: ClassVar[str] = "monotone_decrease"
    version: ClassVar[str] = "1.0.0"

    def __init__(self, task: str | None = None, **resources: Any) -> None:
        missing = [r for r in self.requires if resources.get(r) is None]
        if missing:
            raise ValueError(f"test {self.name!r} needs {', '.join(missing)}; pass "
                             + ", ".join(f"{r}=..." for r in missing))
        #: the task the data comes from; a few tests have a task variant (open-ended generation
        #: never moves the last sentence, for instance). None = the general variant.
        self.task = canonical_task(task) if task else None
        self.resources = resources

    # -- subclass hooks --------------------------------------------------------------------------

    @abstractmethod
    def perturb(self, row: Row, level: Any, rng: random.Random) -> str | None:
        """The noised text of ``row`` at ``level`` (``level`` already checked and typed)."""

    def preload(self) -> None:
        """Load now what the test would load lazily on its first row."""
        for load in self.preloads:
            load()

    @classmethod
    def loads_once(cls) -> bool:
        """Whether the test has a one-off load on first use (``preloads``, or its own preload)."""
        return bool(cls.preloads) or cls.preload is not Perturbation.preload

    def is_swap(self, level: Any) -> bool:
        """Whether the noise ratio counts a swap as one edit (halved) at this level."""
        return self.swap

    # -- shared machinery ------------------------------------------------------------------------

    def check_level(self, level: Level) -> Level:
        """The typed level, or a ValueError naming the valid values."""
        try:
            return self.level_kind.parse(level)
        except ValueError as error:
            raise ValueError(f"test {self.name!r}: {error}") from None

    def paper_levels(self, task: str) -> tuple[Level, ...]:
        """The paper's levels for ``task`` (empty when the paper does not run it there)."""
        return tuple(self.levels.get(canonical_task(task), ()))

    def applies_to(self, task: str) -> bool:
        return bool(self.paper_levels(task))

    def apply_rows(self, texts: Sequence[Any], row_ids: Sequence[Any], level: Level, seed: int,
                   sources: Sequence[Any] | None = None,
                   parses: Sequence[ParsedText | None] | None = None) -> dict[str, list[Any]]:
        """Perturb a batch; returns the output columns, one value per input row, in order.

        Each row's randomness comes from (seed, test, level, its text) alone
        (:mod:`blindspot.seeding`); ``row_ids`` only name the rows.
        """
        typed = self.check_level(level)
        lvl = level_str(typed)
        swap = self.is_swap(typed)
        usable = [is_usable_text(t) and (not self.whitespace_words or can_segment(t))
                  for t in texts]
        if parses is None and self.needs_parse:
            good = [t for t, ok in zip(texts, usable, strict=True) if ok]
            parsed = iter(get_parser().parse_many(good))
            parses = [next(parsed) if ok else None for ok in usable]
        columns: dict[str, list[Any]] = {c: [] for c in OUTPUT_COLUMNS}
        for i, text in enumerate(texts):
            out: str | None = None
            if usable[i]:
                row = Row(text, row_ids[i], parses[i] if parses is not None else None,
                          sources[i] if sources is not None else None)
                out = self.perturb(row, typed, row_rng(seed, self.name, lvl, text))
            applied = out != text and is_usable_text(out)
            perturbed = out if applied else text
            columns["perturbed"].append(perturbed)
            columns["applied"].append(applied)
            columns["noise_ratio"].append(noise_ratio(text, perturbed, swap) if applied else 0.0)
            columns["perturbation"].append(self.name)
            columns["level"].append(lvl)
            columns["seed"].append(int(seed))
        return columns

    def apply(self, text: str, level: Level, seed: int = 1, row_id: Any = None,
              source: str | None = None) -> Result:
        """Perturb one text (the same output as that text's row in any batch); ``row_id``, which
        defaults to a hash of the text, names the row and does not change the noise."""
        rid = text_row_id(text) if row_id is None else row_id
        cols = self.apply_rows([text], [rid], level, seed, sources=[source])
        return Result(**{k: v[0] for k, v in cols.items()})

    def as_map(self, level: Level, seed: int = 1, column: str = "gold", id_column: str | None = "id",
               source_column: str | None = None) -> MapFunction:
        """A picklable function for ``Dataset.map(fn, batched=True)`` (``num_proc`` works)."""
        self.check_level(level)
        return MapFunction(self, level, seed, column, id_column, source_column)

    @classmethod
    def info(cls) -> dict[str, Any]:
        """The catalogue entry: what it does, its levels per task and what it needs."""
        return {
            "name": cls.name, "aliases": list(cls.aliases), "category": cls.category,
            "description": cls.description, "paper": cls.paper,
            "levels": {t: [level_str(x) for x in cls.levels.get(t, ())] for t in TASKS},
            "applies_to": [t for t in TASKS if cls.levels.get(t)],
            "level_kind": cls.level_kind.describe(), "deterministic": cls.deterministic,
            "swap_type": cls.swap, "whitespace_words": cls.whitespace_words,
            "verdict_rule": cls.verdict_rule,
            "needs": list(cls.requires)
            + (["source"] if cls.needs_source else []), "version": cls.version,
        }


@dataclass
class MapFunction:
    """``Dataset.map`` adapter: reads the text (and id, source) columns, adds the output columns."""

    perturbation: Perturbation
    level: Level
    seed: int
    column: str
    id_column: str | None
    source_column: str | None
    _checked: bool = field(default=False, repr=False)

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        if self.column not in batch:
            raise KeyError(f"column {self.column!r} not found; the data has {sorted(batch)}; "
                           f"choose the text column with column=..."
                           f"{did_you_mean(self.column, batch)}")
        texts = batch[self.column]
        if self.id_column and self.id_column in batch:
            ids = batch[self.id_column]
        else:
            ids = [text_row_id(t) for t in texts]
        sources = None
        if self.source_column:
            if self.source_column not in batch:
                raise KeyError(f"source column {self.source_column!r} not found; the data has "
                               f"{sorted(batch)}{did_you_mean(self.source_column, batch)}")
            sources = batch[self.source_column]
        return self.perturbation.apply_rows(texts, ids, self.level, self.seed, sources=sources)


# -- the registry ----------------------------------------------------------------------------------

#: every test by name (aliases: the papers' names of it); filled by :mod:`blindspot.catalog`
REGISTRY: Registry[type[Perturbation]] = Registry("test", normalise=snake)


def register(cls: type[Perturbation]) -> type[Perturbation]:
    """Class decorator: add a perturbation to the catalogue under its name and aliases."""
    return REGISTRY.register(cls.name, cls, aliases=cls.aliases)


def canonical_name(name: str, suites: Sequence[str] = ()) -> str:
    """The canonical name of a test or alias; a clear error lists the valid names (and the
    ``suites``, where a suite name would also do)."""
    return REGISTRY.canonical(name, others=suites,
                              note=f"; suites: {', '.join(suites)}" if suites else "")


def get_perturbation(name: str, **resources: Any) -> Perturbation:
    """An instance of the test ``name`` (canonical or alias) with its resources."""
    return REGISTRY.get(name)(**resources)
