"""The Run and Stop buttons and the status line the run tabs share (stress test, search).

Every run of a session goes through the same worker slot (:meth:`Workspace.run_to_end`): Stop
ends the session's running process whichever tab started it, and the runs of all sessions share
one queue (``concurrency_id="run"``, one at a time).
"""

from typing import Any

import gradio as gr

#: runs of every tab and session wait in this one queue
RUN_QUEUE = "run"


def run_controls(label: str, run_id: str, stop_id: str, status_id: str) -> tuple[Any, Any, Any]:
    """``(run button, stop button, status markdown)``."""

    with gr.Row():
        run = gr.Button(label, variant="primary", elem_id=run_id)
        stop = gr.Button("Stop", variant="stop", elem_id=stop_id)
    return run, stop, gr.Markdown(elem_id=status_id)


def wire_run(workspace: Any, run: Any, stop: Any, status: Any, handler: Any,
             inputs: list[Any], outputs: list[Any], api_name: str) -> Any:
    """Run ``handler`` in the shared queue on click; Stop ends the session's process. The run's
    progress bar is shown once, on ``status`` (by default gradio stacks one on every output)."""

    def on_stop(request: gr.Request) -> str:
        stopped = workspace.cancel(request.session_hash)
        return "Stopped." if stopped else "No run is going on."

    event = run.click(handler, inputs, outputs, concurrency_limit=1, concurrency_id=RUN_QUEUE,
                      api_name=api_name, show_progress_on=status)
    stop.click(on_stop, None, status, cancels=[event], queue=False)
    return event
