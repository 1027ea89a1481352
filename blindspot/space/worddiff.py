"""Word diff of a gold text and its perturbed version, so a reader sees what a test changed.

The texts are compared as whitespace-separated words (the unit of the noise ratio, paper Eq. 1)
with :class:`difflib.SequenceMatcher`; the result is a list of ``(words, label)`` segments in
reading order, ``label`` being ``None`` (kept), ``"-"`` (removed from the gold text) or ``"+"``
(added by the perturbation), which is what ``gradio.HighlightedText`` shows.
"""

from __future__ import annotations

import difflib
import html

Segment = tuple[str, "str | None"]

REMOVED = "-"
ADDED = "+"
#: Colours of the two change labels (shared by the highlighted text and the HTML views).
COLORS = {REMOVED: "#f8b4b4", ADDED: "#a7e3b5"}


def word_diff(gold: str, perturbed: str) -> list[Segment]:
    """The segments that turn ``gold`` into ``perturbed``, word by word, in reading order."""
    before, after = gold.split(), perturbed.split()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    segments: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            segments.append((" ".join(before[i1:i2]), None))
            continue
        if op in ("delete", "replace"):
            segments.append((" ".join(before[i1:i2]), REMOVED))
        if op in ("insert", "replace"):
            segments.append((" ".join(after[j1:j2]), ADDED))
    # HighlightedText joins segments as they are: one space between them
    return [(text + (" " if k < len(segments) - 1 else ""), label)
            for k, (text, label) in enumerate(segments)]


def changed_words(segments: list[Segment]) -> dict[str, int]:
    """How many words were removed and added."""
    counts = {REMOVED: 0, ADDED: 0}
    for text, label in segments:
        if label in counts:
            counts[label] += len(text.split())
    return {"removed": counts[REMOVED], "added": counts[ADDED]}


def diff_html(gold: str, perturbed: str) -> str:
    """The word diff as HTML: removed words struck through in red, added words in green."""
    parts = []
    for text, label in word_diff(gold, perturbed):
        escaped = html.escape(text)
        if label == REMOVED:
            parts.append(f'<del style="background:{COLORS[REMOVED]}">{escaped}</del>')
        elif label == ADDED:
            parts.append(f'<ins style="background:{COLORS[ADDED]}">{escaped}</ins>')
        else:
            parts.append(escaped)
    return "".join(parts)
