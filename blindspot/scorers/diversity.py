"""Reference-free diversity / degeneration scores: negated rep-n and n-gram entropy.

Both work on the tokens of the hypothesis alone. Tokens are whitespace-separated words by
default (model-free and deterministic); ``tokenizer=<name or folder>`` uses a Hugging Face
tokenizer instead (Welleck et al. count GPT-2 BPE tokens: ``tokenizer="gpt2"`` where the Hub is
reachable, ``"smollm2"`` offline). Text is not lower-cased or otherwise normalised.

* ``rep_ngram`` -- the negation of Welleck et al. (2020)'s *seq-rep-n* of one sequence,
  ``1 - |unique n-grams| / |n-grams|``, i.e. the fraction of the text's n-gram occurrences that
  repeat an earlier one. Negated so that higher is better (``-rep``, in [-1, 0]); a text with
  fewer than n tokens has no n-grams and scores 0 (nothing is repeated). The blind-spots paper
  reports it as "n-rep-4gram" (n = 4, the default). Corpus level is Welleck et al.'s aggregate:
  the mean of the per-sequence values.
* ``ngram_entropy`` -- Zhang et al. (2018)'s Ent-n: the entropy
  ``-sum_g p(g) log p(g)`` of the empirical n-gram distribution, ``p(g) = count(g) / total``
  (natural log by default; ``log_base=2`` for bits). Per row it is the entropy of that text's
  n-grams; at corpus level the counts of all texts are pooled, as Zhang et al. compute it over
  all generated responses. Higher is more diverse; no n-grams gives 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from blindspot.models import load_tokenizer, model_revision
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, Scorer, register_scorer

WHITESPACE = "whitespace"


def ngram_counts(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    """How often each n-gram (a tuple of n consecutive tokens) occurs in ``tokens``."""
    return Counter(tuple(tokens[i: i + n]) for i in range(len(tokens) - n + 1))


def repetition_rate(counts: Counter[tuple[str, ...]]) -> float:
    """seq-rep-n: ``1 - unique / total`` n-grams; 0.0 when there are none."""
    total = sum(counts.values())
    return 1.0 - len(counts) / total if total else 0.0


def entropy(counts: Counter[Any], log_base: float = math.e) -> float:
    """Entropy of the empirical distribution given by ``counts`` (0.0 when empty)."""
    total = sum(counts.values())
    if not total:
        return 0.0
    value = -sum(c / total * math.log(c / total) for c in counts.values())
    return max(0.0, value) / math.log(log_base)  # max(): no -0.0 for a single n-gram


def _check_n(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return n


class _NgramScorer(Scorer):
    """Shared by the diversity scorers: options ``n`` and ``tokenizer``, tokenising once per text."""

    uses_references = "none"
    default_batch_size = 1024
    model_option = "tokenizer"
    kind = "lexical"  # whitespace words by default; a tokenizer only when one is named

    def __init__(self, n: int = 4, tokenizer: str = WHITESPACE, **config: Any) -> None:
        super().__init__(n=_check_n(n), tokenizer=str(tokenizer), **config)
        self._split: Callable[[str], list[str]] | None = None

    def tokens(self, text: str) -> list[str]:
        """The tokens that n-grams are built from (whitespace words or subword tokens)."""
        if self._split is None:
            self._split = self._make_split()
        return self._split(text)

    def _make_split(self) -> Callable[[str], list[str]]:
        if self.config["tokenizer"] == WHITESPACE:
            return str.split
        hf = load_tokenizer(self.config["tokenizer"])
        return lambda text: hf.tokenize(text)

    def counts(self, item: ScoreInput) -> Counter[tuple[str, ...]]:
        return ngram_counts(self.tokens(item.hypothesis), self.config["n"])

    def model_revision(self) -> str:
        if self.config["tokenizer"] == WHITESPACE:
            return ""
        return model_revision(self.config["tokenizer"])


_REP_NGRAM_CARD = ModuleCard(
    title="rep-n", emoji="🔁",
    summary=("Negated rep-n (Welleck et al.'s seq-rep-n, n = 4): reference-free repetition score "
             "on blindspot's cached scoring layer."),
    description="""\
