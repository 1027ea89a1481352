"""The main job: judge metrics on perturbed gold data (``blindspot run``,
``evaluate.load("blindspot/blindspot")``)."""

from blindspot.runner.metric_spec import MetricSpec, parse_metric_spec, resolve_metrics
from blindspot.runner.run import DEFAULT_SEEDS, DEFAULT_TESTS, RunSettings, run_blindspot

__all__ = ["DEFAULT_SEEDS", "DEFAULT_TESTS", "MetricSpec", "RunSettings", "parse_metric_spec",
           "resolve_metrics", "run_blindspot"]
