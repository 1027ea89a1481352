"""The Gradio app that fronts blindspot: one page, one tab per registry entry, a queue.

``build_app()`` returns the ``gr.Blocks``; ``serve()`` launches it on 127.0.0.1 (``blindspot
space``), and ``spaces/app.py`` launches the same app as a Hugging Face Space. Analytics and
telemetry are switched off before gradio is imported, so the app makes no outgoing request.
The visitor limits (:class:`~blindspot.space.limits.SpaceLimits`) come from the caller, else
from the environment; the page states them under the title.
"""

import os
from pathlib import Path
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import gradio as gr

from blindspot import paths  # noqa: E402
from blindspot.space.limits import SpaceLimits, limits_from_env  # noqa: E402
from blindspot.space.session import Workspace
from blindspot.space.tab import SpaceContext, tabs_in_order

TITLE = "blindspot: find the blind spots of text-generation metrics"
INTRO = ("Perturb gold texts in controlled ways and check that a metric's score drops, and drops "
         "more as more noise is added (He et al., 2023). Runs stay in this browser session: "
         "nobody else sees your uploads or results.")
CSS = """
.blindspot-verdicts td, .blindspot-verdicts th {border: 1px solid #ccc; padding: 3px 8px;}
.blindspot-verdicts th {background: #f3f3f3;}
del {text-decoration: line-through;} ins {text-decoration: none;}
"""
#: Events waiting in the queue; runs go one at a time (``controls.RUN_QUEUE``) while the other
#: events (perturb, uploads, compare) are served up to ``EVENT_CONCURRENCY`` at once beside them.
QUEUE_SIZE = 64
EVENT_CONCURRENCY = 4
def build_app(datasets_dir: str | Path | None = None, workspace_root: str | Path | None = None,
              limits: SpaceLimits | None = None) -> Any:
    """The Space as a ``gr.Blocks`` with its queue set up."""


    limits = limits or limits_from_env()
    workspace = Workspace(workspace_root, limits, spare=True)
    context = SpaceContext(workspace, Path(datasets_dir) if datasets_dir else
                           paths.datasets_dir(), limits=limits)
    with gr.Blocks(title="blindspot", analytics_enabled=False,
                   delete_cache=(3600, 24 * 3600)) as demo:
        gr.Markdown(f"# {TITLE}\n{INTRO}\n\n{limits.describe()}", elem_id="space-intro")
        context.runs, context.demo = gr.State([]), demo
        with gr.Tabs():
            for tab in tabs_in_order():
                with gr.Tab(tab.title, id=tab.name, elem_id=f"tab-{tab.name}"):
                    tab.build(context)

        def forget(request: gr.Request) -> None:
            workspace.forget(request.session_hash)

        demo.unload(forget)
    demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=EVENT_CONCURRENCY)
    return demo


def launch_options(host: str = "127.0.0.1", port: int | None = None,
                   limits: SpaceLimits | None = None) -> dict[str, Any]:
    """``launch`` arguments shared by ``blindspot space`` and the Hugging Face Space."""
    limits = limits or limits_from_env()
    return {"server_name": host, "server_port": port, "css": CSS, "show_error": True,
            "ssr_mode": False, "footer_links": [],
            # gradio refuses far larger uploads itself; ours explain the Space's limit
            "max_file_size": 4 * limits.max_upload_bytes}


def serve(host: str = "127.0.0.1", port: int | None = None,
          datasets_dir: str | Path | None = None, limits: SpaceLimits | None = None) -> None:
    """Launch the Space and block until it is stopped (Ctrl+C). gradio launches quietly (its
    "set `share=True`" hint says nothing here: blindspot.quiet) and our one line gives the
    address."""
    limits = limits or limits_from_env()
    app = build_app(datasets_dir, limits=limits)
    app.launch(**launch_options(host, port, limits), quiet=True, prevent_thread_lock=True)
    print(f"the Space is served on {app.local_url} (Ctrl+C stops it)", flush=True)
    app.block_thread()
