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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from blindspot.registry import Registry
from blindspot.scoring.card import ModuleCard
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


@dataclass(frozen=True)
class Reference:
    """The implementation a metric's published numbers come from, and how ours agrees with it:
    docs/metrics.md's two columns are read from here, and the metric's parity test measures the
    figure it states.

    ``implementation`` names the package and version, or the authors' script and commit.
    ``max_abs_diff`` over ``rows`` rows is the agreement of our default with it (None when it
    cannot run here or when ours differs by a stated choice); ``differs`` says where and why ours
    differs ("" when it does not)."""

    implementation: str
    max_abs_diff: float | None = None
    rows: int = 0
    differs: str = ""

    def agreement(self) -> str:
        """The measured agreement as docs/metrics.md shows it."""
        measured = (f"max |diff| {self.max_abs_diff:.0e} on {self.rows} rows"
                    if self.max_abs_diff is not None else "")
        return "; ".join(part for part in (measured, f"differs: {self.differs}"
                                           if self.differs else "") if part) or "not measured"


class Scorer(ABC):
    """Base class of every metric.

    Subclasses set the class attributes, take their options as keyword arguments (kept in
    ``self.config``, which is part of every cache key; the ``__init__`` parameters are the
    options, :meth:`option_names`) and implement :meth:`score_batch`. What the rest of the
    project knows about a metric (direction, natural range, lexical or model-based, default
    output, idf...) is declared here as class attributes, never in a table keyed by its name;
    read them with :func:`blindspot.scoring.facts.scorer_facts`.
    """

    # name, outputs and the input usage are class defaults that an instance may refine (a
    # module or function scorer reads them from what it wraps), so they are not ClassVars
    name: str
    #: per-row output keys, e.g. ("precision", "recall", "f1")
    outputs: tuple[str, ...]
    #: "required", "optional" or "none"
    uses_references: str = "required"
    uses_source: str = "none"
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
    #: the distribution (as pip names it) whose code computes the score, when not this package's
    #: own (``bert-score``, ``sacrebleu``): a result's signature names its version
    library: ClassVar[str | None] = None

    # -- facts the runner, the protocols and the Space read (through :func:`scorer_facts`) -------

    #: "lexical": computed from the strings alone, it loads no model (the Space offers these on
    #: any machine); "model": it scores with model weights
    kind: ClassVar[Literal["lexical", "model"]] = "model"
    #: the output judged when a spec names none (None: the first of ``outputs``): the figure the
    #: papers report for the metric
    default_output: ClassVar[str | None] = None
    #: outputs where a lower score is better (an edit rate); the runner negates them before
    #: judging, as the protocols ask for higher = better
    lower_is_better: ClassVar[frozenset[str]] = frozenset()
    #: the fixed scale of outputs whose scale is fixed: output (None: every output) -> (low, high)
    natural_ranges: ClassVar[Mapping[str | None, tuple[float, float]]] = MappingProxyType({})
    #: the option that restricts which outputs are computed (ROUGE's ``rouge_types``): a spec
    #: then computes only the judged one; None when every output is always computed
    output_selector: ClassVar[str | None] = None
    #: True when the scorer can weight by idf over a reference corpus (options ``idf`` and
    #: ``idf_references``): the runner hands it the run's references
    supports_idf: ClassVar[bool] = False
    #: (place, spec) of this metric in the default panel of a search, None when not in it
    search_panel: ClassVar[tuple[int, str] | None] = None
    #: options taken through ``**options`` besides the named parameters of ``__init__`` (MAUVE's
    #: paper hyperparameters); a scorer with ``**options`` and none declared takes any keyword
    extra_options: ClassVar[tuple[str, ...]] = ()
    #: outputs that count what a row cost (calls, tokens) rather than judge it: a run sums them
    #: over its distinct inputs into its results (``usage``)
    cost_outputs: ClassVar[tuple[str, ...]] = ()
    #: True for a metric whose scores a poor model can give every text alike (an LLM judge's
    #: few grades): a run then flags it ``uninformative`` when it did, or scored the gold like
    #: heavily corrupted copies (:func:`blindspot.scoring.anchors.uninformative`)
    flags_uninformative: ClassVar[bool] = False
    #: the implementation the papers' numbers come from and our measured agreement with it
    #: (:class:`Reference`); None for a metric that is its own reference (blindspot's own)
    reference: ClassVar[Reference | None] = None
    #: its ``evaluate`` module's card, examples and citation (:class:`ModuleCard`; every field
    #: left out is read from this class), from which ``metrics/<name>/`` is generated; None for a
    #: metric that another module serves (``comet_qe``: ``comet_score``'s "qe" configuration)
    card: ClassVar[ModuleCard | None] = ModuleCard()

    def __init__(self, **config: Any) -> None:
        self.config = config

    @classmethod
    def judged_output(cls) -> str:
        """The output judged when a spec names none."""
        return cls.default_output or cls.outputs[0]

    @classmethod
    def higher_is_better(cls, output: str | None = None) -> bool:
        """Whether a higher score of ``output`` (of every output when None) is better."""
        return not (cls.lower_is_better if output is None else cls.lower_is_better & {output})

    @classmethod
    def natural_range(cls, output: str) -> tuple[float, float] | None:
        """The fixed scale of ``output``, None when it has none."""
        return cls.natural_ranges.get(output) or cls.natural_ranges.get(None)

    @classmethod
    def idf_default(cls) -> bool:
        """Whether the scorer weights by idf when its options do not say (its ``idf`` default)."""
        parameter = inspect.signature(cls.__init__).parameters.get("idf")
        return cls.supports_idf and parameter is not None and bool(parameter.default)

    @classmethod
    def option_names(cls) -> list[str] | None:
        """The options this scorer accepts: the named parameters of its ``__init__`` and its
        ``extra_options`` (None: it takes any keyword); a scorer without an ``__init__`` of its
        own has none."""
        if cls.__init__ is Scorer.__init__:
            return list(cls.extra_options)
        named = declared_options(cls.__init__)
        if named is None and not cls.extra_options:
            return None
        return [*(named or _named_parameters(cls.__init__)), *cls.extra_options]

    @classmethod
    def check_options(cls, given: Iterable[str]) -> None:
        """A ValueError naming an option the scorer does not have (a typo would else be cached
        as a different configuration), with the valid ones."""
        accepted = cls.option_names()
        if accepted is None:  # it takes any keyword
            return
        unknown = sorted(set(given) - set(accepted))
        if unknown:
            raise ValueError(f"metric {cls.name!r} has no option {unknown[0]!r}; its options are "
                             f"{', '.join(accepted) or 'none'} (e.g. --option {cls.name}.KEY=VALUE)"
                             f"{did_you_mean(unknown[0], accepted)}")

    # -- subclass hooks --------------------------------------------------------------------------

    @abstractmethod
    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        """Scores of unique inputs, one dict of ``outputs`` per input, in order."""

    def prepares_ahead(self) -> bool:
        """Whether scoring a batch splits into host work (:meth:`prepare_batch`: tokenizing)
        and device work (:meth:`score_prepared`), so that the next batch is prepared in a worker
        thread while the device scores this one (:func:`blindspot.scoring.engine.scores_in_turn`).
        Most scorers do all of it in :meth:`score_batch`."""
        return False

    def prepare_batch(self, batch: Sequence[ScoreInput]) -> Any:
        """The host-side part of scoring ``batch`` (a scorer that :meth:`prepares_ahead`): it
        runs in a worker thread, so it must touch no device and change nothing the device part
        reads."""
        return None

    def score_prepared(self, batch: Sequence[ScoreInput], prepared: Any
                       ) -> list[dict[str, float]]:
        """Scores of ``batch`` from what :meth:`prepare_batch` made of it: the same numbers as
        :meth:`score_batch`."""
        return self.score_batch(batch)

    def model_revision(self) -> str:
        """Identity of the model weights in use ("" for model-free metrics): for weights,
        :func:`blindspot.models.model_revision`, plus the version of a library that computes
        the score when it matters."""
        return ""

    def weights(self) -> str | None:
        """The model's weights as a name, a Hub id or a local folder or file (None: the metric
        has no model): a result's signature reads their revision from here."""
        value = self.config.get(self.model_option) if self.model_option else None
        return None if value is None else str(value)

    def device_kind(self) -> str | None:
        """The kind of device the scores are computed on (``cpu``, ``cuda``, ``mps``: never an
        index or a card's name), for a result's signature; None where the metric runs no model
        here (a lexical metric, a judge behind an API, a user's function). A model scorer keeps
        its device in ``_device`` or ``device`` (None: CUDA when there is one, as it runs)."""
        if self.kind == "lexical":
            return None
        chosen = getattr(self, "_device", None) or getattr(self, "device", None)
        if chosen is None:
            import torch  # lazy: the heavy edge, only for a model metric left to choose

            return "cuda" if torch.cuda.is_available() else "cpu"
        return str(getattr(chosen, "type", chosen)).split(":", 1)[0]

    def reserve(self, inputs: int) -> None:
        """Called with how many distinct inputs a run will score, before it scores any: a
        scorer that pays per call (a judge behind an API) refuses a run that would pass its
        budget here. Most scorers take any number."""
        return None

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        """Corpus-level scores; corpus-level scorers override this."""
        raise NotImplementedError(f"{self.name} has no corpus-level score")

    def truncated(self, texts: Sequence[str]) -> Any:
        """How many of ``texts`` the model cuts to its input limit (a ``Truncation``, which the
        evaluate modules report), or None for scorers that cut nothing."""
        return None

    # -- identity --------------------------------------------------------------------------------

    def batch_rows(self) -> int:
        """Inputs per :meth:`score_batch` call when the caller names no batch size: the class's
        ``default_batch_size`` (a model scorer on a GPU takes more and cuts them by tokens)."""
        return self.default_batch_size

    def identity_config(self) -> Mapping[str, Any]:
        """The configuration as the cache keys it (a model scorer names the precision that
        ``precision=auto`` resolves to)."""
        return self.config

    def identity(self) -> str:
        """What a cached score depends on besides the inputs."""
        return json.dumps({"name": self.name, "version": self.version,
                           "config": self.identity_config(),
                           "revision": self.model_revision()}, sort_keys=True, default=str)

    def cache_key(self, item: ScoreInput, identity: str | None = None) -> str:
        payload = f"{identity or self.identity()}\x1f{item.as_json()}"
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


#: every metric by name; filled by :mod:`blindspot.catalog` (every module of blindspot.scorers)
SCORERS: Registry[type[Scorer]] = Registry("metric")


def register_scorer(cls: type[Scorer]) -> type[Scorer]:
    """Class decorator: add a scorer to the registry under its name."""
    return SCORERS.register(cls.name, cls)


def get_scorer(name: str, **config: Any) -> Scorer:
    """A scorer by name with its options; a clear error lists the valid names."""
    cls = SCORERS.get(name)
    cls.check_options(config)
    return cls(**config)


def _named_parameters(function: Any) -> list[str]:
    """The parameters of ``function`` (an ``__init__``) that can be given by name."""
    return [p.name for p in inspect.signature(function).parameters.values()
            if p.name != "self"
            and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]


def declared_options(function: Any) -> list[str] | None:
    """The keyword options ``function`` (an ``__init__``) declares; None when it takes any."""
    parameters = inspect.signature(function).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return _named_parameters(function)
