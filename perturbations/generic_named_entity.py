"""Generic named entity (blind-spots paper, consistency; Table 16 "Generic Named Entity").

Each named entity of a kind below is, with probability p, replaced by a generic phrase that
destroys its information: FAC/GPE/LOC -> "place", ORG -> "organization", PERSON -> "person",
PRODUCT -> "product" ("She went to the office in Boston." -> "She went to the office in a
place."). Other labels (dates, numbers, NORP...) are left alone. The rules are the release's
(``con-genericner`` of github.com/cloudygoose/blindspot_nlg), written anew:

- the whole entity span is replaced, a determiner spaCy put inside it included ("the United
  States" -> "a place" or "some place");
- an "a", "an" or "the" just before the entity is dropped when the entity stands as a whole
  whitespace word on its right (followed by a space or the end: "the Beatles said"), and kept
  otherwise ("the Beatles' song" -> "the person' song");
- the generic word gets an article unless a kept "a/an/the/some" precedes it or the word before
  it is an adjective or a noun (spaCy POS ADJ, NOUN: "Chelsea boss Jose Mourinho" -> "... boss
  person"), a replaced entity included (it is a generic noun by then: "Airbus A380" -> "an
  organization product"); the article is drawn at random between "some" and the indefinite
  article ("a", "an" before "organization");
- a phrase that starts a sentence is capitalised.

Release over spec: the spec wrote "a"/"an" always ("some" only for plurals), kept the entity's
own determiner and treated possessives and proper nouns before the entity as taking no article;
at p = 1 on CNN/DM that gave a noise ratio of about 0.196 where the release has 0.206. The
release's rules are followed. Its last step re-capitalises every sentence start of the whole
text, which would also "fix" lower-case sentence starts of the gold; only the replacement's own
sentence start is capitalised here.
"""

from __future__ import annotations

import random

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations._switching import starts_sentence
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register
from blindspot.perturbations.text_utils import char_span, replace_spans, trimmed_token_range

GENERIC_WORDS = {"FAC": "place", "GPE": "place", "LOC": "place", "ORG": "organization",
                 "PERSON": "person", "PRODUCT": "product"}
#: articles dropped before a replaced entity that stands as a whole word
DROPPED_ARTICLES = frozenset({"a", "an", "the"})
#: a word before the entity after which no article is added
NO_ARTICLE_AFTER = frozenset({"a", "an", "the", "some"})
#: POS of a word before the entity after which no article is added
NO_ARTICLE_POS = frozenset({"ADJ", "NOUN"})
Edit = tuple[int, int, str]


def indefinite_article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _previous(tokens: tuple[Token, ...], i: int) -> Token | None:
    """The token before token ``i`` in the same sentence (None at a sentence start)."""
    return None if starts_sentence(tokens[i]) else tokens[i - 1]


def _stands_alone(text: str, end: int) -> bool:
    """Whether the entity ending at ``end`` is followed by whitespace or the end of the text."""
    return end == len(text) or text[end].isspace()


def generic_edit(parsed: ParsedText, start: int, end: int, word: str, rng: random.Random,
                 replaced_ends: frozenset[int] = frozenset()) -> Edit:
    """The edit that turns entity tokens [start, end) into a generic phrase around ``word``;
    ``replaced_ends`` are the last token indices of the other entities being replaced."""
    tokens, text = parsed.tokens, parsed.text
    lo, hi = char_span(tokens, start, end)
    first = tokens[start]
    prev = _previous(tokens, start)
    if (prev is not None and prev.text.lower() in DROPPED_ARTICLES and prev.ws
            and _stands_alone(text, hi)):
        lo, first = prev.idx, prev
        prev = _previous(tokens, prev.i)
    phrase = word
    if prev is None or (prev.text.lower() not in NO_ARTICLE_AFTER
                        and prev.pos not in NO_ARTICLE_POS and prev.i not in replaced_ends):
        phrase = f"{rng.choice(('some', indefinite_article(word)))} {word}"
    if starts_sentence(first):
        phrase = _capitalise(phrase)
    return lo, hi, phrase


@register
class GenericNamedEntity(Perturbation):
    name = "generic_named_entity"
    aliases = ("generic named entity", "generic ne", "generic entity", "generic-named-entity")
    category = "consistency"
    description = ("Replace each place/organization/person/product entity with probability p by "
                   "a generic phrase ('a place', 'some person').")
    level_kind = Ratio(0.0, 1.0)
    levels = {"summarization": (0.5, 1.0), "translation": (0.5, 1.0), "open_ended": (0.5, 1.0)}
    needs_parse = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        parsed = row.parsed
        if parsed is None:
            return None
        chosen: list[tuple[int, int, str]] = []
        for start, end, label in parsed.ents:
            word = GENERIC_WORDS.get(label)
            trimmed = trimmed_token_range(parsed.tokens, start, end)
            if word is None or trimmed is None:
                continue
            if rng.random() < level:
                chosen.append((*trimmed, word))
        ends = frozenset(end - 1 for _, end, _ in chosen)
        edits = [generic_edit(parsed, start, end, word, rng, ends) for start, end, word in chosen]
        return replace_spans(parsed.text, edits) if edits else None
