"""Turning a run's results into results.json, a markdown report, PNG plots and an HTML page."""
