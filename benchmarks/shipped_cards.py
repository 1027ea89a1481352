"""The shipped report cards (issue 42): the card of every shipped metric that runs offline here,
written into ``blindspot/cards/<name>/`` (``results.json`` and ``card.md``), which the leaderboard
shows by default (``blindspot card --leaderboard``, the Space's leaderboard tab).

Each card is ``blindspot card METRIC`` on the demo tasks the metric applies to, with the human
agreement on SummEval's expert judgments (``summeval_expert_judgments.jsonl`` and its references
``cnndm_summeval100_summarization.jsonl`` from ``$BLINDSPOT_DATA``, else ``../shared/data``).
The lexical metrics are judged on every demo row with seeds 1-3 and all 100 SummEval documents;
the model metrics (MiniLM, SmolLM2) on the demo's model cells (the first 8 rows, seed 1) and the
first 20 documents, as ``blindspot demo`` judges them. The runs keep their state in
``build/cards-state``, so a second run only re-judges.

Regenerate the cards when the verdict rules, a metric or the data change (``tests/
test_card_shipped.py`` says which lexical cards are stale)::

    make cards                                          # every card
    .venv/bin/python benchmarks/shipped_cards.py --only rouge,chrf
    .venv/bin/python benchmarks/shipped_cards.py --lexical --check   # stale ones, exit 1

Prints each card's time and the total.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blindspot.cards import SHIPPED_CARDS
from blindspot.protocols.card import read_card, stale_inputs
from blindspot.protocols.interface import ProtocolRequest, get_protocol
from blindspot.report.card_report import CARD_FILE, render_card
from blindspot.report.files import RESULTS_FILE, ReportFiles, write_folder

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BLINDSPOT_DATA", ROOT.parent / "shared" / "data"))
JUDGMENTS = "summeval_expert_judgments.jsonl"
REFERENCES = "cnndm_summeval100_summarization.jsonl"
STATE = ROOT / "build" / "cards-state"


@dataclass(frozen=True)
class Shipped:
    """One shipped card: its folder's name, the metric as ``blindspot card`` takes it, its
    metric options, and whether it scores with a model (judged on the model cells)."""

    name: str
    metric: str
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    model: bool = False


CARDS = (
    Shipped("rouge.rougeL", "rouge"),
    Shipped("rouge.rouge1", "rouge.rouge1"),
    Shipped("rouge.rouge2", "rouge.rouge2"),
    Shipped("rouge.rougeLsum", "rouge.rougeLsum"),
    Shipped("rouge.rougeW", "rouge.rougeW"),
    Shipped("rouge.rougeSU4", "rouge.rougeSU4"),
    Shipped("bleu", "bleu"),
    Shipped("bleu_n.bleu1", "bleu_n.bleu1"),
    Shipped("chrf", "chrf"),
    Shipped("chrf++", "chrf", {"chrf": {"word_order": 2}}),
    Shipped("ter", "ter"),
    Shipped("meteor", "meteor"),
    Shipped("google_bleu", "google_bleu"),
    Shipped("nist_mt", "nist_mt"),
    Shipped("cider", "cider"),
    Shipped("qbleu.qbleu4", "qbleu"),
    Shipped("qbleu.qrougeL", "qbleu.qrougeL"),
    Shipped("parent", "parent"),
    Shipped("rep_ngram", "rep_ngram"),
    Shipped("ngram_entropy", "ngram_entropy"),
    Shipped("bertscore.f1@minilm", "bertscore@minilm", model=True),
    Shipped("moverscore@minilm", "moverscore@minilm", model=True),
    Shipped("embedding_average@minilm", "embedding_average@minilm", model=True),
    Shipped("greedy_matching@minilm", "greedy_matching@minilm", model=True),
    Shipped("gpt_ppl@smollm2", "gpt_ppl@smollm2", model=True),
)

#: the settings of each kind of card (the card protocol's options, and the request's seeds)
LEXICAL = {"seeds": [1, 2, 3], "options": {"checkup_rows": 8}}
MODEL = {"seeds": [1], "options": {"rows": 8, "checkup_rows": 8, "human_documents": 20}}


def request(card: Shipped, human: bool) -> Any:
    """The card protocol's request of a shipped card."""
    settings = MODEL if card.model else LEXICAL
    options = {**settings["options"], "state_dir": str(STATE / card.name)}
    if human:
        options.update(human=str(DATA / JUDGMENTS), human_references=str(DATA / REFERENCES))
    return ProtocolRequest("demo", card.metric, tests="all", seeds=settings["seeds"],
                           metric_options=card.options or None, progress=False, options=options)


def stale(card: Shipped, folder: Path) -> dict[str, Any] | None:
    """What changed since the shipped card was written ({}: current), None when it is missing."""
    path = folder / card.name / RESULTS_FILE
    found = read_card(path) if path.is_file() else None
    if found is None:
        return None
    return stale_inputs(found, human=DATA / JUDGMENTS, human_references=DATA / REFERENCES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated card names (default: every card)")
    parser.add_argument("--lexical", action="store_true", help="the lexical metrics' cards only")
    parser.add_argument("--check", action="store_true", help="write nothing: name the stale or "
                        "missing cards and exit 1 when there is one")
    parser.add_argument("--render", action="store_true", help="only write each card's card.md "
                        "again from its results.json (after a change to how a card reads)")
    parser.add_argument("--out", type=Path, default=SHIPPED_CARDS, help="the cards' folder")
    args = parser.parse_args(argv)
    chosen = [c for c in CARDS if (not args.only or c.name in args.only.split(","))
              and not (args.lexical and c.model)]
    human = (DATA / JUDGMENTS).is_file() and (DATA / REFERENCES).is_file()
    if not human:
        print(f"error: {DATA / JUDGMENTS} or {REFERENCES} is missing: set BLINDSPOT_DATA to the "
              "folder with SummEval's judgments", file=sys.stderr)
        return 1
    if args.render:
        for card in chosen:
            path = args.out / card.name / RESULTS_FILE
            if path.is_file() and (found := read_card(path)) is not None:
                write_folder(ReportFiles(found, {CARD_FILE: render_card(found)}), path.parent)
        return 0
    if args.check:
        problems = {c.name: stale(c, args.out) for c in chosen}
        for name, changed in problems.items():
            print(f"{name}: " + ("missing" if changed is None else
                                 "stale: " + ", ".join(changed) if changed else "current"))
        return 1 if any(c is None or c for c in problems.values()) else 0
    protocol = get_protocol("card")
    started = time.perf_counter()
    for card in chosen:
        start = time.perf_counter()
        result = protocol.run(request(card, human))
        protocol.report(result, args.out / card.name)
        print(f"{card.name}: {time.perf_counter() - start:.0f} s; "
              + "; ".join(result.summary.values()), flush=True)
    print(f"{len(chosen)} cards in {time.perf_counter() - started:.0f} s, written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
