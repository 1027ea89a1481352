"""What the stress tab asks for each protocol: one :class:`ProtocolForm` per registered protocol.

Protocols read different inputs: the rank protocol perturbs gold data with the chosen tests and
seeds; the deviation protocol perturbs gold data with its own checklist templates (seeds, no
tests); the preference protocol reads a MENLI-style set (columns by MENLI's names, no mapping,
no tests); the correlation protocol reads human judgments and a references file. The form says
which data choices, fields and extra file a protocol takes, so the tab shows only those and the
request carries only those. A protocol with its own tab (search, checkup), or one the Space does
not run (self-bias, judge-audit, card: :data:`NOT_IN_SPACE`), is not offered there; a protocol
registered later without a form gets the rank protocol's form.
"""

from __future__ import annotations

from dataclasses import dataclass

from blindspot.protocols.interface import PROTOCOLS

DATA_KINDS = ("demo", "built dataset", "upload")


@dataclass(frozen=True)
class ProtocolForm:
    """The inputs of one protocol in the stress tab."""

    data_kinds: tuple[str, ...] = DATA_KINDS  #: data choices the protocol can read
    tests: bool = False        #: reads the tests and suites field
    seeds: bool = False        #: reads the seeds field
    mapping: bool = True       #: uploads get a column mapping
    file_option: str | None = None  #: protocol option the "protocol file" upload fills
    hint: str = ""             #: what the protocol's data must be, shown under the choice


FORMS: dict[str, ProtocolForm] = {
    "rank": ProtocolForm(tests=True, seeds=True,
                         hint="Gold data: the chosen tests perturb its hypothesis column."),
    "deviation": ProtocolForm(
        seeds=True, file_option="human_scores",
        hint="Gold data: the task's checklist templates perturb it (the tests field is not "
             "used); the protocol file, when given, is a human-scores CSV."),
    "preference": ProtocolForm(
        data_kinds=("upload",), mapping=False,
        hint="Upload a MENLI-style CSV (columns error, source, ref, r, hyp_para, hyp_adv_based, "
             "hyp_adv_free); options: mode=ref-based|ref-free, fixed=true, error_types=..."),
    "correlation": ProtocolForm(
        data_kinds=("upload",), file_option="references",
        hint="Upload human judgments (one row per document id and system: id, system, summary, "
             "one numeric column per criterion) and, as the protocol file, the references "
             "joined on id (e.g. a jsonl with gold/references columns)."),
}
#: protocols that have a tab of their own
OWN_TABS = {"search": "Adversarial search", "checkup": "Check up a metric"}
#: protocols the Space does not run, and why (the command line does)
NOT_IN_SPACE = {"self-bias": "its evaluators name generator systems (metric=base_system); run "
                             "`blindspot self-bias` or `blindspot run --protocol self-bias`",
                "judge-audit": "it audits an LLM judge with many calls per row; run "
                               "`blindspot judge-audit` or `blindspot run --protocol judge-audit`",
                "card": "it runs the whole suite on every demo task, the check-up and the human "
                        "agreement; run `blindspot card METRIC` (the leaderboard tab shows cards)"}


def form_for(protocol: str) -> ProtocolForm:
    """The protocol's form (the rank protocol's for one registered without a form)."""
    return FORMS.get(protocol, FORMS["rank"])


def stress_protocols() -> list[str]:
    """The registered protocols the stress tab runs, rank first."""

    names = [n for n in PROTOCOLS if n not in OWN_TABS and n not in NOT_IN_SPACE]
    return sorted(names, key=lambda n: (n != "rank", n))


def check_data_kind(protocol: str, kind: str) -> None:
    """A ValueError when the protocol cannot read that data choice, saying what it reads."""
    form = form_for(protocol)
    if kind not in form.data_kinds:
        raise ValueError(f"the {protocol} protocol does not run on {kind} data; choose "
                         f"{' or '.join(form.data_kinds)}. {form.hint}")
