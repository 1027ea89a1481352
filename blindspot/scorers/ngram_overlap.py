"""BLEU, chrF and TER through sacrebleu, at sentence and corpus level.

Sentence scores use sacrebleu's sentence-level metrics (BLEU with exponential smoothing, as
sacrebleu's ``sentence_bleu``); corpus scores use its corpus-level statistics over all rows.
Multiple references are passed to sacrebleu as such (it takes the best n-gram matches).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from types import MappingProxyType
from typing import Any, ClassVar

from blindspot.scoring.canonical import (
    TER_ARGUMENTS,
    bleu_of_texts,
    reference_streams,
    renamed,
    tokenize_13a,
)
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import (
    Reference,
    ScoreInput,
    Scorer,
    declared_options,
    register_scorer,
)

#: what BLEU, chrF and TER are measured against: the library they wrap, on 200 WMT21 rows
SACREBLEU = Reference("sacrebleu 2.6.0", max_abs_diff=0.0, rows=200)


def _reference_streams(inputs: Sequence[ScoreInput]) -> list[list[str]]:
    """sacrebleu's corpus layout: one stream per reference position ("" where a row has fewer)."""
    width = max((len(i.references) for i in inputs), default=0)
    return [[i.references[k] if k < len(i.references) else "" for i in inputs]
            for k in range(width)]


class _SacrebleuScorer(Scorer):
    """Shared by BLEU, chrF and TER: one sacrebleu metric object, built once per scorer."""

    metric_class: ClassVar[str]
    default_batch_size = 512
    model_option = None
    kind = "lexical"
    library = "sacrebleu"
    reference = SACREBLEU

    @classmethod
    def option_names(cls) -> list[str] | None:
        """sacrebleu's own arguments of the metric class (``char_order``, ``lowercase``...)."""
        import sacrebleu  # lazy here and below: ~0.2 s, paid only by runs that use sacrebleu

        return declared_options(getattr(sacrebleu.metrics, cls.metric_class).__init__)

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        import sacrebleu

        self._metric = getattr(sacrebleu.metrics, self.metric_class)(**self._options())

    def _options(self) -> dict[str, Any]:
        return dict(self.config)

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        return [{self.outputs[0]: float(self._metric.sentence_score(
            item.hypothesis, list(item.references)).score)} for item in batch]

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        result = self._metric.corpus_score([i.hypothesis for i in inputs],
                                           _reference_streams(inputs))
        return {self.outputs[0]: float(result.score)}

    def model_revision(self) -> str:
        import sacrebleu

        return f"sacrebleu-{sacrebleu.__version__}"


def bleu_module(module: Any, predictions: list[str], references: list[Any],
                tokenizer: Callable[[str], list[str]] = tokenize_13a, max_order: int = 4,
                smooth: bool = False) -> dict[str, Any]:
    """The ``bleu`` module's compute: evaluate's canonical ``bleu``, classic corpus BLEU."""
    return asdict(bleu_of_texts(predictions, references, tokenizer=tokenizer,
                                max_order=max_order, smooth=smooth))


