"""Parse once: the spaCy analysis of a text, computed once and reused everywhere.

Every perturbation, level and seed reads the same :class:`ParsedText`, a light, picklable copy
of what spaCy found (tokens, POS, tags, lemmas, dependencies, sentences, entities). Parses are
kept in memory for the process and on disk in an SQLite file keyed by the text's hash and the
spaCy model's name and version, so a second run, or another process, never parses a text again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from blindspot.forking import worker_context
from blindspot.models import load_spacy
from blindspot.paths import cache_dir
from blindspot.sqlite_utils import KeyValueStore

_FIELDS = ("text", "ws", "idx", "pos", "tag", "lemma", "dep", "head", "is_stop", "sent_start",
           "ent_iob", "ent_type")


class Token(NamedTuple):
    """One spaCy token, as plain values."""

    i: int
    text: str
    ws: str  # trailing whitespace
    idx: int  # character offset in the text
    pos: str
    tag: str
    lemma: str
    dep: str
    head: int
    is_stop: bool
    sent_start: bool
    ent_iob: str
    ent_type: str


@dataclass(frozen=True)
class ParsedText:
    """A text and its spaCy analysis, detached from spaCy so it pickles and caches cheaply."""

    text: str
    tokens: tuple[Token, ...]

    @cached_property
    def sents(self) -> tuple[tuple[int, int], ...]:
        """Sentences as [start, end) token ranges."""
        starts = [t.i for t in self.tokens if t.sent_start or t.i == 0]
        if not starts:  # an empty text has no sentence
            return ()
        ends = starts[1:] + [len(self.tokens)]
        return tuple(zip(starts, ends, strict=True))

    @cached_property
    def sentence_texts(self) -> tuple[str, ...]:
        """Each sentence's text without its trailing whitespace."""
        return tuple(self.span_text(s, e).strip() for s, e in self.sents)

    @cached_property
    def ents(self) -> tuple[tuple[int, int, str], ...]:
        """Named entities as [start, end) token ranges with their label."""
        spans: list[tuple[int, int, str]] = []
        start = None
        label = ""
        for tok in self.tokens:
            if tok.ent_iob == "B" or (tok.ent_iob == "I" and start is None):
                if start is not None:
                    spans.append((start, tok.i, label))
                start, label = tok.i, tok.ent_type
            elif tok.ent_iob != "I" and start is not None:
                spans.append((start, tok.i, label))
                start = None
        if start is not None:
            spans.append((start, len(self.tokens), label))
        return tuple(spans)

    def span_text(self, start: int, end: int) -> str:
        """The original characters of tokens [start, end), with inner whitespace."""
        if start >= end:
            return ""
        first, last = self.tokens[start], self.tokens[end - 1]
        return self.text[first.idx: last.idx + len(last.text) + len(last.ws)]

    def to_doc(self, vocab: Any) -> Any:
        """Rebuild a spaCy ``Doc`` from the stored analysis, without running the pipeline."""
        from spacy.tokens import Doc

        toks = self.tokens
        ents = [f"{t.ent_iob}-{t.ent_type}" if t.ent_iob in "BI" and t.ent_type else "O"
                for t in toks]
        return Doc(
            vocab,
            words=[t.text for t in toks],
            spaces=[bool(t.ws) for t in toks],
            pos=[t.pos for t in toks],
            tags=[t.tag for t in toks],
            lemmas=[t.lemma for t in toks],
            deps=[t.dep for t in toks],
            heads=[t.head for t in toks],
            sent_starts=[t.sent_start or t.i == 0 for t in toks],
            ents=ents,
        )

    # -- (de)serialisation -------------------------------------------------------------------

    def to_json(self) -> str:
        columns = {f: [getattr(t, f) for t in self.tokens] for f in _FIELDS}
        columns["is_stop"] = [int(x) for x in columns["is_stop"]]
        columns["sent_start"] = [int(x) for x in columns["sent_start"]]
        return json.dumps({"t": self.text, "c": columns}, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, payload: str) -> ParsedText:
        data = json.loads(payload)
        cols = data["c"]
        n = len(cols["text"])
        tokens = tuple(
            Token(i, cols["text"][i], cols["ws"][i], cols["idx"][i], cols["pos"][i], cols["tag"][i],
                  cols["lemma"][i], cols["dep"][i], cols["head"][i], bool(cols["is_stop"][i]),
                  bool(cols["sent_start"][i]), cols["ent_iob"][i], cols["ent_type"][i])
            for i in range(n)
        )
        return cls(data["t"], tokens)

    @classmethod
    def from_doc(cls, doc: Any) -> ParsedText:
        tokens = tuple(
            Token(t.i, t.text, t.whitespace_, t.idx, t.pos_, t.tag_, t.lemma_, t.dep_, t.head.i,
                  bool(t.is_stop), bool(t.is_sent_start) if t.i else True, t.ent_iob_, t.ent_type_)
            for t in doc
        )
        return cls(doc.text, tokens)


