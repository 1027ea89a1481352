"""The main job: judge metrics on perturbed gold data, the rank protocol's run (``blindspot run``,
``evaluate.load("blindspot/blindspot")``, :func:`blindspot.protocols.rank.run_blindspot`)."""

from blindspot.runner.metric_spec import MetricSpec, parse_metric_spec, resolve_metrics
from blindspot.runner.pipeline import DEFAULT_SEEDS, DEFAULT_TESTS, RunSettings

__all__ = ["DEFAULT_SEEDS", "DEFAULT_TESTS", "MetricSpec", "RunSettings", "parse_metric_spec",
           "resolve_metrics"]
