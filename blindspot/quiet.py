"""What the libraries under blindspot say, and what our user sees instead: the one declared place.

A library's message reaches the user only where it tells them something about their run. Each
one blindspot handles is a :class:`LibraryMessage` in :data:`MESSAGES`: who says it, how (a
``logging`` logger, a Python warning, or a print to a stream), its first words, and either our
own one line (said once per process, with what it means for the verdict) or nothing (silenced,
with why it says nothing to our user). Log records and warnings are filtered where they are made
(:func:`install_log_filters`, run when ``blindspot`` is imported: it imports none of the
libraries); printed messages are caught around the call that prints them (:func:`printed`).
Messages handled before this module existed keep their place and are listed here with it
(``handled_in``).
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LibraryMessage:
    """One library message: ``library`` says ``starts...`` through ``logger`` (a logging logger's
    name), as a Python warning (``warning``) or on ``stream`` (``stdout``/``stderr``); blindspot
    says ``ours`` instead (None: nothing), because ``why``."""

    key: str
    library: str
    starts: str
    why: str
    ours: str | None = None
    logger: str | None = None
    stream: str | None = None
    warning: bool = False
    handled_in: str = "blindspot.quiet"


_RAY_AUTH = "ray._private.authentication.authentication_token_setup"
_RAY_PROGRESS = "ray.data._internal.progress"

MESSAGES: tuple[LibraryMessage, ...] = (
    LibraryMessage("bert_score_empty", "bert_score",
                   "Warning: Empty candidate sentence detected; setting raw BERTscores to 0.",
                   why="the noise emptied a hypothesis (truncation, drops at high levels)",
                   ours="bertscore: an empty hypothesis scores 0 (bert_score's rule), the lowest "
                        "score: a test that empties texts counts them as the largest drop",
                   stream="stderr"),
    LibraryMessage("ray_auth_disabled", "ray", "Token authentication is disabled for this Ray",
                   why="the local instance `--engine ray` starts serves this machine only; a "
                       "cluster's token set-up is in docs/scale-out.md", logger=_RAY_AUTH),
    LibraryMessage("ray_auth_enabled", "ray", "Token authentication is enabled for this Ray",
                   why="a token found on this machine is used as Ray uses it; nothing to do",
                   logger=_RAY_AUTH),
    LibraryMessage("ray_progress_off", "ray", "Progress bars disabled. To enable",
                   why="blindspot turns Ray Data's bars off and shows its own", logger=_RAY_PROGRESS),
    LibraryMessage("ray_operator_progress_off", "ray", "Progress bars for operators disabled",
                   why="blindspot turns Ray Data's bars off and shows its own", logger=_RAY_PROGRESS),
    LibraryMessage("gradio_share", "gradio", "* To create a public link, set `share=True`",
                   why="the Space serves this machine; a public Space is deployed from spaces/ "
                       "(`blindspot space` launches quietly and prints its own address line)",
                   stream="stdout", handled_in="blindspot.space.app.serve"),
    LibraryMessage("starlette_422_name", "gradio",
                   "'HTTP_422_UNPROCESSABLE_ENTITY' is deprecated",
                   why="gradio 6.17 reads starlette's old name of status 422 on every queued "
                       "event (a StarletteDeprecationWarning in the Space's terminal each time); "
                       "nothing for the operator to do", warning=True),
    LibraryMessage("llama_tokenizer_legacy", "transformers",
                   "You are using the default legacy behaviour of the",
                   why="SmolLM2's tokenizer read from its GGUF file (the install step converts it "
                       "once): the notice itself says to ignore it then",
                   logger="transformers.models.llama.tokenization_llama_fast"),
    LibraryMessage("evaluate_cached_module", "evaluate",
                   "Using the latest cached version of the module",
                   why="our modules are always the cached copies install-modules wrote",
                   logger="evaluate.loading",
                   handled_in="blindspot.quiet.quiet_cached_module_notice"),
    LibraryMessage("datasets_bars", "datasets", "Generating train split",
                   why="reading the user's file is one step of ours, with its own progress",
                   stream="stderr", handled_in="blindspot.io.quiet_datasets"),
    LibraryMessage("lightning_banners", "pytorch_lightning", "GPU available",
                   why="COMET's predict banners repeat on every call",
                   logger="lightning.pytorch",
                   handled_in="blindspot.scorers.comet_score.quiet_lightning"),
    LibraryMessage("transformers_new_weights", "transformers", "Some weights of",
                   why="a checkpoint without the head a metric reads (a sentence encoder loaded "
                       "as a masked LM) is refused in one line naming the model and the head",
                   logger="transformers.modeling_utils",
                   handled_in="blindspot.models.untrained_head"),
)
BY_KEY = {message.key: message for message in MESSAGES}

_said: set[str] = set()


def say_once(key: str) -> None:
    """Our one line for ``key``'s message, the first time in this process."""
    line = BY_KEY[key].ours
    if line and key not in _said:
        _said.add(key)
        print(f"note: {line}", file=sys.stderr, flush=True)


