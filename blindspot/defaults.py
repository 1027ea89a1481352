"""The defaults of a blind-spot run, written once: every setting, option and signature that has
one reads it from here, so the CLI, the Python API, the evaluate modules and the Space agree.

>>> SEEDS, NOISE_CAP, TOLERANCE
((1, 2, 3, 4, 5), 0.6, 1e-05)
"""

from __future__ import annotations

from typing import Final

#: the seeds of a run: five, as the blind-spots paper averages its curves over
SEEDS: Final[tuple[int, ...]] = (1, 2, 3, 4, 5)
#: the tests of a run that names none
TESTS: Final[str] = "fluency,consistency"
#: the task of a run that names none
TASK: Final[str] = "summarization"
#: only points below this noise ratio are judged by a curve rule (the paper's plots)
NOISE_CAP: Final[float] = 0.6
#: a score must be lower by more than this to count as lower (the blind-spots paper's tolerance)
TOLERANCE: Final[float] = 1e-5
#: resamples of every bootstrap interval
N_BOOT: Final[int] = 1000
#: the seed of the bootstrap intervals
BOOTSTRAP_SEED: Final[int] = 0
#: the examples a metric penalised least, shown per test
WORST_EXAMPLES: Final[int] = 3
#: rows per chunk of a streamed run (``--chunk-size``)
CHUNK_SIZE: Final[int] = 2000

__all__ = ["BOOTSTRAP_SEED", "CHUNK_SIZE", "N_BOOT", "NOISE_CAP", "SEEDS", "TASK", "TESTS",
           "TOLERANCE", "WORST_EXAMPLES"]
