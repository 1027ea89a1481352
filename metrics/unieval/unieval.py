"""UniEval for summarization (Zhong et al., 2022) on blindspot's scoring layer.

UniEval turns evaluation into boolean question answering: a T5 model trained by UniEval reads
e.g. ``question: Is this a coherent summary to the document? </s> summary: ... </s> document:
...`` and the score is P(Yes) / (P(Yes) + P(No)) at the first decoder step. Outputs, all in
(0, 1): ``coherence`` (summary vs. document), ``consistency`` (each summary sentence vs. the
document, averaged), ``fluency`` (each sentence alone, averaged), ``relevance`` (summary vs. the
reference; mean over several references) and ``overall`` = the mean of the four. Options:
``model`` (paper default ``MingZhong/unieval-sum``), ``max_length`` (1024),
``relevance_against`` ("reference", UniEval's definition, or "source", as the blind-spots paper
ran it: then no references are needed), ``sentence_splitter`` ("spacy", default, or "nltk",
UniEval's own, where NLTK's punkt data is installed).

Examples:
    >>> import evaluate, tempfile
    >>> from blindspot.tiny_models import tiny_t5
    >>> folder = tiny_t5(tempfile.mkdtemp())  # random weights: the numbers mean nothing
    >>> unieval = evaluate.load("metrics/unieval")
    >>> out = unieval.compute(predictions=["The cat sat. It purred."],
    ...                       references=[["A cat sat on the mat."]],
    ...                       sources=["A cat sat on the mat all day. It purred."],
    ...                       model=folder, use_aggregator=False)
    >>> sorted(out)
    ['coherence', 'consistency', 'fluency', 'overall', 'relevance']
    >>> all(0 < values[0] < 1 for values in out.values())
    True
    >>> dims = ("coherence", "consistency", "fluency", "relevance")
    >>> abs(out["overall"][0] - sum(out[d][0] for d in dims) / 4) < 1e-12
    True
    >>> no_refs = unieval.compute(predictions=["The cat sat."], sources=["A cat sat."],
    ...                           model=folder, relevance_against="source")
    >>> sorted(no_refs) == sorted(out)
    True
"""

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{zhong-etal-2022-towards,
    title = "Towards a Unified Multi-Dimensional Evaluator for Text Generation",
    author = "Zhong, Ming and Liu, Yang and Yin, Da and Mao, Yuning and Jiao, Yizhu and Liu, Pengfei and Zhu, Chenguang and Ji, Heng and Han, Jiawei",
    booktitle = "Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing",
    year = "2022",
    pages = "2023--2038",
}
"""  # noqa: E501 (published BibTeX / exact doctest output, kept verbatim)

_INPUTS = """
Args:
    predictions (list of str): summaries.
    references (list of str or list of list of str): reference summaries (relevance); may be
        left out with relevance_against="source".
    sources (list of str): the documents.
    model (str): Hub id or local folder of a UniEval T5 (default "MingZhong/unieval-sum").
    max_length (int): input truncation in tokens (default 1024).
    relevance_against (str): "reference" (default) or "source".
    sentence_splitter (str): "spacy" (default) or "nltk".
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    coherence, consistency, fluency, relevance, overall: in (0, 1), higher is better.
"""


class UniEval(base.ScorerMetric):
    """UniEval (summarization) on the blindspot scoring layer."""

    scorer_name = "unieval"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
