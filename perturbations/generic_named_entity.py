"""Generic named entity (blind-spots paper, consistency; Table 16 "Generic Named Entity").

Each named entity of a kind below is, with probability p, replaced by a generic phrase that
destroys its information: FAC/GPE/LOC -> "place", ORG -> "organization", PERSON -> "person",
PRODUCT -> "product" ("She went to the office in Boston." -> "She went to the office in a
place."). Other labels (dates, numbers, NORP...) are left alone.

Spec ambiguities resolved:
- Article: the paper's example gives "a place", so the indefinite article is "a"/"an" by the
  generic word's first letter; "some" is used for a plural entity (tagged NNPS/NNS, e.g. "the
  Beatles" without its determiner -> "some person"), where "a" would be wrong.
- No article when the word before, in the same sentence, is a determiner, adjective, noun,
  possessive pronoun or possessive 's ("the Boston office" -> "the place office",
  "Apple CEO Tim Cook" -> "an organization CEO person"). An entity that spaCy starts with its
  own determiner ("the United States") keeps it: "the place". A preceding "a"/"an" is fitted to
  the generic word ("a Apple product" -> "an organization product").
- A replacement that starts a sentence is capitalised ("A person said ...").
"""

from __future__ import annotations

import random

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations._switching import starts_sentence
from blindspot.perturbations.base import Perturbation, Ratio, Row, register
from blindspot.perturbations.text_utils import char_span, replace_spans, trimmed_token_range

GENERIC_WORDS = {"FAC": "place", "GPE": "place", "LOC": "place", "ORG": "organization",
                 "PERSON": "person", "PRODUCT": "product"}
_NO_ARTICLE_POS = frozenset({"DET", "ADJ", "NOUN", "PROPN"})
_NO_ARTICLE_TAG = frozenset({"PRP$", "WP$", "POS"})
_PLURAL_TAGS = frozenset({"NNPS", "NNS"})
Edit = tuple[int, int, str]


def indefinite_article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _takes_no_article(prev: Token | None) -> bool:
    """Whether a determiner, adjective, noun or possessive already precedes the entity."""
    return prev is not None and (prev.pos in _NO_ARTICLE_POS or prev.tag in _NO_ARTICLE_TAG)


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def generic_edits(parsed: ParsedText, start: int, end: int, word: str) -> list[Edit]:
    """The edits that turn entity tokens [start, end) into a generic phrase around ``word``."""
    tokens = parsed.tokens
    if tokens[start].pos == "DET" and end - start > 1:
        start += 1  # keep the entity's own determiner: "the United States" -> "the place"
    first = tokens[start]
    prev = None if starts_sentence(first) else tokens[start - 1]
    lo, hi = char_span(tokens, start, end)
    edits: list[Edit] = []
    if _takes_no_article(prev):
        phrase = word
        if prev is not None and prev.text.lower() in ("a", "an"):
            article = indefinite_article(word)
            article = _capitalise(article) if prev.text[:1].isupper() else article
            edits.append((prev.idx, prev.idx + len(prev.text), article))
    else:
        article = "some" if tokens[end - 1].tag in _PLURAL_TAGS else indefinite_article(word)
        phrase = f"{article} {word}"
    if starts_sentence(first):
        phrase = _capitalise(phrase)
    edits.append((lo, hi, phrase))
    return edits


@register
class GenericNamedEntity(Perturbation):
    name = "generic_named_entity"
    aliases = ("generic named entity", "generic ne", "generic entity", "generic-named-entity")
    category = "consistency"
    description = ("Replace each place/organization/person/product entity with probability p by "
                   "a generic phrase ('a place', 'a person').")
    level_kind = Ratio(0.0, 1.0)
    levels = {"summarization": (0.5, 1.0), "translation": (0.5, 1.0), "open_ended": (0.5, 1.0)}
    needs_parse = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        parsed = row.parsed
        if parsed is None:
            return None
        edits: list[Edit] = []
        for start, end, label in parsed.ents:
            word = GENERIC_WORDS.get(label)
            trimmed = trimmed_token_range(parsed.tokens, start, end)
            if word is None or trimmed is None:
                continue
            if rng.random() < level:
                edits.extend(generic_edits(parsed, *trimmed, word))
        return replace_spans(parsed.text, edits) if edits else None
