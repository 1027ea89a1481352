"""A result's signature, as sacrebleu prints one: what produced a metric's numbers, in one line.

::

    blindspot:0.1.0|metric:bertscore.f1|model:minilm@1f2e3d4c5b6a|opts:lang=en|prec:fp32|dev:cpu|
    torch:2.5.1|tf:4.46.3|lib:bert-score-0.3.13|seeds:1,2

(one line in a file). Every key is always there, in :data:`KEYS` order, ``-`` where it does
not apply:

=========== ===============================================================================
key         value
=========== ===============================================================================
blindspot   this package's version
metric      the metric and the output judged (``rouge.rougeL``)
model       the model as named (a local folder: its folder's name) ``@`` its revision
            (:func:`blindspot.models.portable_revision`: a Hub snapshot's commit, else a hash
            of the folder's file names, sizes and configs; ``-`` when not known)
opts        the scorer's options as its score cache keys them, less the model and the
            precision: ``name=value`` sorted by name, joined by ``,`` (:func:`option_text`)
prec        the precision the model computes in (``auto`` resolved; fp32 when none is asked)
dev         the device kind (``cpu``, ``cuda``, ``mps``), never an index or a card's name
torch, tf   the versions of torch and transformers installed
lib         the library that computes the score and its version (``sacrebleu-2.4.3``)
seeds       the run's seeds, comma-separated
=========== ===============================================================================

``prec``, ``dev``, ``torch`` and ``tf`` are ``-`` for a metric that runs no model here (a lexical
metric, a judge behind an API, a user's function or module); ``lib`` is ``-`` for a metric this
package computes itself.

The same settings give the same string, byte for byte, on any machine: nothing in it depends on
where files lie, the time, the host or the card (a run on a CUDA card and one on a CPU differ in
``dev``, as their numbers may). An LLM judge behind a server is the one exception: the server
computed its grades, so its options name it as the score cache keys it (``server``: the
endpoint's scheme, host, port and path; ``served``: the model id it lists; ``fingerprint``: its
``system_fingerprint``; ``mode``: the mode that ran). No secret reaches it: the options are those
of the score cache's key, which holds no key and no user info (a URL with either is refused), and
an option whose name says it holds a secret or an address (the judge's ``url`` as given, the
key's variable) is left out all the same. Scores served from the cache count as computed with
the settings shown (the cache keys precision, not the device).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import astuple, dataclass, fields
from importlib import metadata
from pathlib import Path
from typing import Any

from blindspot import __version__
from blindspot.models import offline_name, portable_revision
from blindspot.scoring.scorer import Scorer

#: a value that does not apply
NONE = "-"
#: what a value written bare may hold; any other is JSON-quoted (so ``|`` and ``,`` never split)
_BARE = re.compile(r"^[A-Za-z0-9_.+\-]+$")
#: options never shown, whatever a scorer keeps: secrets and addresses
_HIDDEN = re.compile(r"(key|secret|password|token$|url|host|endpoint)", re.IGNORECASE)
#: a list with more items than this (or an option that is a mapping) is shown by its hash
_LIST_ITEMS = 8


@dataclass(frozen=True)
class Signature:
    """The fields of a signature, in :data:`KEYS` order; ``str()`` is the one-line form."""

    blindspot: str
    metric: str
    model: str
    opts: str
    prec: str
    dev: str
    torch: str
    tf: str
    lib: str
    seeds: str

    def __str__(self) -> str:
        return "|".join(f"{key}:{value}" for key, value in zip(KEYS, astuple(self), strict=True))


#: the keys of a signature, in the order written
KEYS: tuple[str, ...] = tuple(f.name for f in fields(Signature))


def parse_signature(text: str) -> dict[str, str]:
    """A signature's ``key -> value`` (values are never split: a key ends at its first ``:``)."""
    pairs = dict(part.split(":", 1) for part in text.split("|"))
    if tuple(pairs) != KEYS:
        raise ValueError(f"not a signature (keys {', '.join(KEYS)} in that order): {text!r}")
    return pairs


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return NONE


def _is_path(value: str) -> bool:
    return ("/" in value or "\\" in value) and Path(value).exists()


def _value(value: Any) -> str:
    """One option's value: bare when it is a plain word, JSON otherwise; a path as its file's
    name; a long list or a mapping as ``sha:`` and 12 hex digits of its JSON."""
    if isinstance(value, (list, tuple)) and len(value) <= _LIST_ITEMS \
            and all(isinstance(v, (str, int, float, bool)) or v is None for v in value):
        return "+".join(_value(v) for v in value) if value else "[]"
    if isinstance(value, (list, tuple, dict)):
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
        return "sha:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    if isinstance(value, str):
        text = Path(value).name if _is_path(value) else value
        return text if _BARE.match(text) else json.dumps(text, ensure_ascii=False)
    return json.dumps(value, default=str)


def hidden(option: str) -> bool:
    """Whether an option is never shown or written (a secret or an address: ``url``, keys)."""
    return bool(_HIDDEN.search(option))


def option_text(options: Mapping[str, Any], leave_out: Iterable[str | None] = ()) -> str:
    """Options as a signature shows them: ``name=value`` sorted by name, joined by ``,``."""
    skip = set(leave_out)
    shown = [f"{name}={_value(value)}" for name, value in sorted(options.items())
             if name not in skip and not hidden(name)]
    return ",".join(shown) or NONE


def _model(scorer: Scorer) -> str:
    """``name@revision``: an offline model by its short name, a local folder by its own name."""
    given = scorer.config.get(scorer.model_option) if scorer.model_option else None
    if given is None:
        return NONE
    name = str(given)
    if _is_path(name):
        name = offline_name(name) or Path(name).name
    weights = scorer.weights()
    return f"{_value(name)}@{NONE if weights is None else portable_revision(weights)}"


def metric_signature(scorer: Scorer, output: str, seeds: Iterable[int]) -> str:
    """The signature of ``scorer``'s ``output`` in a run with ``seeds``."""
    config = scorer.identity_config()
    device = scorer.device_kind()
    runs_here = device is not None
    library = scorer.library
    return str(Signature(
        blindspot=__version__,
        metric=_value(f"{scorer.name}.{output}" if output else scorer.name),
        model=_model(scorer),
        opts=option_text(config, (scorer.model_option, "precision")),
        prec=str(config.get("precision") or "fp32") if runs_here else NONE,
        dev=device or NONE,
        torch=_version("torch") if runs_here else NONE,
        tf=_version("transformers") if runs_here else NONE,
        lib=f"{library}-{_version(library)}" if library else NONE,
        seeds=",".join(str(int(s)) for s in seeds) or NONE))


__all__ = ["KEYS", "NONE", "Signature", "hidden", "metric_signature", "option_text",
           "parse_signature"]
