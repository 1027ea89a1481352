"""A metric whose Ray worker dies once, for the killed-worker test (shipped to Ray by value)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class CrashOnceOverlap:
    """Share of hypothesis tokens found in the reference; the first worker process that scores
    while ``marker`` does not exist creates it and dies (``os._exit``), as a killed worker."""

    name = "crash_once_overlap"
    config_name = None

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def compute(self, predictions: list[str], references: list[Any],
                use_aggregator: bool = True, **_: Any) -> dict[str, Any]:
        if not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os._exit(1)
        scores = []
        for hyp, ref in zip(predictions, references, strict=True):
            words = hyp.split()
            vocab = set((ref if isinstance(ref, str) else ref[0]).split())
            scores.append(sum(w in vocab for w in words) / len(words) if words else 0.0)
        return {"score": scores if not use_aggregator else sum(scores) / len(scores)}