Negated rep-n (Welleck et al., 2020's seq-rep-n), on blindspot's cached scoring layer.

Reference-free degeneration score of one text: the fraction of its n-gram occurrences that
repeat an n-gram seen earlier in the same text, ``rep-n = 1 - |unique n-grams| / |n-grams|``,
NEGATED so that higher is better: ``rep_ngram = -rep-n`` in [-1, 0]; 0 means no repeated n-gram.
n = 4 by default (the blind-spots paper's "n-rep-4gram"). A text with fewer than n tokens has no
n-grams and scores 0. Tokens are whitespace-separated words (no lower-casing); ``tokenizer=``
a Hugging Face tokenizer name or folder counts subword tokens instead (Welleck et al. used GPT-2
BPE: ``tokenizer="gpt2"`` where the Hub is reachable). ``level="corpus"`` is the mean over texts,
the aggregate Welleck et al. report. Diversity of several texts together is ``ngram_entropy``
at corpus level.""",
    examples="""\
>>> import evaluate
>>> rep = evaluate.load("blindspot/rep_ngram")
>>> text = "the cat sat on the mat and the cat sat on the hat"
>>> out = rep.compute(predictions=[text, "no repeats in here at all"], use_aggregator=False)
>>> [round(v, 4) for v in out["rep_ngram"]]  # 10 4-grams, 8 distinct: -(1 - 8/10)
[-0.2, 0.0]
>>> round(rep.compute(predictions=[text], n=2)["rep_ngram"], 4)  # 12 bigrams, 8 distinct
-0.3333
""",
    inputs="""\
Args:
    predictions (list of str): texts (no references).
    n (int): n-gram order, default 4.
    tokenizer (str): "whitespace" (default) or a Hugging Face tokenizer name / folder.
    use_aggregator (bool): mean over rows (default) or per-row lists.
    level (str): "sentence" (default) or "corpus" (the mean over texts).
Returns:
    rep_ngram: -(1 - unique/total n-grams) in [-1, 0], higher is better (less repetition).
""",
    citation="""\
@inproceedings{welleck-etal-2020-neural,
    title = "Neural Text Generation With Unlikelihood Training",
    author = "Welleck, Sean and Kulikov, Ilia and Roller, Stephen and Dinan, Emily and Cho, Kyunghyun and Weston, Jason",
    booktitle = "International Conference on Learning Representations",
    year = "2020",
}
""",  # noqa: E501
    sections="""\
## Metric description
rep-n measures degeneration by repetition inside one text. This module implements Welleck et
al. (2020)'s **seq-rep-n** of a single sequence:

    rep-n(x) = 1 - |unique n-grams of x| / |n-grams of x|

the fraction of n-gram occurrences that repeat an n-gram seen earlier in the same text. It is
**negated** so that higher is better, as in the blind-spots paper's "n-rep-4gram":
`rep_ngram = -rep-n`, in [-1, 0], 0 meaning no n-gram occurs twice. No references are used.

Definitions: n = 4 by default; tokens are whitespace-separated words, case kept (`tokenizer=` a
Hugging Face tokenizer name or folder counts subword tokens instead; Welleck et al. used GPT-2
BPE tokens, `tokenizer="gpt2"` where the Hub is reachable); a text with fewer than n tokens has
no n-grams and scores 0. Other rep variants (Welleck et al.'s token-level rep/l, or the corpus
fraction of repeated n-grams) are not implemented.

## How to use
```python
import evaluate
rep = evaluate.load("blindspot/rep_ngram")
rep.compute(predictions=["the cat sat on the mat and the cat sat on the hat"], use_aggregator=False)
# {'rep_ngram': [-0.2]}    10 4-grams, 8 distinct
rep.compute(predictions=texts, n=2)                 # mean negated rep-2
```
Options: `n` (default 4), `tokenizer` (default "whitespace"); `use_aggregator=False` for per-row
scores; `level="corpus"` is the mean over texts (Welleck et al.'s aggregate, same as the default
aggregation).

## Output
`rep_ngram`: in [-1, 0], higher is better (less repetition).

## Paper default and variants
He et al. (2023) report negated rep-4gram (Welleck et al., 2020) on WikiText beside GPT-PPL and
MLM-PPL in the frequent n-gram test (Table 4, App. G) and the repetition test (Table 13). Variant:
the n-gram order (Welleck et al. report n = 4 for sequence-level repetition).

## Blind spots the papers found
rep-4gram is the diversity check the blind-spots paper recommends next to PPL metrics: it drops
for the frequent 4-gram sequences (most for the top-10 4-grams) and for the appended repetitions
(more with every extra copy) that GPT-PPL and MLM-PPL reward. The papers do not stress-test
rep-n itself; by construction it sees only exact n-gram repeats within one text, so it is blind
to everything else: incoherent or shuffled text, wrong facts, truncation and disfluencies that
create no repeated n-gram, and near-repeats that differ in one token or in case.
""",
)


@register_scorer
class RepNgram(_NgramScorer):
    """Negated seq-rep-n (Welleck et al., 2020): ``-(1 - unique n-grams / n-grams)``, n = 4."""

    name = "rep_ngram"
    card = _REP_NGRAM_CARD
    outputs = ("rep_ngram",)
    reference = Reference(
        "Welleck et al. (2020)'s seq-rep-n, written from its formula (no released script runs "
        "here)", differs="negated; tokens are whitespace words where Welleck et al. count "
        "GPT-2 tokens (tokenizer=\"gpt2\")")
    def __init__(self, n: int = 4, tokenizer: str = WHITESPACE) -> None:
        super().__init__(n=n, tokenizer=tokenizer)

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        return [{"rep_ngram": -repetition_rate(self.counts(item)) + 0.0} for item in batch]

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        """Welleck et al.'s aggregate: the mean of the per-sequence values."""
        rows = self.score_batch(inputs)
        return {"rep_ngram": sum(r["rep_ngram"] for r in rows) / len(rows) if rows else 0.0}


_NGRAM_ENTROPY_CARD = ModuleCard(
    title="n-gram entropy", emoji="🎲",
    summary=("n-gram entropy Ent-n (Zhang et al., 2018): reference-free diversity per text or over"
             " a corpus, on blindspot's cached scoring layer."),
    description="""\
n-gram entropy Ent-n (Zhang et al., 2018), on blindspot's cached scoring layer.

Reference-free diversity: the entropy ``-sum_g p(g) log p(g)`` of the empirical distribution of
n-grams, ``p(g) = count(g) / number of n-grams``; n = 4 by default, natural log by default
(``log_base=2`` gives bits). Per row (default) it is the entropy of that text's own n-grams;
``level="corpus"`` pools the n-gram counts of all texts, as Zhang et al. compute it over all
generated responses (so corpus entropy is not the mean of row entropies). Higher is more diverse;
a text with fewer than n tokens has no n-grams and scores 0. Tokens are whitespace-separated words
(no lower-casing); ``tokenizer=`` a Hugging Face tokenizer name or folder counts subword tokens.""",
    examples="""\
>>> import evaluate
>>> ent = evaluate.load("blindspot/ngram_entropy")
>>> out = ent.compute(predictions=["a b c d", "a a b c"], n=1, log_base=2, use_aggregator=False)
>>> out["ngram_entropy"]  # uniform over 4 words: 2 bits; p = (1/2, 1/4, 1/4): 1.5 bits
[2.0, 1.5]
>>> ent.compute(predictions=["a b", "a b"], n=1, log_base=2, level="corpus")
{'ngram_entropy': 1.0}
""",
    inputs="""\
Args:
    predictions (list of str): texts (no references).
    n (int): n-gram order, default 4.
    tokenizer (str): "whitespace" (default) or a Hugging Face tokenizer name / folder.
    log_base (float): base of the logarithm, default e.
    use_aggregator (bool): mean over rows (default) or per-row lists.
    level (str): "sentence" (default, per text) or "corpus" (counts pooled over all texts).
Returns:
    ngram_entropy: entropy >= 0, higher is more diverse (a list per row when use_aggregator=False).
""",
    citation="""\
@inproceedings{zhang-etal-2018-generating,
    title = "Generating Informative and Diverse Conversational Responses via Adversarial Information Maximization",
    author = "Zhang, Yizhe and Galley, Michel and Gao, Jianfeng and Gan, Zhe and Li, Xiujun and Brockett, Chris and Dolan, Bill",
    booktitle = "Advances in Neural Information Processing Systems",
    year = "2018",
}
""",  # noqa: E501
    sections="""\
## Metric description
Ent-n (Zhang et al., 2018) is the entropy of the empirical distribution of n-grams:

    Ent-n = - sum_g p(g) log p(g),    p(g) = count(g) / total number of n-grams

It is high when the n-grams are many and evenly used (diverse text) and low when a few n-grams
dominate (repetitive, generic text). No references are used.

Definitions: n = 4 by default; natural log by default (`log_base=2` gives bits); tokens are
whitespace-separated words, case kept (`tokenizer=` a Hugging Face tokenizer name or folder counts
subword tokens instead); no n-grams (a text shorter than n tokens) gives 0.

- **Per row** (default): the entropy of each text's own n-grams; `use_aggregator=True` averages
  them. This is the sample-level reading the blind-spots paper's protocol compares.
- **`level="corpus"`**: the n-gram counts of all texts are pooled first, as Zhang et al. compute it
  over all generated responses. This is not the mean of the row entropies.

## How to use
```python
import evaluate
ent = evaluate.load("blindspot/ngram_entropy")
ent.compute(predictions=["a b c d", "a a b c"], n=1, log_base=2, use_aggregator=False)
# {'ngram_entropy': [2.0, 1.5]}
ent.compute(predictions=texts, level="corpus")        # Zhang et al.'s Ent-4 of a system
```

## Output
`ngram_entropy`: >= 0 (at most log of the number of n-grams), higher is more diverse.

## Paper default and variants
He et al. (2023, App. E) name n-gram entropy (Zhang et al., 2018) beside rep-4gram as the
established diversity metrics for open-ended generation. Zhang et al. report Ent-4 over all
responses (here `level="corpus"`). Variants: n, the log base, per text or pooled.

## Blind spots the papers found
The papers do not stress-test n-gram entropy. By construction: per-text entropy grows with text
length (a longer text has more n-gram types), so compare texts of similar length; it is blind to
coherence, correctness and fluency (a random sequence of distinct words has maximal entropy); only
exact n-gram identity counts.
""",
)


@register_scorer
class NgramEntropy(_NgramScorer):
    """Ent-n (Zhang et al., 2018): entropy of the n-gram distribution, n = 4, natural log."""

    name = "ngram_entropy"
    card = _NGRAM_ENTROPY_CARD
    outputs = ("ngram_entropy",)
    reference = Reference(
        "Zhang et al. (2018)'s Ent-n, written from its formula (no released script runs here)",
        differs="tokens are whitespace words; natural log (log_base=2 for bits)")
    def __init__(self, n: int = 4, tokenizer: str = WHITESPACE, log_base: float = math.e) -> None:
        if isinstance(log_base, bool) or not isinstance(log_base, (int, float)) or log_base <= 1:
            raise ValueError(f"log_base must be a number greater than 1, got {log_base!r}")
        super().__init__(n=n, tokenizer=tokenizer, log_base=float(log_base))

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        base = self.config["log_base"]
        return [{"ngram_entropy": entropy(self.counts(item), base)} for item in batch]

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        """Entropy of the n-gram counts pooled over all texts (Zhang et al.'s corpus Ent-n)."""
        pooled: Counter[tuple[str, ...]] = Counter()
        for item in inputs:
            pooled.update(self.counts(item))
        return {"ngram_entropy": entropy(pooled, self.config["log_base"])}
