"""Perturb tab: one test on a pasted text with the changes highlighted, or every test side by side.

The test runs exactly as in a dataset run (same per-row seed from the text's hash, same noise
ratio); tests that draw texts from a pool use the task's embedded demo corpus as the pool, and
tests that need a model or corpus this machine lacks say so instead of running.
"""

import html
from typing import Any

import gradio as gr

from blindspot.demo import DEMO_TASKS, read_demo
from blindspot.models import available_models
from blindspot.perturbations import list_perturbations
from blindspot.perturbations.dataset import build_perturbation
from blindspot.perturbations.perturbation import REGISTRY, canonical_name, level_str
from blindspot.perturbations.perturbation import TASKS as TASK_DATA
from blindspot.space.tab import SpaceTab, register_tab
from blindspot.space.worddiff import COLORS, changed_words, diff_html, word_diff

#: the tasks with paper levels, as the perturbation registry names them
TASKS = tuple(TASK_DATA)
EXAMPLE = ("The council approved the new budget on Tuesday. It will fund 12 more teachers and "
           "repair two bridges in Eastbridge. Mayor Helen Okafor said the plan was fair.")


def test_names() -> list[str]:
    """Every registered test, in catalogue order."""

    return [entry["name"] for entry in list_perturbations()]


def level_choices(test: str, task: str) -> list[str]:
    """The paper's levels of ``test`` for ``task`` (any task's when that task has none)."""

    cls = REGISTRY[canonical_name(test)]
    levels = cls.levels.get(task) or next((v for v in cls.levels.values() if v), ())
    return [level_str(level) for level in levels] or ["-"]


def _pool(task: str, text: str) -> list[str]:
    """Texts a pool-drawing test may use: the task's demo gold texts, then the text itself."""

    demo_task = task if task in DEMO_TASKS else "translation"
    return [row["gold"] for row in read_demo(demo_task)] + [text]


def _offline_lm() -> str | None:
    """The causal-LM tokenizer positioned error uses: SmolLM2 when it is installed."""

    return "smollm2" if "smollm2" in available_models() else None


def _resources(task: str, text: str) -> dict[str, Any]:
    return {"lm": _offline_lm(), "pool": _pool(task, text)}


def missing_needs(test: str, source: str | None) -> str | None:
    """Why ``test`` cannot run here (a model, corpus or source it needs), or None."""

    cls = REGISTRY[canonical_name(test)]
    have = {"pool"} | ({"lm"} if _offline_lm() else set())
    missing = [r for r in cls.requires if r not in have]
    if missing:
        return f"needs {', '.join(missing)}, which this Space does not have"
    if cls.needs_source and not (source or "").strip():
        return "needs the source text: paste it in 'Source'"
    return None


def perturb_text(text: str, test: str, level: str, seed: int, source: str | None = None,
                 task: str = "summarization") -> dict[str, Any]:
    """One test on one text: the perturbed text, whether it changed, its noise ratio and diff."""

    if not (text or "").strip():
        raise ValueError("paste a text to perturb first")
    why = missing_needs(test, source)
    if why:
        raise ValueError(f"test {test!r} {why}")
    perturbation = build_perturbation(test, None, _resources(task, text), task)
    result = perturbation.apply(text, level, int(seed), source=(source or None))
    segments = word_diff(text, result.perturbed or text)  # apply() keeps the text where nothing applied
    return {"test": result.perturbation, "level": result.level, "perturbed": result.perturbed,
            "applied": result.applied, "noise_ratio": result.noise_ratio,
            "segments": segments, "changes": changed_words(segments)}


def every_test(text: str, seed: int, source: str | None = None, task: str = "summarization",
               highest: bool = True) -> list[dict[str, Any]]:
    """Every test at its highest (or lowest) paper level for ``task``; unrunnable ones say why."""

    rows = []
    for entry in list_perturbations(task):
        test = entry["name"]
        levels = level_choices(test, task)
        level = levels[-1] if highest else levels[0]
        row = {"test": test, "category": entry["category"], "level": level,
               "noise_ratio": None, "perturbed": None, "skipped": missing_needs(test, source)}
        if row["skipped"] is None:
            result = perturb_text(text, test, level, seed, source, task)
            row.update(noise_ratio=result["noise_ratio"], perturbed=result["perturbed"])
        rows.append(row)
    return rows


