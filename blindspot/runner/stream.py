"""Chunked runs of the main job: any number of rows in bounded memory on one machine.

``blindspot run --chunk-size N`` (``run_blindspot(..., chunk_size=N)``, the rank protocol's
``chunk_size`` option) reads a local JSON-lines or Parquet file ``N`` rows at a time. This module
only reads the file (:func:`streamed_source`: the chunks, checked as they come, and the
fingerprint of the whole file made as they pass) and declares what a chunked run cannot do; the
run itself is the one of data loaded whole (:func:`blindspot.runner.pipeline.run_dataset`, which reads
such data as one chunk): each chunk is perturbed for every cell, scored with every metric through
the run state and the score cache, its per-row values spilled to disk, and each metric judged one
test at a time at the end. Every test draws its randomness per row (seed, test, level, row id),
so chunking changes no perturbation, and ``results.json`` and the report are byte-identical to
those of the run without chunks on the same data, seeds and metrics, whatever the chunk size
(``tests/test_one_pipeline.py``). A killed chunked run resumes like any run: each cell's scores
are in the run state (the chunk in progress's perturbed cells too; a finished chunk's are removed,
:mod:`blindspot.runner.state`, and perturbed again on resume).

What cannot be read in chunks, and what happens instead:

* tests that draw other rows from the whole dataset (``requires=("pool",)``: injection,
  random_response, random_sentence_addition, sentence_replacement) are skipped, with the reason in
  ``skipped_tests`` (printed with the summary). A first pass could collect the pool, but the pool
  is every gold text: memory would grow with the rows again.
* the open-ended n-gram corpus that the whole run builds from all references is not built
  (same reason); frequent_ngram then needs ``--ngram-corpus``, else it is skipped with the reason.
* corpus-level metrics (MAUVE), and metrics that weight words by idf over all references
  (``bertscore.idf=true``), are refused with an error naming the metric, before any model loads.
* the data must be a local ``.jsonl`` or ``.parquet`` file; any other source (a Hub id, ``demo``,
  a Dataset, csv) is refused with a clear error. ``--num-proc N`` parses and perturbs each chunk
  in N processes; ``--engine ray`` perturbs and scores each chunk on Ray (the same plan, the same
  bytes).

Limits: memory holds one chunk's rows and one of its perturbed cells at a time (the cells are
read back from the run state one by one; ``--engine ray`` and a model metric's forecast hold every
pending text of a chunk); the run state grows with the rows by their scores only. An error
message that names a row by its position (e.g. ``predictions[3] must be a string``) counts within
the chunk. Neural metrics whose scores depend
on their batch's other texts (padding, BERTScore's embedding cache) batch per chunk, so their
last bits may differ from the whole run. Values read from a JSON-lines file are the JSON values
themselves; the whole run reads them through Arrow, which may convert a column of mixed ints and
floats, so such a column's fingerprint differs.

    >>> check_chunk_size(500)
    500
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from blindspot import defaults
from blindspot.io import check_readable, json_rows, unreadable
from blindspot.perturbations.dataset import SuitePlan, plan_suite
from blindspot.perturbations.perturbation import REGISTRY
from blindspot.perturbations.suites import suite_tests
from blindspot.runner.chunks import Chunk, DataSource
from blindspot.runner.data import ColumnNames, check_role_texts, machine_resources, resolve_columns
from blindspot.runner.scorers import _idf_on, _named_model
from blindspot.scoring.scorer import SCORERS
from blindspot.seeding import text_row_id

DEFAULT_CHUNK_SIZE = defaults.CHUNK_SIZE
STREAM_FORMATS = (".jsonl", ".parquet")

#: why a test that needs a resource drawn from the whole dataset is skipped by a streamed run
UNSTREAMED = {
    "pool": "draws other rows' texts from the whole dataset (a pool), which a streamed run "
            "(--chunk-size) never holds; run without --chunk-size to include it",
}


def check_chunk_size(chunk_size: Any) -> int:
    """``chunk_size`` as a whole number of rows, at least 1, or a clear error."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"--chunk-size must be a whole number of rows, at least 1; got "
                         f"{chunk_size!r}")
    return chunk_size


def stream_path(source: Any) -> Path:
    """The local file a streamed run reads, or a clear error for any other kind of source."""
    path = Path(source) if isinstance(source, (str, Path)) else None
    if path is None or path.suffix.lower() not in STREAM_FORMATS:
        shown = str(source) if isinstance(source, (str, Path)) else type(source).__name__
        raise ValueError(f"--chunk-size streams a local .jsonl or .parquet file, not {shown!r}; "
                         "convert the data to one (e.g. Dataset.to_json('rows.jsonl')) or run "
                         "without --chunk-size")
    check_readable(path)
    return path


def iter_chunks(path: str | Path, chunk_size: int) -> Iterator[dict[str, list[Any]]]:
    """The file's rows ``chunk_size`` at a time, as columns; never the whole file at once."""
    path = Path(path)
    check_readable(path)
    check_chunk_size(chunk_size)
    if path.suffix.lower() == ".parquet":
        try:
            table = pq.ParquetFile(path)
        except Exception as error:  # noqa: BLE001  (any reader error: the file is unreadable)
            raise unreadable(path, "parquet", error) from error
        for batch in table.iter_batches(batch_size=chunk_size):
            yield batch.to_pydict()
        return
    rows: list[dict[str, Any]] = []
    for row in json_rows(path):
        rows.append(row)
        if len(rows) == chunk_size:
            yield _columns(rows)
            rows = []
    if rows:
        yield _columns(rows)


