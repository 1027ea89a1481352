"""What one visitor of the public Space may use: upload size and rows, runs, run time, models.

The operator sets them when starting the Space (``blindspot space --max-rows 10000 ...``) or,
for the Hugging Face Space which starts from ``spaces/app.py``, with the environment variables
of :data:`LIMIT_SETTINGS`; the page states them next to the upload boxes and every refusal
names the limit and what to do instead.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from blindspot.judges.backends import check_url


@dataclass(frozen=True)
class SpaceLimits:
    """The Space's limits per visitor (defaults suit a small shared CPU Space)."""

    max_upload_mb: float = 20.0     #: an upload must be smaller than this many MB
    max_rows: int = 5000            #: rows per uploaded data file
    max_runs: int = 20              #: runs (stress tests and searches) per browser session
    run_seconds: float = 900.0      #: a run still going after this long is stopped
    allow_hub_models: bool = False  #: metric specs may name Hub models (``@org/name``)
    #: the one OpenAI-compatible server the operator lets ``llm_judge`` call (None: the judge
    #: runs in the Space's process); a visitor never names a URL
    judge_url: str | None = None

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1_000_000)

    def with_given(self, **given: Any) -> SpaceLimits:
        """These limits with every given (not None) value replaced."""
        return replace(self, **{k: v for k, v in given.items() if v is not None})

    def describe(self) -> str:
        """One line for the page: what a visitor may upload and run."""
        hub = "offline models and Hub ids" if self.allow_hub_models else "offline models only"
        return (f"Limits of this Space: uploads under {self.max_upload_mb:g} MB and up to "
                f"{self.max_rows:,} rows (.jsonl, .json, .csv, .parquet); {self.max_runs} "
                f"run{'s' if self.max_runs != 1 else ''} per session, each stopped after "
                f"{self.run_seconds:g} s; metrics with {hub}.")


#: The environment variable of each limit (read by :func:`limits_from_env`).
LIMIT_SETTINGS: dict[str, str] = {
    "max_upload_mb": "BLINDSPOT_SPACE_MAX_UPLOAD_MB",
    "max_rows": "BLINDSPOT_SPACE_MAX_ROWS",
    "max_runs": "BLINDSPOT_SPACE_MAX_RUNS",
    "run_seconds": "BLINDSPOT_SPACE_RUN_SECONDS",
    "allow_hub_models": "BLINDSPOT_SPACE_ALLOW_HUB_MODELS",
    "judge_url": "BLINDSPOT_SPACE_JUDGE_URL",
}
TRUE = ("1", "true", "yes")


def _read(kind: type, name: str, text: str) -> Any:
    if kind is bool:
        return text.strip().lower() in TRUE
    if kind is str:
        return check_url(text.strip())
    try:
        value = kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise ValueError(f"{name}={text!r} must be {what}") from None
    if value <= 0:
        raise ValueError(f"{name}={text!r} must be above 0")
    return value


def limits_from_env(environ: Mapping[str, str] | None = None) -> SpaceLimits:
    """The default limits with those the environment sets (:data:`LIMIT_SETTINGS`)."""
    environ = os.environ if environ is None else environ
    kinds = {f.name: {"float": float, "int": int, "bool": bool, "str | None": str}[str(f.type)]
             for f in fields(SpaceLimits)}
    given = {key: _read(kinds[key], var, environ[var]) for key, var in LIMIT_SETTINGS.items()
             if environ.get(var)}
    return SpaceLimits(**given)


DEFAULT_LIMITS = SpaceLimits()

def judge_options(limits: SpaceLimits, metrics: list[str]) -> dict[str, dict[str, Any]]:
    """The metric options of a visitor's run that the operator decides: ``llm_judge`` through
    the operator's judge server when one is configured (visitors set no metric option)."""
    if limits.judge_url is None or not any(m.split("@")[0].split(".")[0] == "llm_judge"
                                           for m in metrics):
        return {}
    return {"llm_judge": {"backend": "openai", "url": limits.judge_url}}


__all__ = ["DEFAULT_LIMITS", "LIMIT_SETTINGS", "SpaceLimits", "judge_options", "limits_from_env"]
