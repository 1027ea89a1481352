"""``blindspot install-modules``: our metric modules registered with ``evaluate``."""

from __future__ import annotations

from blindspot.cli._protocol import console
from blindspot.evaluate_modules import load_name, register_modules


def install_modules_command() -> None:
    """Register the metric modules with evaluate as `blindspot/<name>`, so that
    `evaluate.load("blindspot/rouge")` finds ours offline (canonical names are left alone);
    blindspot, blindspot_accuracy and preference_accuracy also load by their bare names."""
    written, startup_file = register_modules()
    console.print(f"registered {len(written)} metric modules: "
                  + ", ".join(load_name(p.stem) for p in written))
    console.print(f"evaluate's cached-module notice hidden for them by {startup_file}")
