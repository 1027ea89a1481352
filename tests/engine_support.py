"""Shared test support: resources every registered test can run with, built offline."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from conftest import SHARED_DATA

from blindspot.parsing import ParsedText


def wmt21_rows(n: int) -> list[dict[str, Any]]:
    """The first ``n`` WMT21 de-en rows of the shared data (read in place, never copied)."""
    with open(SHARED_DATA / "wmt21_de_en_translation.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in itertools.islice(fh, n)]


def cnndm_rows(n: int) -> list[dict[str, Any]]:
    """The first ``n`` CNN/DM rows of the shared data (read in place, never copied)."""
    rows = []
    with open(SHARED_DATA / "cnndm_summeval100_summarization.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rows.append(json.loads(line))
            if len(rows) == n:
                break
    return rows


def write_cnndm_gold(path: Path, n: int, keys: tuple[str, ...] = ("id", "gold", "references")
                     ) -> Path:
    """The first ``n`` CNN/DM rows, with only ``keys``, as a JSON-lines file at ``path``."""
    with open(path, "w", encoding="utf-8") as fh:
        for row in cnndm_rows(n):
            fh.write(json.dumps({k: row[k] for k in keys}) + "\n")
    return path


def wikitext_references(n: int) -> list[str]:
    out = []
    with open(SHARED_DATA / "wikitext103_open_ended.jsonl", encoding="utf-8") as fh:
        for line in fh:
            out.append(json.loads(line)["reference"])
            if len(out) == n:
                break
    return out


def build_tiny_mlm(folder: Path) -> str:
    """A randomly initialised 2-layer BERT masked LM with MiniLM's real tokenizer, saved to ``folder``.

    No real masked LM exists offline; tests on it assert only what holds for any weights.
    """
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from blindspot.models import resolve_model

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("minilm"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=512)
    BertForMaskedLM(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def first_level(cls: Any) -> Any:
    """The first paper level of a test, on any task."""
    for levels in cls.levels.values():
        if levels:
            return levels[0]
    return no_paper_level(cls)


def no_paper_level(cls: Any) -> Any:
    """The level of a test that no task of the catalogue runs (the checklist's dialogue-only
    tests): its first named variant, else "-"."""
    return getattr(cls.level_kind, "options", ("-",))[0]


def all_levels(cls: Any) -> list[Any]:
    """Every distinct paper level of a test, over all tasks, in first-seen order."""
    seen: dict[str, Any] = {}
    for levels in cls.levels.values():
        for level in levels:
            seen.setdefault(str(level), level)
    return list(seen.values()) or [no_paper_level(cls)]


def tiled_parse(parsed: ParsedText, times: int) -> ParsedText:
    """``parsed`` repeated ``times`` times, joined by spaces, as if spaCy had parsed the whole
    (a 100k-character parse without running spaCy on it)."""
    width = len(parsed.text) + 1
    count = len(parsed.tokens)
    tokens = []
    for copy in range(times):
        for tok in parsed.tokens:
            ws = " " if tok.i == count - 1 and copy < times - 1 else tok.ws
            tokens.append(tok._replace(i=tok.i + copy * count, idx=tok.idx + copy * width,
                                       head=tok.head + copy * count, ws=ws,
                                       sent_start=tok.sent_start or (tok.i == 0)))
    return ParsedText(" ".join([parsed.text] * times), tuple(tokens))
