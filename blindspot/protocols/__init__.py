"""Meta-evaluation protocols: pure functions that judge a metric's scores on gold vs. noised data
(see ``shared/spec/PROTOCOLS.md``). No models are loaded here; callers pass scores in."""

from blindspot.judging import judge_curve, per_sample

__all__ = ["judge_curve", "per_sample"]
