"""The one interface every metric implements, and the registry that names them.

A :class:`Scorer` scores unique (hypothesis, references, source) inputs in batches; the engine
(:mod:`blindspot.scoring.engine`) validates the rows, deduplicates them, sorts them by length,
serves what the cache has and batches the rest. A metric never sees the same input twice.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from blindspot.registry import Registry
from blindspot.suggest import did_you_mean


@dataclass(frozen=True)
class ScoreInput:
    """One row to score: a hypothesis, its references (possibly none) and its source."""

    hypothesis: str
    references: tuple[str, ...] = ()
    source: str | None = None

    def cost(self) -> int:
        """A length proxy used to sort inputs so that batches pad little."""
        return len(self.hypothesis) + sum(map(len, self.references)) + len(self.source or "")

    def as_json(self) -> str:
        return json.dumps([self.hypothesis, list(self.references), self.source],
                          ensure_ascii=False, separators=(",", ":"))


class Scorer(ABC):
    """Base class of every metric.

    Subclasses set the class attributes, take their options as keyword arguments (kept in
    ``self.config``, which is part of every cache key) and implement :meth:`score_batch`.
    """

    name: ClassVar[str]
    #: per-row output keys, e.g. ("precision", "recall", "f1")
    outputs: ClassVar[tuple[str, ...]]
    #: "required", "optional" or "none"
    uses_references: ClassVar[str] = "required"
    uses_source: ClassVar[str] = "none"
    #: True when the score exists only for a whole corpus (MAUVE, corpus BLEU)
    corpus_level: ClassVar[bool] = False
    #: bumped when the scorer's computation changes, so old cached scores are not reused
    version: ClassVar[str] = "1"
    default_batch_size: ClassVar[int] = 32
    #: True when a score can depend, to float rounding, on what the scorer computed before (an
    #: embedding cache filled batch by batch, so a text's vectors follow the batch it was first
    #: padded in): engines then run its jobs in order on one worker, as the local engine does
    order_dependent: ClassVar[bool] = False
    #: the option that names the model (``bertscore@minilm`` sets it); None for model-free ones
    model_option: ClassVar[str | None] = "model"

    def __init__(self, **config: Any) -> None:
        self.config = config

    @classmethod
    def option_names(cls) -> list[str] | None:
        """The options this scorer accepts, from its ``__init__`` signature (None: it takes any
        keyword and checks them itself)."""
        return declared_options(cls.__init__)

    # -- subclass hooks --------------------------------------------------------------------------

    @abstractmethod
    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        """Scores of unique inputs, one dict of ``outputs`` per input, in order."""

    def model_revision(self) -> str:
        """Identity of the model weights in use ("" for model-free metrics)."""
        return ""

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        """Corpus-level scores; corpus-level scorers override this."""
        raise NotImplementedError(f"{self.name} has no corpus-level score")

    def truncated(self, texts: Sequence[str]) -> Any:
        """How many of ``texts`` the model cuts to its input limit (a ``Truncation``, which the
        evaluate modules report), or None for scorers that cut nothing."""
        return None

    # -- identity --------------------------------------------------------------------------------

    def identity(self) -> str:
        """What a cached score depends on besides the inputs."""
        return json.dumps({"name": self.name, "version": self.version, "config": self.config,
                           "revision": self.model_revision()}, sort_keys=True, default=str)

    def cache_key(self, item: ScoreInput, identity: str | None = None) -> str:
        payload = f"{identity or self.identity()}\x1f{item.as_json()}"
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def folder_revision(path: str | Path) -> str:
    """A revision id for a local model folder: hash of its config and weight files' names and sizes.

    Hub snapshots are named by their commit, which is part of the path and so of the hash.
    """
    folder = Path(path)
    if not folder.is_dir():
        return str(path)
    digest = hashlib.sha256(str(folder.resolve()).encode())
    for file in sorted(folder.iterdir()):
        if file.is_file():
            digest.update(f"{file.name}:{file.stat().st_size}".encode())
            if file.suffix == ".json" and file.stat().st_size < 1_000_000:
                digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


#: every metric by name; filled by :mod:`blindspot.catalog` (every module of blindspot.scorers)
SCORERS: Registry[type[Scorer]] = Registry("metric")


def register_scorer(cls: type[Scorer]) -> type[Scorer]:
    """Class decorator: add a scorer to the registry under its name."""
    return SCORERS.register(cls.name, cls)


def get_scorer(name: str, **config: Any) -> Scorer:
    """A scorer by name with its options; a clear error lists the valid names."""
    cls = SCORERS.get(name)
    accepted = cls.option_names()
    unknown = sorted(set(config) - set(accepted)) if accepted is not None else []
    if unknown:
        raise ValueError(f"metric {name!r} has no option {unknown[0]!r}; its options are "
                         f"{', '.join(accepted) or 'none'} (e.g. --option {name}.KEY=VALUE)"
                         f"{did_you_mean(unknown[0], accepted)}")
    return cls(**config)


def declared_options(function: Any) -> list[str] | None:
    """The keyword options ``function`` (an ``__init__``) declares; None when it takes any."""
    parameters = [p for p in inspect.signature(function).parameters.values() if p.name != "self"]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return [p.name for p in parameters
            if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
