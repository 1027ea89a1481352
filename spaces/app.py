"""Hugging Face Space entry point: the blindspot app (``blindspot.space``), unchanged.

Locally, ``blindspot space`` serves the same app on 127.0.0.1; on a Space, gradio's
``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT`` (set by the Space) choose where it listens.
"""

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from blindspot.space.app import build_app, launch_options  # noqa: E402

demo = build_app()

if __name__ == "__main__":
    port = os.environ.get("GRADIO_SERVER_PORT")
    demo.launch(**launch_options(os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
                                 int(port) if port else None))
