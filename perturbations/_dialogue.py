"""Reading a dialogue context (the ``source`` of a dialogue row) as utterances.

Turns are separated by newlines or DailyDialog's ``__eou__`` marker; a leading speaker label
("Bot:", "User:", "A:") is not part of the utterance. Two speakers alternate, so the response's
speaker said the second-to-last utterance of the context.
"""

from __future__ import annotations

import re

_TURNS = re.compile(r"\s*(?:\n|__eou__)\s*")
_LABEL = re.compile(r"^[A-Za-z][\w .'-]{0,19}:\s+")


def utterances(context: str | None) -> list[str]:
    """The context's utterances, without speaker labels and empty turns."""
    if not context:
        return []
    turns = (_LABEL.sub("", t.strip()) for t in _TURNS.split(context))
    return [t for t in turns if t]


def same_speaker_previous(context: str | None) -> str | None:
    """The latest utterance of the responding speaker (the second-to-last turn), or None."""
    turns = utterances(context)
    return turns[-2] if len(turns) >= 2 else None
