"""The greedy search loop (blind-spots paper, Appendix J): perturb each gold hypothesis one word at
a time, always keeping the edit the targeted metric penalises least, until a target noise ratio.

At each step every word of the current hypothesis is tried (1) deleted and (2) replaced by each of
its candidates (:mod:`blindspot.search.candidates`); every resulting text is scored by the metric
against the gold (the gold plays the reference; the source is given where the metric reads one;
the data's references are never used), and the highest-scoring edit is applied. The search stops
for a hypothesis once its noise ratio (word-level Levenshtein to the gold / gold words,
:mod:`blindspot.noise`) reaches the target.

Choices, stated:

* A word already replaced is not edited again (re-editing it would not raise the noise ratio),
  and an edit must raise the word-level edit distance to the gold, so every step makes progress
  and the search ends. The last remaining word is never deleted.
* Texts are the hypothesis' whitespace words joined by single spaces.
* All hypotheses advance in lockstep: one step of every unfinished hypothesis is scored in one
  batch through the scoring layer (deduplicated and cached).
* Budget: a *metric call* is one candidate text scored (whether the score cache had it or not,
  so a warm cache never changes the result); identical texts within one hypothesis' step count
  once; the gold's own score is not a call. A step whose candidates would exceed ``max_calls``
  is not scored: the search stops there (``stopped_by="max_calls"``), so at most ``max_calls``
  calls are made and the output does not depend on the machine. A call budget too small for any
  step at all is refused (:class:`EmptyBudgetError`, naming the calls the first step needs)
  rather than reported as a search that found nothing. ``max_seconds`` stops before a
  step once that much wall time has passed (``stopped_by="max_seconds"``): what a time budget
  lets finish depends on the machine's speed, so only the call budget is reproducible.
* Ties between edits with exactly the same score are broken by a random stream of
  (seed, target noise ratio, row id) alone, so a run is deterministic for a seed.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from blindspot.noise import noise_ratio, word_distance
from blindspot.progress import progress_bar
from blindspot.search.candidates import replacements
from blindspot.search.panel import relative_change
from blindspot.search.patterns import classify
from blindspot.seeding import row_key

#: why a hypothesis' search ended
STATUSES = ("reached", "no_candidates", "budget", "empty")


@dataclass(frozen=True)
class Operation:
    """One edit of the current words: delete word ``index``, or replace it by ``new``."""

    kind: str  # "delete" | "replace"
    index: int
    old: str
    new: str | None = None
    source: str | None = None  # which candidate source(s) proposed the replacement

    def apply(self, words: list[str]) -> list[str]:
        if self.kind == "delete":
            return words[:self.index] + words[self.index + 1:]
        return words[:self.index] + [str(self.new)] + words[self.index + 1:]


@dataclass
class Hypothesis:
    """The search state of one gold hypothesis."""

    id: Any
    gold: str
    source: str | None
    gold_score: float = math.nan
    words: list[str] = field(default_factory=list)
    origin: list[int] = field(default_factory=list)  # gold word index of each current word
    replaced: set[int] = field(default_factory=set)
    distance: int = 0
    score: float = math.nan
    trail: list[dict[str, Any]] = field(default_factory=list)
    status: str = "running"
    calls: int = 0

    def __post_init__(self) -> None:
        self.words = self.gold.split()
        self.origin = list(range(len(self.words)))
        if not self.words:
            self.status = "empty"

    @property
    def gold_words(self) -> int:
        return len(self.gold.split())

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def noise_ratio(self) -> float:
        """The current text's noise ratio to the gold (:func:`blindspot.noise.noise_ratio`)."""
        return noise_ratio(self.gold, self.text)

    def relative(self, score: float) -> float | None:
        """``score`` relative to the gold's, in percent (None when the gold scores 0 or NaN)."""
        return relative_change(self.gold_score, score)


Objective = Callable[[Sequence[str], Sequence[str], Sequence[str | None]], list[float]]
CandidateSource = Callable[[list[str], int], list[str]]


class EmptyBudgetError(ValueError):
    """The call budget is smaller than any single search step: the search could score nothing."""


@dataclass
class Budget:
    """The search's limits and what was used of them."""

    max_calls: int | None = None
    max_seconds: float | None = None
    calls_used: int = 0
    stopped_by: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"max_calls": self.max_calls, "max_seconds": self.max_seconds,
                "calls_used": self.calls_used, "stopped_by": self.stopped_by}


def operations(state: Hypothesis, sources: Sequence[CandidateSource]) -> list[Operation]:
    """Every deletion and replacement of a word not replaced yet, in word order."""
    ops: list[Operation] = []
    for index, word in enumerate(state.words):
        if state.origin[index] in state.replaced:
            continue
        if len(state.words) > 1:
            ops.append(Operation("delete", index, word))
        for new, source in replacements(list(sources), state.words, index):
            ops.append(Operation("replace", index, word, new, source))
    return ops


