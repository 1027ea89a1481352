"""Middle swap (blind-spots paper, fluency; Table 16 "Middle Swap").

In K random sentences (every sentence when the text has fewer than K) the sentence's tokens are
cut in the middle and the second half is moved before the first: "She went to the office." ->
"The office She went to.". The algorithm is the release's (``flu-sentencemiddleswap`` of
github.com/cloudygoose/blindspot_nlg), written anew:

- the K sentences are drawn uniformly among all the text's sentences, without replacement; a
  sentence of one token (or one whose second half is empty) is drawn but left as it is;
- tokens are NLTK's word tokens (``NLTKWordTokenizer``, what ``word_tokenize`` uses: punctuation,
  quotes, "'s" and "n't" are tokens of their own), and the cut is at ceil(tokens / 2), the final
  token included in the count;
- a final "." stays at the end; any other final token ("?", "!", a closing quote) moves with its
  half, as in the release;
- a sentence-initial "the, in, a, on, at, around, when, and" is lower-cased (any other first word,
  "She", "Police", keeps its capital); a comma that would open the new sentence, or stand just
  before its final ".", is dropped;
- the new sentence is NLTK-detokenised (``TreebankWordDetokenizer``) and its first letter
  capitalised. The text outside the swapped sentences is kept character for character.

Release over spec: the spec cut ceil(words / 2) without the final punctuation, kept "? !" at the
end, lower-cased every function word by its POS (so "she" above), and drew only sentences that
could be swapped; all four made the noise ratio drift above the release's (about 0.27/0.35 at
K = 2/3 on CNN/DM where the release has 0.26/0.32). The release's own detokenisation also runs
regular expressions that put a space after every "," and "." ("1,000" -> "1, 000", "3.5" ->
"3. 5"); that splits numbers rather than swapping words and is not reproduced.

Sentences are spaCy's (the project's one sentence splitter), the release's were NLTK Punkt's.
A sentence is one edit however long: the test is a swap, so its noise ratio is halved.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache
from typing import Any

from blindspot.perturbations._fluency_edits import parse_of
from blindspot.perturbations.perturbation import Count, Perturbation, Row, register
from blindspot.perturbations.text_utils import replace_spans, sentence_char_spans

#: first words the release lower-cases when they move into the sentence
LOWERED_FIRST_WORDS = frozenset({"the", "in", "a", "on", "at", "around", "when", "and"})
_PARAGRAPH_LEVELS = (1, 2, 3)


@lru_cache(maxsize=1)
def nltk_word_tools() -> tuple[Any, Any]:
    """NLTK's word tokenizer and Treebank detokenizer, imported on first use: ``import nltk``
    pulls in scipy.stats and takes seconds, which every other test and command would pay."""
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.treebank import TreebankWordDetokenizer

    return NLTKWordTokenizer(), TreebankWordDetokenizer()


def swap_halves(sentence: str) -> str | None:
    """One sentence with its token halves swapped; None when nothing would move."""
    tokenizer, detokenizer = nltk_word_tools()
    tokens = tokenizer.tokenize(sentence)
    if len(tokens) <= 1:
        return None
    cut = math.ceil(len(tokens) / 2)
    if tokens[0].lower() in LOWERED_FIRST_WORDS:
        tokens[0] = tokens[0].lower()
    if tokens[-1] == ".":
        first, second, end = tokens[:cut], tokens[cut:-1], ["."]
    else:
        first, second, end = tokens[:cut], tokens[cut:], []
    if not second:
        return None
    if second[0] == ",":
        second = second[1:]
    if end and first[-1] == ",":
        first = first[:-1]
    moved = detokenizer.detokenize(second + first + end)
    return moved[:1].upper() + moved[1:]


def middle_swap(row: Row, k: int, rng: random.Random) -> str | None:
    """The row's text with the halves of K random sentences swapped (None: nothing moved)."""
    parsed = parse_of(row.text, row.parsed)
    if parsed is None:
        return None
    spans = sentence_char_spans(parsed)
    edits = []
    for start, end in rng.sample(spans, min(k, len(spans))):
        new = swap_halves(parsed.text[start:end])
        if new is not None:
            edits.append((start, end, new))
    return replace_spans(parsed.text, edits) if edits else None


@register
class MiddleSwap(Perturbation):
    name = "middle_swap"
    category = "fluency"
    description = "In K random sentences, move the second half of the words before the first."
    level_kind = Count(1)
    whitespace_words = True
    levels = {"summarization": _PARAGRAPH_LEVELS, "translation": (1,),
              "translation_paragraph": _PARAGRAPH_LEVELS, "open_ended": _PARAGRAPH_LEVELS}
    swap = True
    needs_parse = True
    preloads = (nltk_word_tools,)

    def perturb(self, row: Row, level: int, rng: random.Random) -> str | None:
        return middle_swap(row, level, rng)
