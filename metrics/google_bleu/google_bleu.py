"""Google BLEU (GLEU; Wu et al., 2016) through NLTK: a drop-in for evaluate's ``google_bleu``.

The same arguments, defaults and output as ``evaluate.load("google_bleu")``: NLTK's
``corpus_gleu`` on mteval-13a tokens (``tokenizer``, any str -> list of tokens callable), n-grams
of orders ``min_len`` (1) to ``max_len`` (4). GLEU is the minimum of n-gram precision and recall;
the corpus score sums each row's matches and its larger n-gram total (with several references,
the reference giving the row's best GLEU) before dividing.

Added: ``use_aggregator=False`` gives per-row sentence GLEU (``sentence_gleu``, deduplicated and
cached), what the blind-spot protocol judges (``blindspot run --metrics google_bleu``).

Examples:
    >>> import evaluate
    >>> google_bleu = evaluate.load("metrics/google_bleu")
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
"""  # noqa: E501 (the canonical module's example sentences, kept whole)

from collections.abc import Callable
from typing import Any

import blindspot.scoring.module as base
from blindspot.scorers.nltk_metrics import google_bleu_corpus
from blindspot.scoring.canonical import reference_lists

_CITATION = """\
@misc{wu2016googles,
      title={Google's Neural Machine Translation System: Bridging the Gap between Human and Machine Translation},
      author={Yonghui Wu and Mike Schuster and Zhifeng Chen and Quoc V. Le and Mohammad Norouzi and others},
      year={2016},
      eprint={1609.08144},
      archivePrefix={arXiv},
      primaryClass={cs.CL}
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = """
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
"""


class GoogleBleu(base.ScorerMetric):
    """GLEU: evaluate's ``google_bleu`` plus per-row scores on the blindspot scoring layer."""

    scorer_name = "google_bleu"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any],
                 tokenizer: Callable[[str], list[str]] | None = None, min_len: int = 1,
                 max_len: int = 4, use_aggregator: bool = True) -> dict[str, Any]:
        if tokenizer is not None:  # a callable has no stable identity to cache scores under
            return {"google_bleu": google_bleu_corpus(predictions, reference_lists(references),
                                                      tokenizer, min_len, max_len)}
        return self._score(predictions, references, use_aggregator=use_aggregator,
                           level="corpus" if use_aggregator else "sentence", min_len=min_len,
                           max_len=max_len)
