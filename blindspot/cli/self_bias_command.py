"""The ``blindspot self-bias`` command: the self-evaluation bias protocol on a table of outputs.

He et al., ACL 2023, §5.4 (see :mod:`blindspot.protocols.self_bias`): score every generator
system's outputs with every evaluator, rank the systems per evaluator and flag the evaluators
that rank their own base model's system first.

The command is a plain function with ``typer`` defaults, registered in
:data:`blindspot.cli.COMMANDS`. It runs the registered ``self-bias`` protocol
as ``blindspot run --protocol self-bias`` does, and with ``--out`` writes the same report folder
(``results.json`` and ``report.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from blindspot.cli._declared import declared_options
from blindspot.exit_codes import fail
from blindspot.protocols.declarations import SELF_BIAS
from blindspot.protocols.interface import ProtocolRequest, get_protocol
from blindspot.report.files import MARKDOWN_FILE

# no "[@...]" here: typer renders help as rich markup, where it would be read as a tag
EVALUATORS_HELP = ("comma-separated evaluator specs metric.output@model=base_system, where "
                   ".output, @model and =base_system are optional; e.g. gpt_ppl@smollm2=smollm2 "
                   "is metric gpt_ppl with option model=smollm2, whose base model is the "
                   "generator system 'smollm2'; ter ranks lowest first")


@declared_options(SELF_BIAS)
def self_bias(
    data: Path = typer.Argument(..., help="jsonl, csv or parquet file, one row per (system, "
                                           "hypothesis)"),
    evaluators: str = typer.Option(..., "--evaluators", "-e", help=EVALUATORS_HELP),
    hypothesis_column: str = typer.Option("hypothesis", help="the generated-text column"),
    references_column: str | None = typer.Option(
        None, help="references column (a text or a list of texts per row) for metrics that "
                   "need references"),
    source_column: str | None = typer.Option(None, help="source column for metrics that "
                                                            "read the source"),
    out: Path | None = typer.Option(None, help="report folder: results.json and report.md "
                                                  "(default: print the table only)"),
    options: dict[str, Any] | None = None,
) -> None:
    """Self-evaluation bias: the generator x evaluator score matrix, with each evaluator's own
    base model flagged (⚑) when it ranks first."""
    from blindspot.protocols.self_bias import format_matrix  # the scoring layer: heavy

    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column}
    request = ProtocolRequest(data=data, metrics=evaluators, columns=columns, out=out,
                              options=options or {})
    try:
        result = get_protocol(SELF_BIAS.name).run(request)
    except (ValueError, FileNotFoundError) as error:
        fail(str(error))
    typer.echo(format_matrix(result.to_dict()))
    if out is not None:
        typer.echo(f"report: {(out / MARKDOWN_FILE).resolve()}", err=True)