_BLEU_CARD = ModuleCard(
    title="BLEU", emoji="🔤",
    summary=("Corpus BLEU on a 0-1 scale: a drop-in for evaluate's bleu (same arguments, defaults "
             "and outputs; classic BLEU on mteval-13a tokens). For sacrebleu's 0-100 BLEU use "
             "blindspot/sacrebleu."),
    description="""\
BLEU (Papineni et al., 2002): a drop-in for evaluate's canonical ``bleu`` module.

The same arguments, defaults and outputs as ``evaluate.load("bleu")``: corpus BLEU on a 0-1
scale, computed as the classic TensorFlow NMT script does (clipped n-gram matches pooled over all
rows, geometric mean of the n-gram precisions, brevity penalty against the sum of each row's
SHORTEST reference), on text tokenized by mteval-v13a (``tokenizer``, any str -> list of tokens
callable), with ``max_order`` (4) and ``smooth`` (False; True = add-one smoothing, Lin & Och
2004). Outputs ``bleu``, ``precisions``, ``brevity_penalty``, ``length_ratio``,
``translation_length``, ``reference_length``.

This is not sacreBLEU: for sacrebleu's 0-100 BLEU (closest reference length, exponential
smoothing) use the ``sacrebleu`` module. A blind-spot run judges BLEU per row with sacreBLEU's
sentence BLEU (``blindspot run --metrics bleu``, and this module passed to the runner, score the
``sacrebleu`` module's ``use_aggregator=False`` rows), since classic BLEU without smoothing is 0
for most single sentences.""",
    examples="""\
>>> import evaluate
>>> bleu = evaluate.load("blindspot/bleu")
>>> predictions = ["hello there general kenobi", "foo bar foobar"]
>>> references = [["hello there general kenobi", "hello there!"], ["foo bar foobar"]]
>>> results = bleu.compute(predictions=predictions, references=references)
>>> print(results["bleu"])
1.0
>>> out = bleu.compute(predictions=["The cat sat on the mat."],
...                    references=["The cat is on the mat."])
>>> round(out["bleu"], 4), out["precisions"][0], out["brevity_penalty"]
(0.4889, 0.8571428571428571, 1.0)
""",
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis.
    tokenizer (callable): str -> list of tokens; default mteval-v13a (as WMT).
    max_order (int): highest n-gram order, default 4.
    smooth (bool): add-one smoothing of the precisions (Lin & Och, 2004), default False.
Returns:
    bleu: corpus BLEU in [0, 1], higher is better; precisions: per n-gram order;
    brevity_penalty; length_ratio: translation_length / reference_length; translation_length,
    reference_length: token counts (reference: each row's shortest reference).
""",
    citation="""\
@inproceedings{papineni-etal-2002-bleu,
    title = "{B}leu: a Method for Automatic Evaluation of Machine Translation",
    author = "Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing",
    booktitle = "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics",
    year = "2002",
    pages = "311--318",
}
@inproceedings{lin-och-2004-orange,
    title = "{ORANGE}: a Method for Evaluating Automatic Evaluation Metrics for Machine Translation",
    author = "Lin, Chin-Yew and Och, Franz Josef",
    booktitle = "{COLING} 2004: Proceedings of the 20th International Conference on Computational Linguistics",
    year = "2004",
    pages = "501--507",
}
""",  # noqa: E501
    sections="""\
## Metric description
BLEU (Papineni et al., 2002) is the geometric mean of clipped n-gram precisions (n = 1..4) of a
hypothesis corpus against its references, times a brevity penalty. This module computes the
classic corpus BLEU of the TensorFlow NMT scripts, as evaluate's canonical `bleu` does: clipped
n-gram matches and possible n-grams pooled over all rows, uniform weights, the geometric mean 0
when any precision is 0, and a brevity penalty `exp(1 - r/c)` when the hypothesis length `c` is
not above `r`, the sum of each row's SHORTEST reference length. Text is tokenized by mteval-v13a
(sacrebleu's `Tokenizer13a`, as WMT).

## Drop-in for evaluate's `bleu`
Offline after `make env`, from any directory: `evaluate.load("blindspot/bleu")`. `evaluate.load("bleu")` is evaluate's canonical
module (online, or from your own module cache), which installing blindspot never touches; ours
gives the same results for the same call.

```python
import evaluate
bleu = evaluate.load("blindspot/bleu")
bleu.compute(predictions=["hello there general kenobi", "foo bar foobar"],
             references=[["hello there general kenobi", "hello there!"], ["foo bar foobar"]])
# {'bleu': 1.0, 'precisions': [1.0, 1.0, 1.0, 1.0], 'brevity_penalty': 1.0,
#  'length_ratio': 1.1666666666666667, 'translation_length': 7, 'reference_length': 6}
```
Arguments and defaults are the canonical module's: `tokenizer` (any str -> list of tokens
callable; default mteval-13a), `max_order` (4), `smooth` (False; True = add-one smoothing of every
precision, Lin & Och 2004). One or several references per row.

## Output
`bleu` in [0, 1], higher is better; `precisions` per n-gram order; `brevity_penalty`;
`length_ratio` (hypothesis / reference tokens); `translation_length`, `reference_length`.

## Not sacreBLEU
sacreBLEU's BLEU (the `sacrebleu` module, `blindspot/sacrebleu`) is on a 0-100 scale, takes the
CLOSEST reference length and smooths sentence scores. With one reference per row and no
smoothing the two agree (x 100), as the parity test checks on WMT21.

## Canonical default and the blind-spot protocol
The module computes only the canonical corpus BLEU. The blind-spot runs (`blindspot run --metrics
bleu`, the MENLI preference protocol, and this module passed to the runner) judge BLEU per row
with sacreBLEU's sentence BLEU (exponential smoothing, effective order; 0-100), MENLI's
"sentBLEU": the `sacrebleu` module's `use_aggregator=False`. Classic BLEU without smoothing is 0
for most single sentences, which a per-row protocol cannot use.

## Paper default and variants
The blind-spots paper (He et al., 2023) includes BLEU as the traditional translation metric
(sample-level scores averaged over the test set; sacrebleu defaults). MENLI (Chen & Eger, 2023)
uses sentence BLEU ("sentBLEU") as a baseline. Variants: sentence vs. corpus level, tokenizer,
smoothing.

## Blind spots the papers found
- He et al. (2023): BLEU passes all of their translation stress tests (its score drops under
  every perturbation they apply), although it is outperformed by model-based metrics in
  correlation with human judgements.
- MENLI (Chen & Eger, 2023): on the preference-based adversarial sets BLEU is below random:
  sentBLEU gets about 33% accuracy over all phenomena (27% on adequacy ones) averaged over the MT
  sets (Table 8), BLEU 18.2% (10.9%) on the SummEval set SEadv (Table 9). It prefers a candidate
  that keeps the reference's words with a changed meaning (negation, swapped names or numbers)
  over a correct paraphrase.
- Sai et al. (2021): no metric among their 25 (BLEU-1..4 included) correlates well with human
  judgements on all quality criteria, and metrics are not robust to their criterion-targeted
  perturbations.
""",  # noqa: E501
    requirements=("sacrebleu",),
    compute=bleu_module,
)


@register_scorer
class Bleu(_SacrebleuScorer):
    name = "bleu"
    card = _BLEU_CARD
    outputs = ("bleu",)
    metric_class = "BLEU"
    natural_ranges = MappingProxyType({"bleu": (0.0, 100.0)})
    search_panel = (1, "bleu")

    def _options(self) -> dict[str, Any]:
        # sentence_bleu's default: exponential smoothing, effective order
        return {"effective_order": True, **self.config}

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        import sacrebleu

        corpus = sacrebleu.metrics.BLEU(**self.config)  # corpus_bleu's defaults
        result = corpus.corpus_score([i.hypothesis for i in inputs], _reference_streams(inputs))
        return {"bleu": float(result.score)}


def chrf_module(module: Any, predictions: list[str], references: list[Any], char_order: int = 6,
                word_order: int = 0, beta: int = 2, lowercase: bool = False,
                whitespace: bool = False, eps_smoothing: bool = False,
                use_aggregator: bool = True) -> dict[str, Any]:
    """The ``chrf`` module's compute: evaluate's canonical ``chrf`` (sacrebleu's corpus chrF, its
    defaults, the settings echoed back), or per-row sentence chrF with ``use_aggregator=False``."""
    import sacrebleu

    options: dict[str, Any] = {"char_order": char_order, "word_order": word_order, "beta": beta,
                               "lowercase": lowercase, "whitespace": whitespace,
                               "eps_smoothing": eps_smoothing}
    if use_aggregator:
        score = sacrebleu.metrics.CHRF(**options).corpus_score(
            predictions, reference_streams(references)).score
    else:
        score = module.scorer_rows(predictions, references, **options)["chrf"]
    return {"score": score, "char_order": char_order, "word_order": word_order, "beta": beta}


_CHRF_CARD = ModuleCard(
    title="chrF", emoji="🔤",
    summary=("chrF and chrF++ (sacrebleu): a drop-in for evaluate's chrf (same arguments, defaults"
             " and outputs), plus per-row sentence scores on blindspot's cached scoring layer."),
    description="""\
chrF (Popović, 2015) through sacrebleu: a drop-in for evaluate's canonical ``chrf`` module.

The same arguments, defaults and outputs as ``evaluate.load("chrf")``: sacrebleu's corpus chrF
(``score`` in [0, 100]) with ``char_order``, ``word_order`` (2 = chrF++), ``beta``,
``lowercase``, ``whitespace``, ``eps_smoothing``, and those settings echoed back. Every
prediction needs the same number of references, as there.

Added: ``use_aggregator=False`` gives per-row SENTENCE chrF (``score`` is then a list, one value
per row, deduplicated and cached): what the blind-spot protocol judges (``blindspot run
--metrics chrf``). Rows may then have different numbers of references.""",
    examples="""\
>>> import evaluate
>>> chrf = evaluate.load("blindspot/chrf")
>>> prediction = ["The relationship between cats and dogs is not exactly friendly.",
...               "a good bookshop is just a genteel black hole that knows how to read."]
>>> reference = [["The relationship between dogs and cats is not exactly friendly."],
...              ["A good bookshop is just a genteel Black Hole that knows how to read."]]
>>> chrf.compute(predictions=prediction, references=reference)
{'score': 84.64214891738334, 'char_order': 6, 'word_order': 0, 'beta': 2}
>>> out = chrf.compute(predictions=["The cat sat on the mat."],
...                    references=[["The cat is on the mat."]], use_aggregator=False)
>>> [round(v, 2) for v in out["score"]]
[67.17]
""",
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (the same number for every hypothesis, unless use_aggregator=False).
    char_order (int): character n-gram order, default 6.
    word_order (int): word n-gram order, default 0 (2 = chrF++).
    beta (int): weight of recall against precision, default 2.
    lowercase (bool): case-insensitive, default False.
    whitespace (bool): keep whitespace in character n-grams, default False.
    eps_smoothing (bool): epsilon smoothing (chrF++.py, NLTK, Moses), default False.
    use_aggregator (bool): True (default): corpus chrF, as evaluate's ``chrf``; False: per-row
        sentence chrF (a list), what the blind-spot protocol judges.
Returns:
    score: chrF in [0, 100], higher is better; char_order, word_order, beta: the settings.
""",
    citation="""\
@inproceedings{popovic-2015-chrf,
    title = "chr{F}: character n-gram {F}-score for automatic {MT} evaluation",
    author = "Popovi{\\'c}, Maja",
    booktitle = "Proceedings of the Tenth Workshop on Statistical Machine Translation",
    year = "2015",
    pages = "392--395",
}
""",
    sections="""\
## Metric description
chrF (Popović, 2015) is the F-score of character n-gram matches between a hypothesis and its
references (sacrebleu's `CHRF`); chrF++ adds word n-grams (`word_order=2`).

## Drop-in for evaluate's `chrf`
Offline after `make env`, from any directory: `evaluate.load("blindspot/chrf")`. `evaluate.load("chrf")` is evaluate's canonical
module (online, or from your own module cache), which installing blindspot never touches; ours
gives the same results for the same call, so switching is a one-word change.

```python
import evaluate
chrf = evaluate.load("blindspot/chrf")
chrf.compute(predictions=hyps, references=[[r] for r in refs])
# {'score': ..., 'char_order': 6, 'word_order': 0, 'beta': 2}   corpus chrF, as evaluate's chrf
chrf.compute(predictions=hyps, references=refs, use_aggregator=False)["score"]  # per-row list
```
Arguments and defaults are the canonical module's: `char_order` (6), `word_order` (0), `beta`
(2), `lowercase` (False), `whitespace` (False), `eps_smoothing` (False). As there, every
prediction needs the same number of references for the corpus score.

Added: `use_aggregator=False` returns per-row SENTENCE chrF (sacrebleu's `sentence_score`, rows
may have different numbers of references), deduplicated and cached on disk.

## Output
`score`: chrF in [0, 100], higher is better (a list per row with `use_aggregator=False`);
`char_order`, `word_order`, `beta`: the settings used.

## Canonical default and the blind-spot protocol
The module's default is the canonical CORPUS chrF. The blind-spot runs (`blindspot run --metrics
chrf`, the MENLI preference protocol) judge per-row SENTENCE chrF with sacrebleu's defaults:
`use_aggregator=False` here.

## Paper default and variants
The MENLI paper (Chen & Eger, 2023) uses sentence-level chrF as a baseline in its preference
protocol; chrF++ is `word_order=2`.

## Blind spots the papers found
MENLI's adversarial set: lexical-overlap metrics like chrF prefer a hypothesis that keeps the
reference's surface form with a changed meaning (negation, number, name swaps) over a correct
paraphrase.
""",  # noqa: E501
    requirements=("sacrebleu",),
    compute=chrf_module,
)


@register_scorer
class Chrf(_SacrebleuScorer):
    name = "chrf"
    card = _CHRF_CARD
    outputs = ("chrf",)
    metric_class = "CHRF"
    natural_ranges = MappingProxyType({"chrf": (0.0, 100.0)})
    search_panel = (0, "chrf")


def ter_module(module: Any, predictions: list[str], references: list[Any],
               normalized: bool = False, ignore_punct: bool = False,
               support_zh_ja_chars: bool = False, case_sensitive: bool = False,
               use_aggregator: bool = True) -> dict[str, Any]:
    """The ``ter`` module's compute: evaluate's canonical ``ter`` (sacrebleu's corpus TER), or
    per-row sentence TER with ``use_aggregator=False``."""
    import sacrebleu

    options = renamed({"normalized": normalized, "ignore_punct": ignore_punct,
                       "support_zh_ja_chars": support_zh_ja_chars,
                       "case_sensitive": case_sensitive}, TER_ARGUMENTS)
    if not use_aggregator:
        return {"score": module.scorer_rows(predictions, references, **options)["ter"]}
    out = sacrebleu.metrics.TER(**options).corpus_score(predictions, reference_streams(references))
    return {"score": out.score, "num_edits": out.num_edits, "ref_length": out.ref_length}


_TER_CARD = ModuleCard(
    title="TER", emoji="🔤",
    summary=("Translation Edit Rate (sacrebleu): a drop-in for evaluate's ter (same arguments, "
             "defaults and outputs), plus per-row sentence scores on blindspot's cached scoring "
             "layer; lower is better."),
    description="""\
TER (Snover et al., 2006) through sacrebleu: a drop-in for evaluate's canonical ``ter`` module.

Translation Edit Rate: the edits (insertions, deletions, substitutions and shifts of word
sequences) that turn the hypothesis into the closest reference, divided by the average
reference length, times 100. LOWER IS BETTER (it is an error rate; it can exceed 100).

The same arguments, defaults and outputs as ``evaluate.load("ter")``: sacrebleu's corpus TER
(``score``, ``num_edits``, ``ref_length``) with ``normalized``, ``ignore_punct``,
``support_zh_ja_chars`` and ``case_sensitive`` (default False: case is ignored). Every
prediction needs the same number of references, as there.

Added: ``use_aggregator=False`` gives per-row SENTENCE TER (``score`` is then a list, one value
per row, deduplicated and cached): what the blind-spot protocol judges (``blindspot run
--metrics ter``, which negates it so that higher is better).""",
    examples="""\
>>> import evaluate
>>> ter = evaluate.load("blindspot/ter")
>>> predictions = ["does this sentence match??", "what about this sentence?"]
>>> references = [["does this sentence match", "does this sentence match!?!"],
...               ["wHaT aBoUt ThIs SeNtEnCe?", "wHaT aBoUt ThIs SeNtEnCe?"]]
>>> ter.compute(predictions=predictions, references=references, case_sensitive=True)
{'score': 62.5, 'num_edits': 5, 'ref_length': 8.0}
>>> out = ter.compute(predictions=["The cat sat on the mat."],
...                   references=[["The cat is on the mat."]], use_aggregator=False)
>>> [round(v, 2) for v in out["score"]]
[16.67]
""",
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (the same number for every hypothesis, unless use_aggregator=False).
    normalized (bool): basic tokenization and normalization, default False.
    ignore_punct (bool): remove punctuation, default False.
    support_zh_ja_chars (bool): with normalized=True, tokenize Chinese and Japanese characters,
        default False.
    case_sensitive (bool): default False (everything is lower-cased).
    use_aggregator (bool): True (default): corpus TER, as evaluate's ``ter``; False: per-row
        sentence TER (a list), what the blind-spot protocol judges.
Returns:
    score: edits / average reference length * 100, >= 0, LOWER is better; num_edits: the edits
    summed over rows; ref_length: the average reference lengths summed over rows. With
    use_aggregator=False: score, a list per row, only.
""",
    citation="""\
@inproceedings{snover-etal-2006-study,
    title = "A Study of Translation Edit Rate with Targeted Human Annotation",
    author = "Snover, Matthew and Dorr, Bonnie and Schwartz, Rich and Micciulla, Linnea and Makhoul, John",
    booktitle = "Proceedings of the 7th Conference of the Association for Machine Translation in the Americas",
    year = "2006",
    pages = "223--231",
}
""",  # noqa: E501
    sections="""\
## Metric description
TER (Snover et al., 2006) is the minimum number of edits (insertions, deletions, substitutions
and shifts of word sequences) that turn the hypothesis into the closest reference, divided by the
average reference length, times 100. This module computes it with sacrebleu's `TER` through
blindspot's scoring layer: distinct inputs are scored once and cached on disk.

**Lower is better**: TER is an error rate (0 = identical; it can exceed 100). Negate it before
mixing it with higher-is-better metrics.

## Drop-in for evaluate's `ter`
Offline after `make env`, from any directory: `evaluate.load("blindspot/ter")`. `evaluate.load("ter")` is evaluate's canonical
module (online, or from your own module cache), which installing blindspot never touches; ours
gives the same results for the same call, so switching is a one-word change.

```python
import evaluate
ter = evaluate.load("blindspot/ter")
ter.compute(predictions=hyps, references=[[r] for r in refs])
# {'score': ..., 'num_edits': ..., 'ref_length': ...}   corpus TER, as evaluate's ter
ter.compute(predictions=hyps, references=refs, use_aggregator=False)["score"]   # per-row list
```
Arguments and defaults are the canonical module's: `normalized` (False), `ignore_punct` (False),
`support_zh_ja_chars` (False), `case_sensitive` (False: case is ignored). As there, every
prediction needs the same number of references for the corpus score.

Added: `use_aggregator=False` returns per-row SENTENCE TER (sacrebleu's `sentence_score`),
deduplicated and cached on disk.

## Output
`score`: edits / average reference length x 100, >= 0, lower is better; `num_edits`: edits
summed over rows; `ref_length`: average reference lengths summed over rows. With
`use_aggregator=False`: `score` only, one value per row.

## Canonical default and the blind-spot protocol
The module's default is the canonical CORPUS TER. The blind-spot runs (`blindspot run --metrics
ter`) judge per-row SENTENCE TER with sacrebleu's defaults (`use_aggregator=False` here), negated
so that higher is better.

## Paper default and variants
Not used by the blind-spots paper; Sai et al. (2021) include TER among their 25 metrics.
Variants: sentence vs. corpus level, normalisation and punctuation handling.

## Blind spots the papers found
None of the project's papers reports a stress-test result specific to TER. Sai et al. (2021)
include TER among their 25 metrics and find that no metric correlates well with human judgements
on all quality criteria, and that metrics are not robust to criterion-targeted perturbations.
From the formula itself (not a paper finding): TER counts surface edits, so a meaning change that
keeps most words (negation, a changed name or number) costs one or two edits, while a correct
paraphrase with a different word order costs many; this is the lexical-overlap weakness that
MENLI (Chen & Eger, 2023) measured for BLEU and ROUGE.
""",  # noqa: E501
    requirements=("sacrebleu",),
    compute=ter_module,
)


@register_scorer
class Ter(_SacrebleuScorer):
    name = "ter"
    card = _TER_CARD
    outputs = ("ter",)
    metric_class = "TER"
    lower_is_better = frozenset({"ter"})  # an edit rate
