"""METEOR, Google BLEU (GLEU) and NIST through NLTK, as evaluate's canonical ``meteor``,
``google_bleu`` and ``nist_mt`` compute them.

* ``meteor`` (Banerjee & Lavie, 2005): NLTK's ``meteor_score`` on ``word_tokenize`` tokens
  (exact, Porter-stem and WordNet-synonym matches; alpha 0.9, beta 3, gamma 0.5), the best over
  a row's references. The canonical module's score is the mean over rows.
* ``google_bleu`` (Wu et al., 2016): NLTK's GLEU on mteval-13a tokens, n-grams of orders
  ``min_len``..``max_len`` (1..4): the minimum of n-gram precision and recall, the best over
  references per row (``sentence_gleu``); the corpus score pools the counts (``corpus_gleu``),
  which is the canonical module's.
* ``nist_mt`` (Doddington, 2002): NLTK's NIST on ``NISTTokenizer`` tokens, n-grams up to ``n``
  (5), information-weighted by the references; per row ``sentence_nist``, the corpus score
  ``corpus_nist`` (the canonical module's). Unbounded above, 0 for no match. NLTK fails on a
  hypothesis shorter than ``n`` tokens (no n-gram of the top order to divide by): such a row is
  scored with n-grams up to its own length, an empty one 0.

The NLTK data they read (WordNet, the English Punkt tables, perluniprops) is put in place by
``python -m blindspot.assets`` (``make env``); nothing is downloaded at run time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from importlib import metadata
from types import MappingProxyType
from typing import Any

from blindspot.scoring.canonical import tokenize_13a
from blindspot.scoring.scorer import Reference, ScoreInput, Scorer, register_scorer


class _NltkScorer(Scorer):
    """Shared by the three: model-free, required references, one NLTK version as revision."""

    model_option = None
    kind = "lexical"
    library = "nltk"
    uses_references = "required"
    default_batch_size = 256

    def model_revision(self) -> str:
        return f"nltk-{metadata.version('nltk')}"


@functools.lru_cache(maxsize=65536)
def meteor_tokens(text: str) -> tuple[str, ...]:
    """The canonical ``meteor`` module's tokens: ``nltk.word_tokenize`` (Punkt + Treebank)."""
    from nltk import word_tokenize  # lazy: importing nltk takes about a second

    return tuple(word_tokenize(text))


@register_scorer
class Meteor(_NltkScorer):
    """METEOR in [0, 1]: the best over a row's references."""

    name = "meteor"
    outputs = ("meteor",)
    natural_ranges = MappingProxyType({"meteor": (0.0, 1.0)})
    reference = Reference(
        "nltk 3.10.4 (meteor_score; evaluate's meteor)", max_abs_diff=0.0, rows=200,
        differs="Sai et al.'s METEOR is METEOR 1.5, the Java release (through nlg-eval), with "
                "paraphrase matches: another number, not measured here")
    def __init__(self, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5) -> None:
        for key, value in (("alpha", alpha), ("beta", beta), ("gamma", gamma)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"meteor option {key} must be a number, got {value!r}")
        super().__init__(alpha=float(alpha), beta=float(beta), gamma=float(gamma))

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        from nltk.translate.meteor_score import meteor_score

        return [{"meteor": float(meteor_score([meteor_tokens(r) for r in item.references],
                                              meteor_tokens(item.hypothesis), **self.config))}
                for item in batch]


@register_scorer
class GoogleBleu(_NltkScorer):
    """GLEU in [0, 1] per row; ``score_corpus`` pools the counts as the canonical module."""

    name = "google_bleu"
    outputs = ("google_bleu",)
    natural_ranges = MappingProxyType({"google_bleu": (0.0, 1.0)})
    reference = Reference("nltk 3.10.4 (sentence_gleu; evaluate's google_bleu)", max_abs_diff=0.0,
                          rows=200)
    def __init__(self, min_len: int = 1, max_len: int = 4) -> None:
        if not (isinstance(min_len, int) and isinstance(max_len, int) and 1 <= min_len <= max_len):
            raise ValueError(f"google_bleu needs whole numbers 1 <= min_len <= max_len, got "
                             f"min_len={min_len!r}, max_len={max_len!r}")
        super().__init__(min_len=min_len, max_len=max_len)

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        from nltk.translate.gleu_score import sentence_gleu

        return [{"google_bleu": float(sentence_gleu(
            [tokenize_13a(r) for r in item.references], tokenize_13a(item.hypothesis),
            **self.config))} for item in batch]

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        return {"google_bleu": google_bleu_corpus([i.hypothesis for i in inputs],
                                                  [list(i.references) for i in inputs],
                                                  tokenize_13a, **self.config)}


def google_bleu_corpus(predictions: Sequence[str], references: Sequence[Sequence[str]],
                       tokenizer: Callable[[str], list[str]], min_len: int = 1,
                       max_len: int = 4) -> float:
    """NLTK's ``corpus_gleu`` of untokenized texts with ``tokenizer``."""
    from nltk.translate.gleu_score import corpus_gleu

    return float(corpus_gleu([[tokenizer(r) for r in refs] for refs in references],
                             [tokenizer(p) for p in predictions], min_len=min_len,
                             max_len=max_len))


@register_scorer
class NistMt(_NltkScorer):
    """NIST per row (``sentence_nist``); ``score_corpus`` is the canonical ``corpus_nist``."""

    name = "nist_mt"
    outputs = ("nist_mt",)
    reference = Reference(
        "nltk 3.10.4 (sentence_nist; evaluate's nist_mt)", max_abs_diff=0.0, rows=196,
        differs="a hypothesis shorter than n tokens, where NLTK fails (4 of 200 rows), is scored "
                "up to its length")
    def __init__(self, n: int = 5, lowercase: bool = False, western_lang: bool = True) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"nist_mt option n must be a whole number >= 1, got {n!r}")
        for key, value in (("lowercase", lowercase), ("western_lang", western_lang)):
            if not isinstance(value, bool):
                raise ValueError(f"nist_mt option {key} must be True or False, got {value!r}")
        super().__init__(n=n, lowercase=lowercase, western_lang=western_lang)
        self._tokenizer: Any = None

    def _tokens(self, text: str) -> list[str]:
        if self._tokenizer is None:
            from nltk.tokenize.nist import NISTTokenizer

            self._tokenizer = NISTTokenizer()
        return list(self._tokenizer.tokenize(text, return_str=False,
                                             lowercase=self.config["lowercase"],
                                             western_lang=self.config["western_lang"]))

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        from nltk.translate.nist_score import sentence_nist

        rows = []
        for item in batch:
            hypothesis = self._tokens(item.hypothesis)
            # NLTK divides by the hypothesis's n-gram count of each order: a row shorter than
            # n tokens is scored up to its own length (0 for an empty one) instead of failing
            order = min(self.config["n"], len(hypothesis))
            rows.append({"nist_mt": float(sentence_nist(
                [self._tokens(r) for r in item.references], hypothesis, n=order))
                if order else 0.0})
        return rows

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        from nltk.translate.nist_score import corpus_nist

        return {"nist_mt": float(corpus_nist(
            [[self._tokens(r) for r in i.references] for i in inputs],
            [self._tokens(i.hypothesis) for i in inputs], n=self.config["n"]))}
