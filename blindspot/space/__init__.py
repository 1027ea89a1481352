"""The Gradio Space: perturb a text, stress-test metrics, compare them, browse built datasets.

``blindspot space`` serves it on 127.0.0.1; ``spaces/app.py`` is the Hugging Face Space entry
point. The page is assembled from the tab registry (:mod:`blindspot.space.tab`), one module
per tab in :mod:`blindspot.space.tabs`; the logic the tabs share (word diff, upload checks, the
blind-spot matrix, per-session folders and run processes) lives beside it and needs no browser.
"""

from blindspot.space.app import build_app, serve

__all__ = ["build_app", "serve"]
