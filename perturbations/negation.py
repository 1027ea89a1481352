"""Negation (blind-spots paper, consistency; Table 16 "Negation").

Each sentence is, with probability p, negated with CheckList's ``Perturb.add_negation`` ("She went
to the store." -> "She didn't go to the store."), run on a spaCy ``Doc`` rebuilt from the stored
parse of that sentence alone (the pipeline is never run again). When CheckList cannot negate it
(no verb root, a question, already negated...), a small rule fallback is tried:
- a negated sentence loses its first negation: "not"/"never" are dropped, "didn't" -> "did",
  "can't" -> "can", "won't" -> "will" (CheckList adds negation only, so this flips the meaning
  of sentences it refuses because they are negative already);
- otherwise "not" goes after the sentence's first auxiliary ("are" -> "are not").
A sentence neither can change is kept.

CheckList re-joins the pieces around its edit with single spaces; the spacing at the two joins
is repaired against the original sentence ("She left." -> "She didn't leave.", not "leave ."),
and the sentence's first letter keeps its case. CheckList is deterministic (pattern's tense tables),
so the output depends only on the row's random stream. CheckList is imported on first use
(a multi-second import).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from blindspot.parsing import ParsedText, get_parser
from blindspot.perturbations._checklist import checklist_perturb
from blindspot.perturbations._switching import is_title_word
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register
from blindspot.perturbations.text_utils import char_span, join_tokens, replace_spans, sentence_token_ranges

_CONTRACTIONS = frozenset({"n't", "n’t"})
NEGATIONS = frozenset({"not", "never"}) | _CONTRACTIONS
#: the auxiliary that a contracted "n't" leaves behind, when it is not the plain word
_CONTRACTED_AUX = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}


@lru_cache(maxsize=1)
def checklist_negator() -> Any:
    """CheckList's ``Perturb.add_negation`` (imported once, on first use)."""
    return checklist_perturb().add_negation


def sentence_doc(parsed: ParsedText, start: int, end: int) -> Any:
    """A spaCy Doc of tokens [start, end) alone, rebuilt from the parse (heads re-indexed)."""
    offset = parsed.tokens[start].idx
    tokens = tuple(
        t._replace(i=t.i - start, idx=t.idx - offset,
                   head=t.head - start if start <= t.head < end else t.i - start,
                   sent_start=t.i == start)
        for t in parsed.tokens[start:end])
    return ParsedText(join_tokens(tokens), tokens).to_doc(get_parser().nlp.vocab)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def repair_joins(original: str, negated: str) -> str:
    """``negated`` with the spaces CheckList put at its joins fitted back to ``original``.

    The edit is the middle part that differs; a space at its end is dropped when the original had
    none there (before "." or ","), and a leading one when the edit opens the sentence.
    """
    p = _common_prefix(original, negated)
    q = _common_prefix(original[p:][::-1], negated[p:][::-1])
    old_mid_end = len(original) - q
    new_mid = negated[p:len(negated) - q]
    if new_mid.endswith(" ") and q and old_mid_end > 0 and not original[old_mid_end - 1].isspace() \
            and not original[old_mid_end].isspace():
        new_mid = new_mid.rstrip(" ")
    if p == 0:  # the edit opens the sentence: CheckList's join left a space in front
        new_mid = new_mid.lstrip(" ")
    out = negated[:p] + new_mid + negated[len(negated) - q:]
    return _fit_sentence_start(original, out) if p == 0 else out


def _fit_sentence_start(original: str, out: str) -> str:
    """After an edit at the very start: capitalise the new first word and lower-case the old one
    where it moved on ("Running fast." -> "Not running fast.")."""
    first = original.split(maxsplit=1)[0] if original.strip() else ""
    words = out.split(" ")
    if is_title_word(first) and words[0] != first:
        # CheckList inserts at most two words ("not", "don't go") before the old first word
        moved = next((k for k in range(1, min(3, len(words))) if words[k] == first), None)
        if moved is not None:
            words[moved] = first[0].lower() + first[1:]
            out = " ".join(words)
    return out[:1].upper() + out[1:] if original[:1].isupper() else out


def checklist_negation(parsed: ParsedText, start: int, end: int) -> str | None:
    """CheckList's negation of sentence tokens [start, end), spacing repaired, or None."""
    try:
        negated = checklist_negator()(sentence_doc(parsed, start, end))
    except Exception:  # CheckList assumes well-formed parses (a ROOT, known tenses...)
        return None
    if not negated or not negated.strip():
        return None
    lo, hi = char_span(parsed.tokens, start, end)
    return repair_joins(parsed.text[lo:hi], negated.strip())


def remove_negation(parsed: ParsedText, start: int, end: int) -> str | None:
    """The sentence without its first negation word ("didn't" -> "did"), or None if it has none."""
    tokens = parsed.tokens[start:end]
    at = next((k for k, t in enumerate(tokens) if t.text.lower() in NEGATIONS), None)
    if at is None:
        return None
    pieces = list(tokens)
    if at > 0:
        prev, gone = tokens[at - 1], tokens[at]
        if gone.text.lower() in _CONTRACTIONS:  # "ca" + "n't" -> "can"
            word = _CONTRACTED_AUX.get(prev.text.lower(), prev.text)
            pieces[at - 1] = prev._replace(text=prev.text[:1] + word[1:], ws=gone.ws)
        elif not prev.ws:  # "can" + "not" -> "can"
            pieces[at - 1] = prev._replace(ws=gone.ws)
    del pieces[at]
    out = join_tokens(pieces).strip()
    return out[:1].upper() + out[1:] if tokens[0].text[:1].isupper() else out


def add_not_after_aux(parsed: ParsedText, start: int, end: int) -> str | None:
    """The sentence with "not" after its first auxiliary ("are" -> "are not"), or None."""
    tokens = list(parsed.tokens[start:end])
    at = next((k for k, t in enumerate(tokens) if t.pos == "AUX"), None)
    if at is None:
        return None
    aux = tokens[at]
    tokens[at] = aux._replace(text=f"{aux.text} not")
    return join_tokens(tokens).strip()


def negate_sentence(parsed: ParsedText, start: int, end: int) -> str | None:
    """Sentence tokens [start, end) negated by CheckList, else by the rule fallback, else None."""
    return (checklist_negation(parsed, start, end) or remove_negation(parsed, start, end)
            or add_not_after_aux(parsed, start, end))


def negate_sentences(parsed: ParsedText, negate: Callable[[ParsedText, int, int], str | None]
                     = negate_sentence, chosen: Callable[[], bool] = lambda: True) -> str | None:
    """``parsed.text`` with each sentence that ``chosen()`` picks (asked once per sentence, in
    order) replaced by ``negate``'s version; None when no sentence changed. The one sentence loop
    of every negation test (negation, MENLI's, the examination's root negation, dialogue's)."""
    edits = []
    for start, end in sentence_token_ranges(parsed):
        if not chosen():
            continue
        negated = negate(parsed, start, end)
        if negated is not None:
            edits.append((*char_span(parsed.tokens, start, end), negated))
    return replace_spans(parsed.text, edits) if edits else None


@register
class Negation(Perturbation):
    name = "negation"
    aliases = ("negate", "sentence negation")
    category = "consistency"
    description = "Negate each sentence with probability p (CheckList add_negation, rule fallback)."
    level_kind = Ratio(0.0, 1.0)
    levels = {task: (0.5, 1.0) for task in
              ("summarization", "translation", "translation_paragraph", "open_ended")}
    needs_parse = True
    preloads = (checklist_negator,)

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        return negate_sentences(row.parsed, chosen=lambda: rng.random() < level)
