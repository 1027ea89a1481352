"""The ``results.json`` schema of a blind-spot run: one place that says what every field means.

A run's results are plain JSON (no timestamps, no timings, no absolute paths), so two runs with
the same inputs and seeds give byte-identical files. Consumers check ``schema_version`` first; it
is bumped whenever a field changes meaning or is removed (adding a field does not bump it).

Layout (dict keys keep the run's order: datasets and metrics as given, tests in plan order)::

    {
      "schema_version": 2,
      "protocol": "rank",                  # the registry name (blindspot.protocols.registry)
      "tool": {"name": "blindspot", "version": "0.1.0"},
      "config": {"tests": [...], "seeds": [1, 2, 3, 4, 5], "noise_cap": 0.6,
                 "tolerance": 1e-05, "worst_examples": 3, "metrics": [<metric spec>, ...]},
      "datasets": {
        "<dataset name>": {
          "task": "summarization", "rows": 100, "fingerprint": "<sha256 of the inputs>",
          "columns": {"id": "id", "hypothesis": "gold", "references": "references",
                      "source": "source"},
          "skipped_tests": {"bert_diverge": "needs mlm (--mlm)"},
          "metrics": {
            "<metric display name, e.g. rouge.rougeL>": {
              "metric": "rouge", "output": "rougeL", "options": {...},
              "higher_is_better": true,          # false: the score was negated before judging
              "corpus_level": false,
              "error": null,                     # a message when the metric could not run at all
              "gold": {"score_mean": .., "score_std": .., "n": .., "n_nan": ..},
              "anchors": {"reference": .., "gold": .., "unrelated_gold": .., "copied_source": ..,
                          "empty": .., "shuffled_words": .., "random_characters": ..} | null,
                          # mean scores over the first 8 gold rows (blindspot.checkup.anchors)
              "tests": {
                "<canonical test name>": {
                  "test": "truncation", "category": "fluency",
                  "rule": "monotone_decrease",    # the verdict rule the test declares
                  "status": "pass" | "fail" | "error" | "undecided",
                  "passed": true | false | null,  # null unless status is pass or fail
                  "reason": null | "why undecided",
                  "error": null | "message (status error)",
                  "explanation": null | "rises 0.4% of gold from level 0.2 to level 0.3",
                  "within_noise": null | true | false,   # a fail only: could more rows or
                                                         # seeds change it?
                  "deciding": null | {            # the comparison the explanation names
                    "from": "0.2", "to": "0.3",   # levels ("gold" for the gold point)
                    "change": 0.003,              # score(to) - score(from), higher = better
                    "relative_change": 0.4,       # that change in percent of gold (null: gold 0)
                    "seeds_spread": 0.01,         # the two points' population stds added
                    "ci_low": .., "ci_high": ..}, # 95% paired bootstrap interval over rows of
                                                  # the change (null for corpus-level metrics)
                  "relative_change": -4.2,        # of the rule's headline point, in percent
                  "absolute_change": -0.02,       # the same point's score minus gold
                  "points": [                     # gold first, then levels by noise ratio
                    {"level": "gold" | "0.1", "noise_ratio": 0.0, "noise_ratio_std": 0.0,
                     "score_mean": .., "score_std": ..,   # mean / population std over seeds
                     "n": ..,                              # finite row scores behind the mean
                     "n_seeds": .., "n_nan": .., "relative_change": .., "judged": true}],
                  "per_sample": [                 # one per noised level (per-row metrics only)
                    {"level": "0.1", "n": .., "fraction_noised_ge_gold": ..,
                     "mean_difference": ..,        # gold - noised, mean over rows and seeds
                     "wilcoxon_p": .., "ci_low": .., "ci_high": ..}],
                  "worst_examples": [             # rows the noise lowered least (or raised)
                    {"id": .., "level": "0.1", "seed": 1, "gold": "...", "perturbed": "...",
                     "gold_score": .., "perturbed_score": .., "difference": ..}]
                }},
              "expectations": [                   # only when the run has examination tests
                {"expectation": "decreasing_with_intensity" | "negation_drops_sharply"
                                | "det_drop_hurts_least",
                 "tests": ["word_swap"], "passed": true | false | null,
                 "reason": null | "why undecided (or which comparison failed)",
                 "values": {"gold": .., "0.25": .., ...}}]   # the numbers compared
            }}}}
    }

``status``: ``pass``/``fail`` follow the test's verdict ``rule``
(:data:`blindspot.protocols.rank.RULES`): ``monotone_decrease``, the rank protocol (PROTOCOLS.md
§1) over the points below the noise cap; ``below_gold``, every level scores below gold whatever its
noise ratio (copy-source, injection, repetition, frequent n-gram); ``per_position_drop``, every
level drops below gold beyond the noise (positioned error). ``undecided`` when the test cannot be
judged (e.g. no level below the noise cap, ``reason`` says why); ``error`` when the metric failed
or returned NaN on the test's rows (``error`` says what) -- never a pass.
``explanation``: for a pass or fail, one sentence naming the deciding comparison (the smallest
drop of a pass, the largest rise of a fail), in percent of the gold score, or absolute where the
gold score is 0. ``within_noise`` (fails only, null otherwise): every failing comparison lies
inside the seeds' spread or its paired bootstrap interval over rows contains 0: ``change ±
seeds_spread`` or ``[ci_low, ci_high]`` holds both a drop (below ``-tolerance``) and no drop
(``low < -tolerance <= high``), so more rows or seeds could change the verdict.
``relative_change`` / ``absolute_change``: of the rule's headline point -- the noisiest judged
point for ``monotone_decrease``, the deciding level for the rules that compare each level with
gold. ``judged`` is false only for points a capped rule left out.
``expectations``: the examination paper's expected behaviours of the metric
(:mod:`blindspot.protocols.expectations` says how each is decided); absent when none of its tests
ran. ``level`` is always a string (the perturbation's level as written by ``level_str``).
"""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 2

#: What changed in each version (the newest last).
CHANGELOG = {
    1: "first version",
    2: "each test's verdict follows the rule its perturbation declares (new field `rule`; the "
       "targeted tests compare each level with gold, all levels judged, so `relative_change` is "
       "the rule's headline point, no longer always the noisiest); new fields `explanation`, "
       "`within_noise`, `deciding` and `absolute_change` (issue 18)",
}
STATUSES = ("pass", "fail", "error", "undecided")


def iter_test_results(results: dict[str, Any]):
    """Yield ``(dataset name, metric name, test name, test result)`` in file order."""
    for dataset, data in results["datasets"].items():
        for metric, entry in data["metrics"].items():
            for test, result in entry["tests"].items():
                yield dataset, metric, test, result
