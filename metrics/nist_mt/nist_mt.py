"""NIST (Doddington, 2002) through NLTK: a drop-in for evaluate's canonical ``nist_mt``.

The same arguments, defaults and output as ``evaluate.load("nist_mt")``: NLTK's ``corpus_nist``
on ``NISTTokenizer`` tokens (``lowercase``, ``western_lang``), n-grams up to ``n`` (5). NIST
weights each matched n-gram by its information in the references (rarer continuations count
more), sums over orders (an arithmetic, not geometric, mean) and applies its own brevity
penalty; it is 0 without matches and unbounded above. The perluniprops data the tokenizer reads
is installed offline by ``make env``; nothing is downloaded.

Added: ``use_aggregator=False`` gives per-row ``sentence_nist`` (deduplicated and cached), what
the blind-spot protocol judges (``blindspot run --metrics nist_mt``).

Examples:
    >>> import evaluate
    >>> nist_mt = evaluate.load("metrics/nist_mt")
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
"""  # noqa: E501 (the canonical module's example sentences, kept whole)

from typing import Any

import blindspot.scoring.module as base

_CITATION = """\
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
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = """
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
"""


class NistMt(base.ScorerMetric):
    """NIST: evaluate's ``nist_mt`` plus per-row scores on the blindspot scoring layer."""

    scorer_name = "nist_mt"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any], n: int = 5,
                 lowercase: bool = False, western_lang: bool = True,
                 use_aggregator: bool = True) -> dict[str, Any]:
        return self._score(predictions, references, use_aggregator=use_aggregator,
                           level="corpus" if use_aggregator else "sentence", n=n,
                           lowercase=lowercase, western_lang=western_lang)
