"""A fresh process that scores rows once: the determinism check runs two of these.

Reads one JSON object on stdin (``metric``, ``metric_options``, ``idf``, ``hypotheses``,
``references``, ``sources``, ``batch_size``) and prints the scores as the last line of stdout,
``SCORES <json list>``.
"""

from __future__ import annotations

import json
import sys

from blindspot.runner.metric_spec import resolve_metrics
from blindspot.runner.scorers import scorer_for
from blindspot.scoring.probe import CheckRows, direct_scores

MARKER = "SCORES "


def main() -> None:
    job = json.loads(sys.stdin.read())
    spec = resolve_metrics(job["metric"], job["metric_options"])[0]
    rows = CheckRows(job["hypotheses"], job["references"], job["sources"])
    scores = direct_scores(scorer_for(spec, job["idf"]), spec, rows, job["batch_size"])
    print(MARKER + json.dumps(scores), flush=True)


if __name__ == "__main__":
    main()
