"""Browse tab: the adversarial datasets built by ``blindspot build-dataset``, config by config.

Pick a folder under the Space's datasets folder (``--datasets-dir``, ``$BLINDSPOT_DATASETS_DIR``,
else ``out/datasets`` in the folder the Space started from: where ``build-dataset`` writes); the
tab names the full path it looked in: its card summary and configs table, then one config's first rows, each
noised text shown as a word diff of its gold text.
"""

import html
from typing import Any

import gradio as gr

from blindspot.space import adversarial
from blindspot.space.tab import SpaceTab, register_tab
from blindspot.space.worddiff import diff_html

ROW_LIMIT = 50


def rows_html(rows: list[dict[str, Any]]) -> str:
    """Gold vs. noised rows as a table with the changes highlighted."""
    out = ['<table id="browse-rows" class="blindspot-verdicts"><thead><tr><th>id</th>'
           "<th>seed</th><th>noise ratio</th><th>gold</th><th>noised (changes)</th></tr>"
           "</thead><tbody>"]
    for row in rows:
        out.append(f"<tr><td>{html.escape(str(row['id']))}</td><td>{row['seed']}</td>"
                   f"<td>{row['noise_ratio']:.3f}</td><td>{html.escape(row['gold'] or '')}</td>"
                   f"<td>{diff_html(row['gold'] or '', row['perturbed'] or '')}</td></tr>")
    return "".join(out) + "</tbody></table>"


def build(context: Any) -> None:
    """The tab's components and events."""

    root = context.datasets_dir

    def choices() -> list[str]:
        return [adversarial.folder_label(root, f) for f in adversarial.dataset_folders(root)]

    found = choices()
    where = gr.Markdown(adversarial.where_looked(root, len(found)), elem_id="browse-where")
    with gr.Row():
        folder = gr.Dropdown(found, label="Dataset", elem_id="browse-dataset")
        refresh = gr.Button("Refresh list", size="sm")
    summary = gr.Markdown(elem_id="browse-summary")
    configs = gr.Dataframe(headers=adversarial.CONFIG_HEADER, interactive=False,
                           label="Configs", elem_id="browse-configs")
    config = gr.Dropdown([], label="Config", elem_id="browse-config")
    rows = gr.HTML(elem_id="browse-rows-view")

    def on_folder(label: str | None) -> tuple[Any, ...]:
        if not label:
            return "", [], gr.update(choices=[], value=None)
        try:
            record = adversarial.read_build(adversarial.resolve_folder(root, label))
        except ValueError as error:
            raise gr.Error(str(error)) from None
        names = [c["config_name"] for c in record["configs"]]
        return (adversarial.summary_markdown(record), adversarial.config_rows(record),
                gr.update(choices=names, value=names[0] if names else None))

    def on_config(label: str | None, name: str | None) -> str:
        if not (label and name):
            return ""
        try:
            found = adversarial.gold_vs_noised(adversarial.resolve_folder(root, label), name,
                                               ROW_LIMIT)
        except ValueError as error:
            raise gr.Error(str(error)) from None
        return (f"<p>First {len(found)} rows of {html.escape(name)}.</p>" + rows_html(found))

    def on_refresh() -> tuple[Any, str]:
        listed = choices()
        return gr.update(choices=listed), adversarial.where_looked(root, len(listed))

    refresh.click(on_refresh, None, [folder, where], queue=False)
    # a dropdown starts on its first choice, which fires no change: show it when the page loads
    context.demo.load(on_folder, folder, [summary, configs, config])
    folder.change(on_folder, folder, [summary, configs, config])
    config.change(on_config, [folder, config], rows)


TAB = register_tab(SpaceTab("browse", "Browse adversarial datasets", build, 40))
