"""``blindspot space``: serve the Gradio Space."""

from __future__ import annotations

from pathlib import Path

import typer

from blindspot.exit_codes import fail


def space(host: str = typer.Option("127.0.0.1", help="address to serve on (0.0.0.0: every "
                                   "interface, e.g. in a container)"),
          port: int | None = typer.Option(None, help="port (default: 7860, or the next free)"),
          datasets_dir: Path | None = typer.Option(None, help="folder of built adversarial "
                                                      "datasets (default: out/datasets)"),
          allow_hub_models: bool = typer.Option(False, "--allow-hub-models", help="let visitors "
                                                "name Hub models in metric specs (@org/name); "
                                                "local paths stay refused"),
          max_upload_mb: float | None = typer.Option(None, min=0.001, help="upload size "
                                                        "limit in MB (default 20)"),
          max_rows: int | None = typer.Option(None, min=1, help="rows per uploaded data file "
                                                 "(default 5000)"),
          max_runs: int | None = typer.Option(None, min=1, help="runs per browser session "
                                                 "(default 20)"),
          run_seconds: float | None = typer.Option(None, min=1, help="a run still going "
                                                      "after this many seconds is stopped "
                                                      "(default 900)"),
          judge_url: str | None = typer.Option(None, "--judge-url", help="the one "
                                                  "OpenAI-compatible server llm_judge calls "
                                                  "(visitors never name one; default: the "
                                                  "judge runs in this process)"),
          ) -> None:
    """Serve the Gradio Space (perturb, stress-test, compare, browse) in the browser.

    Visitor limits default to the BLINDSPOT_SPACE_* environment variables, else the values
    shown; the flags override both."""
    from blindspot.judges.backends import check_url
    from blindspot.space import serve
    from blindspot.space.limits import limits_from_env

    try:
        limits = limits_from_env().with_given(
            max_upload_mb=max_upload_mb, max_rows=max_rows, max_runs=max_runs,
            run_seconds=run_seconds, allow_hub_models=allow_hub_models or None,
            judge_url=None if judge_url is None else check_url(judge_url))
    except ValueError as error:
        fail(str(error))
    serve(host, port, datasets_dir, limits)
