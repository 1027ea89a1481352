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

from blindspot.scoring.canonical import reference_lists, tokenize_13a
from blindspot.scoring.card import ModuleCard
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


_METEOR_CARD = ModuleCard(
    title="METEOR", emoji="🌠",
    summary=("METEOR (NLTK): a drop-in for evaluate's meteor (same arguments, outputs and values),"
             " plus per-row scores on blindspot's cached scoring layer."),
    description="""\
METEOR (Banerjee & Lavie, 2005) through NLTK: a drop-in for evaluate's canonical ``meteor``.

The same arguments, defaults and output as ``evaluate.load("meteor")``: NLTK's ``meteor_score``
on ``nltk.word_tokenize`` tokens (exact, Porter-stem and WordNet-synonym unigram matches, an
F-mean weighted by ``alpha`` and a fragmentation penalty shaped by ``beta`` and ``gamma``), the
best over a row's references, and ``meteor`` the mean over rows. The WordNet and Punkt data NLTK
needs are installed offline by ``make env``; nothing is downloaded.

Added: ``use_aggregator=False`` gives one score per row (deduplicated and cached), what the
blind-spot protocol judges (``blindspot run --metrics meteor``).""",
    examples="""\
>>> import evaluate
>>> meteor = evaluate.load("blindspot/meteor")
>>> predictions = ["It is a guide to action which ensures that the military always obeys the commands of the party"]
>>> references = ["It is a guide to action that ensures that the military will forever heed Party commands"]
>>> results = meteor.compute(predictions=predictions, references=references)
>>> print(round(results["meteor"], 4))
0.6944
>>> references = [["It is a guide to action that ensures that the military will forever heed Party commands",
...                "It is the guiding principle which guarantees the military forces always being under the command of the Party",
...                "It is the practical guide for the army always to heed the directions of the party"]]
>>> results = meteor.compute(predictions=predictions, references=references)
>>> print(round(results["meteor"], 4))
0.6944
>>> out = meteor.compute(predictions=["The cat sat on the mat.", "A dog barked."],
...                      references=["The cat sat on the mat.", "The bird sang."],
...                      use_aggregator=False)
>>> [round(v, 4) for v in out["meteor"]]
[0.9985, 0.125]
""",  # noqa: E501
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis.
    alpha (float): weight of precision against recall, default 0.9.
    beta (float): shape of the fragmentation penalty, default 3.
    gamma (float): weight of the fragmentation penalty, default 0.5.
    use_aggregator (bool): True (default): the mean over rows; False: one score per row.
Returns:
    meteor: METEOR in [0, 1], higher is better (a list per row with use_aggregator=False).
""",
    citation="""\
@inproceedings{banarjee2005,
  title     = {{METEOR}: An Automatic Metric for {MT} Evaluation with Improved Correlation with Human Judgments},
  author    = {Banerjee, Satanjeev  and Lavie, Alon},
  booktitle = {Proceedings of the {ACL} Workshop on Intrinsic and Extrinsic Evaluation Measures for Machine Translation and/or Summarization},
  month     = jun,
  year      = {2005},
  address   = {Ann Arbor, Michigan},
  publisher = {Association for Computational Linguistics},
  pages     = {65--72},
}
""",  # noqa: E501
    sections="""\
## Metric description
METEOR (Banerjee & Lavie, 2005) aligns the unigrams of a hypothesis with those of a reference
(exact matches, then Porter stems, then WordNet synonyms), takes a recall-weighted harmonic mean
of unigram precision and recall, and lowers it by a fragmentation penalty that counts how many
contiguous chunks the matches fall into. NLTK's `meteor_score`, on `nltk.word_tokenize` tokens.

## Drop-in for evaluate's `meteor`
Offline after `make env`: `evaluate.load("blindspot/meteor")`. The same arguments (`alpha` 0.9, `beta` 3, `gamma` 0.5),
the same output (`meteor`, the mean over rows) and the same values as the canonical module: its
documented example gives 0.6944 here too. WordNet and NLTK's English Punkt tables are assembled
offline at install time (`python -m blindspot.assets`), never downloaded.

Added: `use_aggregator=False` returns one score per row (deduplicated and cached).

## Output
`meteor`: in [0, 1], higher is better.

## Blind-spot runs
`blindspot run --data demo --metrics meteor` judges the per-row score.
""",  # noqa: E501
    requirements=("nltk",),
)


@register_scorer
class Meteor(_NltkScorer):
    """METEOR in [0, 1]: the best over a row's references."""

    name = "meteor"
    card = _METEOR_CARD
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


def google_bleu_module(module: Any, predictions: list[str], references: list[Any],
                       tokenizer: Callable[[str], list[str]] | None = None, min_len: int = 1,
                       max_len: int = 4, use_aggregator: bool = True) -> dict[str, Any]:
    """The ``google_bleu`` module's compute: evaluate's canonical ``google_bleu`` (corpus GLEU),
    or per-row sentence GLEU with ``use_aggregator=False``."""
    if tokenizer is not None:  # a callable has no stable identity to cache scores under
        return {"google_bleu": google_bleu_corpus(predictions, reference_lists(references),
                                                  tokenizer, min_len, max_len)}
    return module.default_compute(predictions, references, use_aggregator=use_aggregator,
                                  level="corpus" if use_aggregator else "sentence",
                                  min_len=min_len, max_len=max_len)


_GOOGLE_BLEU_CARD = ModuleCard(
    title="Google BLEU", emoji="🔤",
    summary=("Google BLEU / GLEU (NLTK): a drop-in for evaluate's google_bleu, plus per-row scores"
             " on blindspot's cached scoring layer."),
    description="""\
Google BLEU (GLEU; Wu et al., 2016) through NLTK: a drop-in for evaluate's ``google_bleu``.

The same arguments, defaults and output as ``evaluate.load("google_bleu")``: NLTK's
``corpus_gleu`` on mteval-13a tokens (``tokenizer``, any str -> list of tokens callable), n-grams
of orders ``min_len`` (1) to ``max_len`` (4). GLEU is the minimum of n-gram precision and recall;
the corpus score sums each row's matches and its larger n-gram total (with several references,
the reference giving the row's best GLEU) before dividing.

Added: ``use_aggregator=False`` gives per-row sentence GLEU (``sentence_gleu``, deduplicated and
cached), what the blind-spot protocol judges (``blindspot run --metrics google_bleu``).""",
    examples="""\
>>> import evaluate
>>> google_bleu = evaluate.load("blindspot/google_bleu")
>>> predictions = ['It is a guide to action which ensures that the rubber duck always disobeys the commands of the cat',
...                'he read the book because he was interested in world history']
>>> references = [['It is the guiding principle which guarantees the rubber duck forces never being under the command of the cat'],
...               ['he was interested in world history because he read the book']]
>>> results = google_bleu.compute(predictions=predictions, references=references)
>>> print(round(results["google_bleu"], 2))
0.44
>>> references = [['It is the guiding principle which guarantees the rubber duck forces never being under the command of the cat',
...                'It is a guide to action that ensures that the rubber duck will never heed the cat commands',
...                'It is the practical guide for the rubber duck army never to heed the directions of the cat'],
...               ['he was interested in world history because he read the book']]
>>> print(round(google_bleu.compute(predictions=predictions, references=references)["google_bleu"], 2))
0.61
>>> print(round(google_bleu.compute(predictions=predictions, references=references, min_len=2)["google_bleu"], 2))
0.53
>>> print(round(google_bleu.compute(predictions=predictions, references=references, min_len=2, max_len=6)["google_bleu"], 2))
0.4
>>> out = google_bleu.compute(predictions=["the cat sat on the mat"],
...                           references=[["the cat ate the mat"]], use_aggregator=False)
>>> [round(v, 4) for v in out["google_bleu"]]
[0.3333]
""",  # noqa: E501
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis.
    tokenizer (callable): str -> list of tokens; default mteval-v13a (as WMT).
    min_len (int): lowest n-gram order, default 1.
    max_len (int): highest n-gram order, default 4.
    use_aggregator (bool): True (default): corpus GLEU, as evaluate's ``google_bleu``; False:
        per-row sentence GLEU (a list), what the blind-spot protocol judges.
Returns:
    google_bleu: GLEU in [0, 1], higher is better.
""",
    citation="""\
@misc{wu2016googles,
      title={Google's Neural Machine Translation System: Bridging the Gap between Human and Machine Translation},
      author={Yonghui Wu and Mike Schuster and Zhifeng Chen and Quoc V. Le and Mohammad Norouzi and others},
      year={2016},
      eprint={1609.08144},
      archivePrefix={arXiv},
      primaryClass={cs.CL}
}
""",  # noqa: E501
    sections="""\
## Metric description
GLEU (Wu et al., 2016) records every n-gram of orders 1 to 4 in the hypothesis and the reference
and takes the minimum of n-gram precision and recall; unlike sentence BLEU it needs no smoothing.
NLTK's `gleu_score`, on mteval-13a tokens.

## Drop-in for evaluate's `google_bleu`
Offline after `make env`: `evaluate.load("blindspot/google_bleu")`. The same arguments
(`tokenizer`, `min_len` 1, `max_len` 4), output and values as the canonical module (its four
documented examples: 0.44, 0.61, 0.53, 0.4). Added: `use_aggregator=False` returns per-row
sentence GLEU (deduplicated and cached), what `blindspot run --metrics google_bleu` judges.

## Output
`google_bleu`: in [0, 1], higher is better.
""",
    requirements=("nltk", "sacrebleu"),
    compute=google_bleu_module,
)


@register_scorer
class GoogleBleu(_NltkScorer):
    """GLEU in [0, 1] per row; ``score_corpus`` pools the counts as the canonical module."""

    name = "google_bleu"
    card = _GOOGLE_BLEU_CARD
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


_NIST_MT_CARD = ModuleCard(
    title="NIST", emoji="🔤",
    summary=("NIST (NLTK): a drop-in for evaluate's nist_mt, plus per-row scores on blindspot's "
             "cached scoring layer."),
    description="""\
NIST (Doddington, 2002) through NLTK: a drop-in for evaluate's canonical ``nist_mt``.

The same arguments, defaults and output as ``evaluate.load("nist_mt")``: NLTK's ``corpus_nist``
on ``NISTTokenizer`` tokens (``lowercase``, ``western_lang``), n-grams up to ``n`` (5). NIST
weights each matched n-gram by its information in the references (rarer continuations count
more), sums over orders (an arithmetic, not geometric, mean) and applies its own brevity
penalty; it is 0 without matches and unbounded above. The perluniprops data the tokenizer reads
is installed offline by ``make env``; nothing is downloaded.

Added: ``use_aggregator=False`` gives per-row ``sentence_nist`` (deduplicated and cached), what
the blind-spot protocol judges (``blindspot run --metrics nist_mt``).""",
    examples="""\
>>> import evaluate
>>> nist_mt = evaluate.load("blindspot/nist_mt")
>>> hypothesis = "It is a guide to action which ensures that the military always obeys the commands of the party"
>>> reference1 = "It is a guide to action that ensures that the military will forever heed Party commands"
>>> reference2 = "It is the guiding principle which guarantees the military forces always being under the command of the Party"
>>> reference3 = "It is the practical guide for the army always to heed the directions of the party"
>>> nist_mt.compute(predictions=[hypothesis], references=[[reference1, reference2, reference3]])
{'nist_mt': 3.3709935957649324}
>>> nist_mt.compute(predictions=[hypothesis], references=[reference1])
{'nist_mt': 2.4477124183006533}
>>> nist_mt.compute(predictions=[hypothesis, "The cat sat."], references=[reference1, "The cat sat."],
...                 use_aggregator=False)
{'nist_mt': [2.4477124183006533, 2.0]}
""",  # noqa: E501
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis.
    n (int): highest n-gram order, default 5.
    lowercase (bool): lower-case before scoring (with western_lang), default False.
    western_lang (bool): NIST's rules for Western languages (punctuation), default True.
    use_aggregator (bool): True (default): corpus NIST, as evaluate's ``nist_mt``; False:
        per-row sentence NIST (a list), what the blind-spot protocol judges.
Returns:
    nist_mt: NIST, >= 0, higher is better.
""",
    citation="""\
@inproceedings{10.5555/1289189.1289273,
    author = {Doddington, George},
    title = {Automatic Evaluation of Machine Translation Quality Using N-Gram Co-Occurrence Statistics},
    year = {2002},
    publisher = {Morgan Kaufmann Publishers Inc.},
    address = {San Francisco, CA, USA},
    booktitle = {Proceedings of the Second International Conference on Human Language Technology Research},
    pages = {138--145},
    series = {HLT '02}
}
""",
    sections="""\
## Metric description
NIST (Doddington, 2002) is BLEU's n-gram co-occurrence with each matched n-gram weighted by its
information in the references (a rarer continuation counts more), an arithmetic mean over orders
and a gentler brevity penalty. NLTK's `nist_score`, on `NISTTokenizer` tokens.

## Drop-in for evaluate's `nist_mt`
Offline after `make env`: `evaluate.load("blindspot/nist_mt")`. The same arguments (`n` 5,
`lowercase`, `western_lang`), output and values as the canonical module (its documented examples:
3.3709935957649324 with three references, 2.4477124183006533 with one). The perluniprops
character classes the tokenizer reads are written offline at install time from Python's Unicode
database. Added: `use_aggregator=False` returns per-row sentence NIST (a row shorter than `n`
tokens is scored with n-grams up to its length, where NLTK would divide by zero), what
`blindspot run --metrics nist_mt` judges.

## Output
`nist_mt`: >= 0, unbounded above, higher is better.
""",
    requirements=("nltk",),
    aggregate="corpus",
)


@register_scorer
class NistMt(_NltkScorer):
    """NIST per row (``sentence_nist``); ``score_corpus`` is the canonical ``corpus_nist``."""

    name = "nist_mt"
    card = _NIST_MT_CARD
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