class _Drop(logging.Filter):
    """Drops the records of one logger whose message starts with one of ``starts``."""

    def __init__(self, messages: list[LibraryMessage]) -> None:
        super().__init__()
        self.messages = messages

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        for message in self.messages:
            if text.startswith(message.starts):
                say_once(message.key)
                return False
        return True


def install_log_filters() -> None:
    """A filter on each logger of :data:`MESSAGES` handled here, and one on the warnings (both
    idempotent; imports nothing)."""
    by_logger: dict[str, list[LibraryMessage]] = {}
    for message in MESSAGES:
        if message.logger and message.handled_in == __name__:
            by_logger.setdefault(message.logger, []).append(message)
        if message.warning and message.handled_in == __name__:
            warnings.filterwarnings("ignore", message=re.escape(message.starts))
    for name, messages in by_logger.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Drop) for f in logger.filters):
            logger.addFilter(_Drop(messages))


@contextlib.contextmanager
def printed(library: str) -> Iterator[None]:
    """Around a call into ``library`` that prints: its lines of :data:`MESSAGES` become ours (or
    nothing), every other line passes through unchanged."""
    messages = [m for m in MESSAGES if m.library == library and m.stream]
    buffers = {m.stream: io.StringIO() for m in messages if m.stream}
    with contextlib.ExitStack() as stack:
        if "stderr" in buffers:
            stack.enter_context(contextlib.redirect_stderr(buffers["stderr"]))
        if "stdout" in buffers:
            stack.enter_context(contextlib.redirect_stdout(buffers["stdout"]))
        try:
            yield
        finally:
            stack.close()
            for name, buffer in buffers.items():
                _pass_on(buffer.getvalue(), messages, getattr(sys, name))


def _pass_on(text: str, messages: list[LibraryMessage], stream: Any) -> None:
    for line in text.splitlines(keepends=True):
        found = next((m for m in messages if line.startswith(m.starts)), None)
        if found is None:
            stream.write(line)
        else:
            say_once(found.key)


# -- evaluate's cached-module notice, for our modules (blindspot.evaluate_modules installs them) --

#: the namespace of our modules in ``evaluate.load("blindspot/<name>")``
NAMESPACE = "blindspot"
#: evaluate's own namespace folders (``evaluate.load("<name>")``); we only ever remove from them,
#: except under the bare names below
CANONICAL_PREFIXES = ("evaluate-metric--", "evaluate-comparison--", "evaluate-measurement--")
#: the folder prefix evaluate's cache looks under first for ``evaluate.load("<name>")``
BARE_PREFIX = CANONICAL_PREFIXES[0]
#: our modules that no canonical module is named after: they also load as ``evaluate.load(name)``
#: (the names the project's documentation promised); every other module only as ``blindspot/<name>``
BARE_NAMES = ("blindspot", "blindspot_accuracy", "preference_accuracy")

#: evaluate's logger that warns "Using the latest cached version of the module ..." whenever a
#: community module loads offline from its cache
EVALUATE_LOADING_LOGGER = "evaluate.loading"
CACHED_NOTICE = "Using the latest cached version of the module"


def our_cache_names_pattern() -> str:
    """A regular expression for the cache folder name evaluate's notice ends with ("couldn't be
    found locally at <name>,") when the module is ours: ``blindspot--<any>`` or a bare name's."""
    bare = "|".join(re.escape(name) for name in BARE_NAMES)
    return (rf"couldn't be found locally at (?:{re.escape(NAMESPACE)}--[\w.-]+|"
            rf"{re.escape(BARE_PREFIX)}(?:{bare})),")


def is_our_cached_notice(message: str) -> bool:
    """Whether a log message is evaluate's cached-module notice for one of our modules."""
    return message.startswith(CACHED_NOTICE) and re.search(our_cache_names_pattern(),
                                                          message) is not None


class OurCachedModuleNotice(logging.Filter):
    """Drops evaluate's "Using the latest cached version of the module ... couldn't be found ...
    on the Hugging Face Hub" for our modules only (``blindspot/<name>`` and the bare names): our
    modules are never on the Hub, the cached
    copy is the one ``install_modules`` wrote, so the warning says nothing. Other modules keep it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not is_our_cached_notice(record.getMessage())


def quiet_cached_module_notice() -> None:
    """Install :class:`OurCachedModuleNotice` on evaluate's loading logger (once; importing
    ``blindspot`` does), without importing evaluate. The start-up file's filter, built under the
    same class name, counts as installed."""
    logger = logging.getLogger(EVALUATE_LOADING_LOGGER)
    if not any(type(f).__name__ == OurCachedModuleNotice.__name__ for f in logger.filters):
        logger.addFilter(OurCachedModuleNotice())
