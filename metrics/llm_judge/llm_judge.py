"""LLM judge: a prompted chat model grades each prediction on a rubric, on blindspot's scoring layer.

G-Eval's form (Liu et al., 2023): the score is the probability-weighted mean of the grade tokens
in the judge's next-token distribution (``mode="weighted"``), or the grade parsed from its greedy
(``"greedy"``) or sampled (``"sample"``) reply. The prompt is a template: a shipped one by name
(``coherence``, ``consistency``, ``fluency``, ``relevance``: G-Eval's SummEval criteria;
``mt_adequacy``) or the path of your own ``.toml`` file. Backends: ``transformers`` (a local chat
model, ``model="smollm2"`` offline) or ``openai`` (an OpenAI-compatible server at ``url``, its key
from the environment variable ``api_key_env``). Distinct rows are judged once and cached on disk;
the template, model, backend and sampling settings are in the cache key.

Examples:
    >>> import evaluate
    >>> judge = evaluate.load("metrics/llm_judge")
    >>> out = judge.compute(predictions=["The cat sat on the mat."], template="fluency",
    ...                     model="smollm2", use_aggregator=False)
    >>> sorted(out)
    ['calls', 'completion_tokens', 'grade', 'prompt_tokens', 'score']
    >>> 1 <= out["score"][0] <= 3
    True
"""

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{liu-etal-2023-g,
    title = "{G}-Eval: {NLG} Evaluation using {GPT}-4 with Better Human Alignment",
    author = "Liu, Yang and Iter, Dan and Xu, Yichong and Wang, Shuohang and Xu, Ruochen and
              Zhu, Chenguang",
    booktitle = "Proceedings of the 2023 Conference on Empirical Methods in Natural Language
                 Processing",
    year = "2023",
}
"""

_INPUTS = """
Args:
    predictions (list of str): the texts to judge.
    sources (list of str): the source texts, for a template that shows {source}.
    references (list of str or list of list of str): for a template that shows {references}.
    template (str): a shipped template name or the path of a .toml template (default "coherence").
    model (str): the judge: "smollm2" offline, a local folder, a Hub id, or a server's model name.
    backend (str): "transformers" (in this process, default) or "openai" (needs url).
    mode (str): "weighted" (default), "greedy" or "sample" (temperature, top_p, seed).
    rubric (str): "as_written" (default), "reversed" or "reworded".
    url (str), api_key_env (str), concurrency, retries, timeout, max_calls: the openai backend.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    score: the weighted (or parsed) grade, on the template's scale, higher is better;
    grade: the most probable (or parsed) grade;
    calls, prompt_tokens, completion_tokens: what each row cost (NaN: not reported).
"""


class LlmJudge(base.ScorerMetric):
    """An LLM judge on the blindspot scoring layer."""

    scorer_name = "llm_judge"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