def step_candidates(state: Hypothesis, sources: Sequence[CandidateSource]
                    ) -> tuple[list[Operation], list[str], list[int]]:
    """The operations that raise the edit distance to the gold, one per distinct text:
    (operations, texts, distances)."""
    seen: dict[str, int] = {}
    ops, texts, distances = [], [], []
    for op in operations(state, sources):
        words = op.apply(state.words)
        text = " ".join(words)
        if text in seen:
            continue
        distance = word_distance(state.gold, text)
        seen[text] = distance
        if distance > state.distance:
            ops.append(op)
            texts.append(text)
            distances.append(distance)
    return ops, texts, distances


def pick_best(scores: Sequence[float], rng: random.Random) -> int:
    """Index of the highest score (NaN never wins); exact ties broken by ``rng``."""
    finite = [s if not math.isnan(s) else -math.inf for s in scores]
    best = max(finite)
    tied = [i for i, s in enumerate(finite) if s == best]
    return tied[0] if len(tied) == 1 else rng.choice(tied)


def _apply(state: Hypothesis, op: Operation, score: float, distance: int) -> None:
    """Apply the chosen edit to ``state`` and record it in the trail."""
    before = state.score
    position = state.origin[op.index]
    state.words = op.apply(state.words)
    if op.kind == "delete":
        state.origin = state.origin[:op.index] + state.origin[op.index + 1:]
    else:
        state.replaced.add(position)
    state.distance, state.score = distance, score
    change = state.relative(score)
    previous = state.relative(before)
    state.trail.append({
        "step": len(state.trail) + 1, "op": op.kind, "position": position, "old": op.old,
        "new": op.new, "source": op.source, "pattern": classify(op.old, op.new),
        "score": score, "relative_change": change,
        "score_change": None if change is None or previous is None else change - previous,
        "noise_ratio": state.noise_ratio, "text": state.text})


def _progress(states: Sequence[Hypothesis], target: float, enabled: bool) -> Any:
    if not enabled:
        return None

    total = sum(math.ceil(target * s.gold_words) for s in states if s.status == "running")
    return progress_bar(total=total, desc="search", unit="edit", file=sys.stderr)


def greedy_search(states: list[Hypothesis], objective: Objective,
                  sources: Sequence[CandidateSource], target: float, budget: Budget,
                  seed: int = 0, progress: bool = False) -> list[Hypothesis]:
    """Run the search on ``states`` (scored golds) in lockstep until every one has stopped.

    ``objective(texts, golds, sources)`` returns higher-is-better scores; ``sources`` propose
    replacement words; ``budget`` is updated in place (calls used, what stopped the search).
    """
    if not 0 < target <= 1:
        raise ValueError(f"noise_ratio must be in (0, 1], got {target!r}")
    rngs = {id(s): random.Random(row_key(seed, "search", f"{target:g}", s.id)) for s in states}
    for state in states:
        if state.status == "running" and state.noise_ratio >= target:
            state.status = "reached"
    bar = _progress(states, target, progress)
    started = time.monotonic()
    while any(s.status == "running" for s in states):
        running = [s for s in states if s.status == "running"]
        if budget.max_seconds is not None and time.monotonic() - started >= budget.max_seconds:
            budget.stopped_by = "max_seconds"
            for state in running:
                state.status = "budget"
            break
        batch: list[tuple[Hypothesis, list[Operation], list[str], list[int]]] = []
        for position, state in enumerate(running):
            ops, texts, distances = step_candidates(state, sources)
            if not texts:
                state.status = "no_candidates"
                continue
            if budget.max_calls is not None and budget.calls_used + len(texts) > budget.max_calls:
                if budget.calls_used == 0 and not batch:
                    if bar is not None:  # the message alone, no empty bar above it
                        bar.leave = False
                        bar.close()
                    raise EmptyBudgetError(
                        f"the call budget max_calls={budget.max_calls} is smaller than one search "
                        f"step: the first step of row {state.id!r} scores {len(texts)} candidate "
                        f"texts (each of its words deleted, or replaced by each candidate), one "
                        f"metric call each; give max_calls at least {len(texts)} (or leave it "
                        f"unset for no call limit)")
                budget.stopped_by = "max_calls"
                for rest in running[position:]:
                    rest.status = "budget"
                break
            budget.calls_used += len(texts)
            state.calls += len(texts)
            batch.append((state, ops, texts, distances))
        if not batch:
            continue
        texts = [t for _, _, ts, _ in batch for t in ts]
        golds = [s.gold for s, _, ts, _ in batch for _ in ts]
        srcs = [s.source for s, _, ts, _ in batch for _ in ts]
        scores = iter(objective(texts, golds, srcs))
        for state, ops, step_texts, distances in batch:
            step_scores = [next(scores) for _ in step_texts]
            best = pick_best(step_scores, rngs[id(state)])
            _apply(state, ops[best], step_scores[best], distances[best])
            if state.noise_ratio >= target:
                state.status = "reached"
            if bar is not None:
                bar.update(1)
                bar.set_postfix(calls=budget.calls_used)
        if budget.stopped_by is not None:
            for state in states:
                if state.status == "running":
                    state.status = "budget"
            break
    if bar is not None:
        bar.close()
    return states