def every_test_html(text: str, rows: list[dict[str, Any]]) -> str:
    """The side-by-side table: test, level, noise ratio and the highlighted perturbed text."""
    out = ['<table id="all-tests" class="blindspot-verdicts"><thead><tr><th>test</th>'
           "<th>category</th><th>level</th><th>noise ratio</th><th>perturbed text</th>"
           "</tr></thead><tbody>"]
    for row in rows:
        if row["skipped"]:
            ratio, body = "—", f"<i>skipped: {html.escape(row['skipped'])}</i>"
        else:
            ratio = f"{row['noise_ratio']:.3f}"
            body = diff_html(text, row["perturbed"]) if row["perturbed"] != text else \
                f"<i>unchanged (nothing this test can change)</i> {html.escape(text)}"
        out.append(f"<tr><td>{html.escape(row['test'])}</td><td>{html.escape(row['category'])}"
                   f"</td><td>{html.escape(row['level'])}</td><td>{ratio}</td><td>{body}</td>"
                   "</tr>")
    return "".join(out) + "</tbody></table>"


def build(context: Any) -> None:
    """The tab's components and events."""

    tests = test_names()
    with gr.Row():
        with gr.Column(scale=3):
            text = gr.Textbox(label="Text (a gold hypothesis)", lines=6, value=EXAMPLE,
                              elem_id="perturb-text")
            source = gr.Textbox(label="Source (optional: the article or sentence it comes from)",
                                lines=2, elem_id="perturb-source")
        with gr.Column(scale=2):
            task = gr.Dropdown(list(TASKS), value="summarization", label="Task (paper levels)")
            test = gr.Dropdown(tests, value="truncation", label="Test", elem_id="perturb-test")
            level = gr.Dropdown(level_choices("truncation", "summarization"), value="0.1",
                                allow_custom_value=True, label="Level", elem_id="perturb-level")
            seed = gr.Number(value=1, precision=0, label="Seed", minimum=0)
    with gr.Row():
        one = gr.Button("Perturb", variant="primary", elem_id="perturb-button")
        every = gr.Button("Every test side by side", elem_id="every-test-button")
        highest = gr.Checkbox(value=True, label="side by side at the highest paper level")
    diff = gr.HighlightedText(label="Perturbed text (red: removed, green: added)",
                              color_map=COLORS, show_legend=True, combine_adjacent=False,
                              elem_id="perturbed-diff")
    summary = gr.Markdown(elem_id="noise-ratio")
    perturbed = gr.Textbox(label="Perturbed text (plain)", lines=4, elem_id="perturbed-text",
                           buttons=["copy"])
    table = gr.HTML(elem_id="every-test")

    def on_test(name: str, task_name: str) -> Any:
        choices = level_choices(name, task_name)
        return gr.update(choices=choices, value=choices[0])

    def on_perturb(text_in: str, source_in: str, task_in: str, test_in: str, level_in: str,
                   seed_in: float) -> tuple[Any, str, str]:
        try:
            result = perturb_text(text_in, test_in, str(level_in), int(seed_in or 0), source_in,
                                  task_in)
        except ValueError as error:
            raise gr.Error(str(error)) from None
        changes = result["changes"]
        status = (f"**{result['test']}** at level **{result['level']}**, seed {int(seed_in or 0)}"
                  f": noise ratio **{result['noise_ratio']:.4f}**, {changes['removed']} word(s) "
                  f"removed, {changes['added']} added")
        if not result["applied"]:
            status += " (unchanged: this test found nothing to change in this text)"
        return result["segments"], status, result["perturbed"]

    def on_every(text_in: str, source_in: str, task_in: str, seed_in: float, high: bool) -> str:
        if not (text_in or "").strip():
            raise gr.Error("paste a text to perturb first")
        rows = every_test(text_in, int(seed_in or 0), source_in, task_in, high)
        return every_test_html(text_in, rows)

    test.change(on_test, [test, task], level, queue=False)
    task.change(on_test, [test, task], level, queue=False)
    one.click(on_perturb, [text, source, task, test, level, seed], [diff, summary, perturbed],
              api_name="perturb")
    every.click(on_every, [text, source, task, seed, highest], table, api_name="every_test")


TAB = register_tab(SpaceTab("perturb", "Perturb", build, 10))