def _columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    names = list(dict.fromkeys(k for row in rows for k in row))
    return {name: [row.get(name) for row in rows] for name in names}


def count_rows(path: Path) -> int:
    """How many rows the file has (for the progress bar), without parsing them."""
    if path.suffix.lower() == ".parquet":
        return pq.ParquetFile(path).metadata.num_rows
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def corpus_level_refusal(spec: Any) -> str:
    """Why a corpus-level metric cannot run on a file read in chunks."""
    return (f"metric {spec.name!r} is corpus-level: its score needs every row at once and "
            "cannot be streamed; run it without --chunk-size")


def check_streamable(specs: Sequence[Any]) -> None:
    """Refuse, before any data or model is loaded, what a streamed run cannot do."""
    for spec in specs:
        registered = SCORERS.get(spec.metric, None) if spec.module is None else None
        if registered is not None and registered.corpus_level:
            raise ValueError(corpus_level_refusal(spec))
        if registered is not None and _idf_on(spec.metric, _named_model(spec.metric,
                                                                        spec.options)):
            raise ValueError(f"metric {spec.name!r} weights words by idf over all the "
                             "references, which a streamed run never holds; switch it off "
                             f"(--option {spec.metric}.idf=false) or run without --chunk-size")


def streamed_plan(plan: Any, resources: Mapping[str, Any], order: Sequence[str]) -> Any:
    """``plan`` without the tests that draw from the whole dataset (skipped, with the reason)."""
    dropped = {item.test: UNSTREAMED[need] for item in plan.items
               for need in REGISTRY[item.test].requires
               if need in UNSTREAMED and resources.get(need) is None}
    skipped = {**plan.skipped, **dropped}
    return SuitePlan([i for i in plan.items if i.test not in dropped],
                     {t: skipped[t] for t in order if t in skipped})


class _Fingerprint:
    """:meth:`GoldData.fingerprint` of a file read chunk by chunk: each used column's values go,
    JSON-encoded, to a file of their own, hashed in the order of the whole-table JSON at the end."""

    def __init__(self, folder: Path, roles: Mapping[str, str | None]) -> None:
        self.folder, self.roles = folder, dict(roles)
        self.used = sorted(dict.fromkeys(c for c in roles.values() if c))
        self.started: set[str] = set()

    def add(self, chunk: Mapping[str, list[Any]]) -> None:
        for k, name in enumerate(self.used):
            parts = [json.dumps(v, sort_keys=True, ensure_ascii=False) for v in chunk[name]]
            text = (", " if name in self.started else "") + ", ".join(parts)
            self.started.add(name)
            with open(self.folder / f"column-{k}.json", "a", encoding="utf-8") as fh:
                fh.write(text)

    def hexdigest(self) -> str:
        digest = hashlib.sha256()
        digest.update(("[" + json.dumps(self.roles, sort_keys=True, ensure_ascii=False)
                       + ", {").encode("utf-8"))
        for k, name in enumerate(self.used):
            head = (", " if k else "") + json.dumps(name, ensure_ascii=False) + ": ["
            digest.update(head.encode("utf-8"))
            with open(self.folder / f"column-{k}.json", "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            digest.update(b"]")
        digest.update(b"}]")
        return digest.hexdigest()


def _chunk_rows(chunk: Mapping[str, list[Any]], roles: Mapping[str, str | None],
                offset: int, file: str) -> Chunk:
    check_role_texts(chunk, roles, file, first_row=offset + 1)
    texts = chunk[roles["hypothesis"] or ""]  # a loaded dataset always names its hypothesis
    ids = chunk[roles["id"]] if roles["id"] else [text_row_id(t) for t in texts]
    return Chunk(offset, texts, ids, chunk[roles["references"]] if roles["references"] else None,
                  chunk[roles["source"]] if roles["source"] else None)


def streamed_source(source: Any, name: str, settings: Any,
                    columns: Mapping[str, str | None] | None, chunk_size: int,
                    work: Path) -> DataSource:
    """A data file read ``chunk_size`` rows at a time (its fingerprint made in ``work`` as the
    rows pass), planned without what needs the whole dataset."""
    path = stream_path(source)
    chunks = iter_chunks(path, chunk_size)
    first = next(chunks, None)
    if first is None:
        raise ValueError(f"dataset {path.name!r} has no rows; nothing to perturb or score")
    roles = resolve_columns(ColumnNames(list(first)), columns)
    resources = machine_resources(settings.resources)
    plan = streamed_plan(plan_suite(settings.tests, settings.task, settings.seeds,
                                    settings.levels, resources, has_source=bool(roles["source"])),
                         resources, suite_tests(settings.tests, settings.task))
    fingerprint = _Fingerprint(work, roles)
    head = _chunk_rows(first, roles, 0, path.name)  # bad rows in the first chunk: before any work

    def rows() -> Iterator[Chunk]:
        fingerprint.add(first)
        yield head
        offset = len(head.texts)
        for chunk in chunks:
            fingerprint.add(chunk)
            part = _chunk_rows(chunk, roles, offset, path.name)
            offset += len(part.texts)
            yield part

    return DataSource(name, roles, list(first), resources, plan,
                      -(-count_rows(path) // chunk_size), rows(), fingerprint.hexdigest,
                      whole=False)


__all__ = ["DEFAULT_CHUNK_SIZE", "check_chunk_size", "check_streamable", "corpus_level_refusal",
           "iter_chunks", "stream_path", "streamed_source"]