class Parser:
    """spaCy parsing with an in-memory and an on-disk cache; loads the model on first use."""

    def __init__(self, model: str = "en_core_web_sm", cache_path: Path | None = None,
                 use_disk: bool = True, batch_size: int = 64):
        self.model = model
        self.batch_size = batch_size
        self._nlp: Any = None
        self._memory: dict[str, ParsedText] = {}
        self._store = (KeyValueStore(cache_path or cache_dir() / "parses.sqlite", "parses_v1",
                                     derived=True)
                       if use_disk else None)

    @property
    def nlp(self) -> Any:
        if self._nlp is None:

            self._nlp = load_spacy(self.model)
        return self._nlp

    @cached_property
    def version(self) -> str:
        """Model identity used in cache keys: a parse from another model version is never reused."""
        import spacy

        meta = self.nlp.meta
        return f"{meta.get('lang')}_{meta.get('name')}-{meta.get('version')}/spacy-{spacy.__version__}"

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.version}\x1f{text}".encode()).hexdigest()

    def parse(self, text: str) -> ParsedText:
        return self.parse_many([text])[0]

    def forget(self) -> None:
        """Drop the parses kept in memory (the disk cache keeps them): bounded memory when
        a stream of texts is parsed chunk by chunk."""
        self._memory.clear()

    def parse_many(self, texts: Sequence[str], num_proc: int | None = None) -> list[ParsedText]:
        """Parses of ``texts`` in order; each distinct text is parsed at most once, ever.

        ``num_proc`` > 1 parses the texts missing from both caches in that many processes
        (the same parses, in order).
        """
        missing = [t for t in dict.fromkeys(texts) if t not in self._memory]
        if missing:
            self._fill(missing, num_proc or 1)
        return [self._memory[t] for t in texts]

    def _fill(self, texts: list[str], num_proc: int = 1) -> None:
        keys = {t: self.key(t) for t in texts}
        stored = self._store.get_many(list(keys.values())) if self._store is not None else {}
        todo = []
        for text in texts:
            payload = stored.get(keys[text])
            if payload is not None:
                self._memory[text] = ParsedText.from_json(payload)
            else:
                todo.append(text)
        if not todo:
            return
        fresh = []
        for text, payload in zip(todo, self._parse(todo, num_proc), strict=True):
            self._memory[text] = ParsedText.from_json(payload)
            fresh.append((keys[text], payload))
        if self._store is not None:
            self._store.put_many(fresh, replace=False)

    def _parse(self, texts: list[str], num_proc: int) -> Iterator[str]:
        """The stored form (JSON) of each text's parse, in order, in ``num_proc`` processes.

        Workers send back that compact form, not spaCy Docs (whose tensors make them large to
        pickle); a pool only pays off beyond a few batches per worker.
        """
        shards = _shards(texts, num_proc * 4) if len(texts) >= 4 * num_proc * self.batch_size \
            else []
        if len(shards) < 2:
            yield from _parse_json(self.nlp, texts, self.batch_size)
            return


        _WORKER["nlp"] = self.nlp  # a forked worker inherits the loaded pipeline
        with ProcessPoolExecutor(num_proc, mp_context=worker_context(), initializer=_set_nlp,
                                 initargs=(self.model,)) as pool:
            for payloads in pool.map(_parse_shard, shards, [self.batch_size] * len(shards)):
                yield from payloads

    def __getstate__(self) -> dict[str, Any]:
        # Worker processes get the settings and the disk store, not the loaded model.
        return {"model": self.model, "batch_size": self.batch_size, "_store": self._store,
                "_memory": {}, "_nlp": None}


_PARSERS: dict[str, Parser] = {}
#: the pipeline of a parsing worker process
_WORKER: dict[str, Any] = {}


def _shards(texts: list[str], count: int) -> list[list[str]]:
    size = -(-len(texts) // count)
    return [texts[i: i + size] for i in range(0, len(texts), size)]


def _parse_json(nlp: Any, texts: Sequence[str], batch_size: int) -> Iterator[str]:
    for doc in nlp.pipe(texts, batch_size=batch_size):
        yield ParsedText.from_doc(doc).to_json()


def _set_nlp(model: str) -> None:
    """A parsing worker's pipeline: the parent's when forked, else loaded here (spawned)."""
    if "nlp" not in _WORKER:

        _WORKER["nlp"] = load_spacy(model)


def _parse_shard(texts: list[str], batch_size: int) -> list[str]:
    return list(_parse_json(_WORKER["nlp"], texts, batch_size))


def get_parser(model: str = "en_core_web_sm") -> Parser:
    """The process-wide parser for ``model`` (one spaCy pipeline per process)."""
    if model not in _PARSERS:
        use_disk = os.environ.get("BLINDSPOT_PARSE_CACHE", "1") != "0"
        _PARSERS[model] = Parser(model, use_disk=use_disk)
    return _PARSERS[model]
