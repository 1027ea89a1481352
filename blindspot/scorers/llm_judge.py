"""LLM judge: a chat model grades each hypothesis on a declared rubric (G-Eval, Liu et al., 2023).

The prompt is a template file (:mod:`blindspot.judges.template`: system and user messages, the
rubric, the scale); the shipped ones are G-Eval's four SummEval criteria (``coherence``,
``consistency``, ``fluency``, ``relevance``), ``mt_adequacy`` and ``quality`` (a short rubric
that SmolLM2 answers with a digit even greedily); a user's ``.toml`` file works the same way. A
pairwise template (``pairwise``: it names ``{second}``) grades no text alone:
:meth:`LlmJudge.prefer` asks it which of two answers is better (the position audit,
:mod:`blindspot.judge_audit`). Two backends behind the one scorer:

* ``transformers``: a causal chat model in this process (``model``: ``smollm2``, a folder or a Hub
  id). ``mode=weighted`` (the default) scores the probability-weighted mean of the grade tokens in
  the next-token distribution, and the argmax grade;
* ``openai``: any OpenAI-compatible server at ``url`` (``--judge-url``, :mod:`blindspot.judges.
  backends`), its key read from the environment variable ``api_key_env``; ``mode=weighted``
  needs its ``top_logprobs`` (a server without them is refused before any row: ``greedy``, or
  ``auto``).

Outputs: ``score`` (judged by default: the weighted grade, or the parsed one), ``grade`` (the
argmax or parsed grade), and the cost of each row (``calls``, ``prompt_tokens``,
``completion_tokens``; NaN where a server does not report tokens), which a run sums into its
results' ``usage``. The template's messages, rubric and scale (its fingerprint), the model, the
backend and the sampling settings are in the cache key, and for a server what produced the
grades (:class:`~blindspot.judges.backends.ServerIdentity`: its endpoint, the model id it
lists, its ``system_fingerprint``, the mode that ran); the key's variable, the concurrency,
retries, time-out and the call budget are not (they change how, not what, is computed). A reply
with no grade fails its rows (never a silent 0).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from blindspot.errors import BlindspotInputError
from blindspot.judges.backends import Endpoint, RemoteJudge, Reply, Sampling, check_url
from blindspot.judges.grades import require_grade, weighted_grade
from blindspot.judges.template import JudgeTemplate, load_template
from blindspot.models import ModelNotAvailableError, load_causal_lm, model_revision, resolve_model
from blindspot.scorers import _lm_utils as lm
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import ScoreInput, Scorer, register_scorer

BACKENDS = ("transformers", "openai")
#: how a judge's rubric is shown: as written, its lines in reverse order, or reworded (the
#: template's ``reworded`` lines): the rubric-sensitivity test compares them
RUBRICS = ("as_written", "reversed", "reworded")


def rubric_variant(template: JudgeTemplate, variant: str) -> JudgeTemplate:
    """The template with its rubric as ``variant`` shows it."""
    if variant == "reversed":
        return template.with_rubric(tuple(reversed(template.rubric)))
    if variant == "reworded":
        if template.reworded is None:
            raise BlindspotInputError("has no reworded rubric, which rubric=reworded needs",
                                      file=template.file, field="reworded")
        return template.with_rubric(template.reworded)
    if variant != "as_written":
        raise BlindspotInputError(f"llm_judge rubric {variant!r} is not one of "
                                  f"{', '.join(RUBRICS)}", field="rubric")
    return template


_LLM_JUDGE_CARD = ModuleCard(
    title="LLM judge", emoji="⚖️",
    summary=("A prompted chat model grades each text on a declared rubric (G-Eval), in-process or "
             "behind an OpenAI-compatible server."),
    description="""\
LLM judge: a prompted chat model grades each prediction on a rubric, on blindspot's scoring layer.

G-Eval's form (Liu et al., 2023): the score is the probability-weighted mean of the grade tokens
in the judge's next-token distribution (``mode="weighted"``), or the grade parsed from its greedy
(``"greedy"``) or sampled (``"sample"``) reply. The prompt is a template: a shipped one by name
(``coherence``, ``consistency``, ``fluency``, ``relevance``: G-Eval's SummEval criteria;
``mt_adequacy``) or the path of your own ``.toml`` file. Backends: ``transformers`` (a local chat
model, ``model="smollm2"`` offline) or ``openai`` (an OpenAI-compatible server at ``url``, its key
from the environment variable ``api_key_env``). Distinct rows are judged once and cached on disk;
the template, model, backend and sampling settings are in the cache key.""",
    examples="""\
>>> import evaluate
>>> judge = evaluate.load("blindspot/llm_judge")
>>> out = judge.compute(predictions=["The cat sat on the mat."], template="fluency",
...                     model="smollm2", use_aggregator=False)
>>> sorted(out)
['calls', 'completion_tokens', 'grade', 'prompt_tokens', 'score']
>>> 1 <= out["score"][0] <= 3
True
""",
    inputs="""\
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
""",
    citation="""\
@inproceedings{liu-etal-2023-g,
    title = "{G}-Eval: {NLG} Evaluation using {GPT}-4 with Better Human Alignment",
    author = "Liu, Yang and Iter, Dan and Xu, Yichong and Wang, Shuohang and Xu, Ruochen and
              Zhu, Chenguang",
    booktitle = "Proceedings of the 2023 Conference on Empirical Methods in Natural Language
                 Processing",
    year = "2023",
}
""",
    sections="""\
## Metric description
A chat model reads a template's system and user messages (the rubric, the scale, the text and,
where the template shows them, the source and references) and grades the text. With
`mode="weighted"` (the default, G-Eval's form) the score is the probability-weighted mean of the
grade tokens in the judge's next-token distribution; `"greedy"` and `"sample"` parse the grade
from the reply. Shipped templates: `coherence`, `consistency`, `fluency`, `relevance` (G-Eval's
SummEval criteria, worded for blindspot) and `mt_adequacy`; give the path of your own `.toml`
file to use yours. (`pairwise` compares two answers: it is for `blindspot judge-audit`'s
position audit and grades no text alone.)

## How to use
```python
import evaluate
judge = evaluate.load("blindspot/llm_judge")
judge.compute(predictions=["A fire forced 200 families from their homes."],
              sources=["A fire at a plastics factory forced the evacuation of 200 homes..."],
              template="consistency", model="smollm2")
# a server: backend="openai", url="http://127.0.0.1:8000/v1", key in $OPENAI_API_KEY
```

## Output values
`score` (the template's scale, higher is better), `grade`, and the cost of each row: `calls`,
`prompt_tokens`, `completion_tokens` (NaN where the server does not report them).

## Limitations and bias
A judge has blind spots of its own: it may prefer the first of two answers, longer answers, text
from its own model, or grade differently from one sample to the next. `blindspot run --metrics
llm_judge@smollm2` runs every blind-spot test on it; see docs/judges.md. A reply with no grade
fails its row; it is never scored 0.
""",
    requirements=("torch", "transformers", "openai"),
)


@register_scorer
class LlmJudge(Scorer):
    """A prompted chat model as a metric, in this process or behind an OpenAI-compatible API."""

    name = "llm_judge"
    card = _LLM_JUDGE_CARD
    outputs = ("score", "grade", "calls", "prompt_tokens", "completion_tokens")
    cost_outputs = ("calls", "prompt_tokens", "completion_tokens")
    flags_uninformative = True
    default_output = "score"
    uses_references = "optional"
    uses_source = "optional"
    version = "1"
    default_batch_size = 8

    def __init__(self, model: str = "smollm2", template: str = "coherence",
                 backend: str = "transformers", mode: str = "weighted",
                 rubric: str = "as_written", temperature: float = 1.0, top_p: float = 1.0,
                 seed: int = 0, max_tokens: int = 8, url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", max_calls: int | None = None,
                 concurrency: int = 4, retries: int = 4, timeout: float = 120.0,
                 device: str | None = None) -> None:
        if backend not in BACKENDS:
            raise BlindspotInputError(f"llm_judge backend {backend!r} is not one of "
                                      f"{', '.join(BACKENDS)}", field="backend")
        self.template = rubric_variant(load_template(str(template)), rubric)
        self.sampling = Sampling(mode, float(temperature), float(top_p), int(seed),
                                 int(max_tokens))
        sampled = {"temperature": self.sampling.temperature, "top_p": self.sampling.top_p,
                   "seed": self.sampling.seed} if mode == "sample" else {}
        super().__init__(model=str(model), template=self.template.name, backend=backend,
                         mode=mode, rubric=rubric, prompt=self.template.fingerprint(),
                         max_tokens=self.sampling.max_tokens, **sampled)
        self.uses_source = "required" if self.template.needs("source") else "none"
        self.uses_references = "required" if self.template.needs("references") else "none"
        self.max_calls, self.calls, self._device = max_calls, 0, device
        self._remote: RemoteJudge | None = None
        if backend == "openai":
            if not url:
                raise BlindspotInputError("the openai backend needs the server's URL",
                                          fix="Give --judge-url http://HOST:PORT/v1", field="url")
            self._endpoint = Endpoint(check_url(str(url)), str(api_key_env), int(concurrency),
                                      int(retries), float(timeout))

    def remote(self) -> RemoteJudge:
        """The server judge (the openai backend), made on first use."""
        if self._remote is None:
            self._remote = RemoteJudge(self._endpoint, _served_name(self.config["model"]),
                                       self.sampling)
        return self._remote

    def identity_config(self) -> Mapping[str, Any]:
        # what produced the grades: a server's endpoint and what it says it serves (asked
        # once, before any row), and the mode that ran (``auto`` resolved)
        if self.config["backend"] == "openai":
            return {**self.config, **self.remote().identity().as_config()}
        if self.sampling.mode == "auto":  # the model's own distribution is always there
            return {**self.config, "mode": "weighted"}
        return self.config

    def model_revision(self) -> str:
        return model_revision(self.config["model"]) if self.config["backend"] == "transformers" \
            else ""

    def weights(self) -> str | None:
        # a server's model has no revision this machine can read: its identity is in the options
        return super().weights() if self.config["backend"] == "transformers" else None

    def device_kind(self) -> str | None:
        # a server (the openai backend) computes elsewhere: no device of this machine's
        return super().device_kind() if self.config["backend"] == "transformers" else None

    def reserve(self, inputs: int) -> None:
        if self.max_calls is not None and self.calls + inputs > self.max_calls:
            raise BlindspotInputError(
                f"the run needs up to {self.calls + inputs} judge calls (its rows and the "
                f"sanity anchors) and the budget is {self.max_calls} (--max-calls); nothing "
                "more was called",
                fix=f"Raise --max-calls to at least {self.calls + inputs}, or judge fewer rows "
                    "or tests")

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        if self.template.pairwise:
            raise BlindspotInputError("is a pairwise template (it names {second}): it compares "
                                      "two answers and grades none alone",
                                      file=self.template.file, field="user",
                                      fix="Use it in the judge position test (blindspot "
                                          "judge-audit --audits position), or grade with "
                                          "another template")
        self.reserve(len(batch))
        messages = [self.template.render(item.hypothesis, item.references, item.source)
                    for item in batch]
        hypotheses = [item.hypothesis for item in batch]
        replies = self._replies(messages, hypotheses)
        self.calls += len(batch)
        return [_as_scores(reply) for reply in replies]

    def prefer(self, firsts: Sequence[str], seconds: Sequence[str],
               sources: Sequence[str | None] | None = None) -> list[Reply]:
        """A pairwise template's judgement of each (first, second) pair: its ``grade`` is 1
        when the first answer is the better, 2 when the second is; its ``score`` the weighted
        grade (the probability that the second is better is ``score - 1``)."""
        if not self.template.pairwise:
            raise BlindspotInputError("is not a pairwise template (it never names {second})",
                                      file=self.template.file, field="user",
                                      fix="Use --option llm_judge.template=pairwise")
        self.reserve(len(firsts))
        srcs = list(sources) if sources is not None else [None] * len(firsts)
        messages = [self.template.render(first, (), source, second=second)
                    for first, second, source in zip(firsts, seconds, srcs, strict=True)]
        replies = self._replies(messages, list(firsts))
        self.calls += len(firsts)
        return replies

    def _replies(self, messages: list[list[dict[str, str]]], hypotheses: list[str]
                 ) -> list[Reply]:
        if self.config["backend"] == "openai":
            return self.remote().replies(messages, self.template.grades, hypotheses)
        tokenizer, model = load_causal_lm(self.config["model"])
        return local_replies(tokenizer, lm.place(model, self._device), messages,
                             self.template.grades, self.sampling, hypotheses)


def _served_name(model: str) -> str:
    """The model name a server is asked for: an offline short name (``smollm2``) stands for its
    folder here, which is what a local ``transformers serve`` loads; any other name as given."""
    try:
        return resolve_model(model)
    except ModelNotAvailableError:
        return model


def _as_scores(reply: Reply) -> dict[str, Any]:
    return {"score": reply.score, "grade": float(reply.grade), "calls": 1.0,
            "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}


# -- in-process (the transformers backend) ------------------------------------------------------------

def grade_token_ids(tokenizer: Any, grades: Sequence[int]) -> list[int]:
    """The token id of each grade's digit; a tokenizer that splits a digit cannot be weighted."""
    ids = []
    for grade in grades:
        pieces = tokenizer.encode(str(grade), add_special_tokens=False)
        if len(pieces) != 1:
            raise ValueError(f"the judge's tokenizer splits the grade {grade} into {len(pieces)} "
                             "tokens; use mode=greedy")
        ids.append(int(pieces[0]))
    return ids


def prompt_ids(tokenizer: Any, messages: Sequence[dict[str, str]]) -> list[int]:
    """The chat template's token ids for ``messages``, ending where the judge's reply starts."""
    return list(tokenizer.apply_chat_template(list(messages), add_generation_prompt=True,
                                              tokenize=True))


def local_replies(tokenizer: Any, model: Any, batch: Sequence[Sequence[dict[str, str]]],
                  grades: Sequence[int], sampling: Sampling, hypotheses: Sequence[str]
                  ) -> list[Reply]:
    """Each row's reply from a causal chat model in this process (``auto``: weighted, the
    model's own distribution is always there)."""
    prompts = [prompt_ids(tokenizer, messages) for messages in batch]
    if sampling.mode in ("weighted", "auto"):
        return _weighted_local(tokenizer, model, prompts, grades)
    return [_generated_local(tokenizer, model, ids, messages, grades, sampling, hypothesis)
            for ids, messages, hypothesis in zip(prompts, batch, hypotheses, strict=True)]


def _weighted_local(tokenizer: Any, model: Any, prompts: list[list[int]],
                    grades: Sequence[int]) -> list[Reply]:
    import torch  # the heavy edge: only an in-process judge runs a model

    ids_of = grade_token_ids(tokenizer, grades)
    ids, mask = lm.right_pad(prompts, lm.pad_id(tokenizer))
    device = lm.model_device(model)
    with torch.inference_mode():
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                       use_cache=False).logits
    replies = []
    for row, prompt in enumerate(prompts):
        probs = torch.softmax(logits[row, len(prompt) - 1].float(), dim=-1)
        weighted = weighted_grade({g: float(probs[i]) for g, i in zip(grades, ids_of,
                                                                      strict=True)})
        if weighted is None:
            raise ValueError("the judge gave every grade token probability 0")
        replies.append(Reply(weighted.score, weighted.grade, float(len(prompt)), 1.0))
    return replies


def _generated_local(tokenizer: Any, model: Any, prompt: list[int],
                     messages: Sequence[dict[str, str]], grades: Sequence[int],
                     sampling: Sampling, hypothesis: str) -> Reply:
    """One row's generated reply: greedy or sampled, as a server's ``generate`` would make it
    (the model's own generation config, with the request's settings on top)."""
    import torch  # the heavy edge: only an in-process judge runs a model

    config = copy.deepcopy(model.generation_config)
    config.max_new_tokens = sampling.max_tokens
    config.do_sample = sampling.mode == "sample"
    if config.do_sample:
        config.temperature, config.top_p = sampling.temperature, sampling.top_p
        torch.manual_seed(sampling.row_seed(messages))
    device = lm.model_device(model)
    ids = torch.tensor([prompt], dtype=torch.long, device=device)
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                             generation_config=config, pad_token_id=lm.pad_id(tokenizer))
    new = out[0, len(prompt):].tolist()
    reply = tokenizer.decode(new, skip_special_tokens=True)
    grade = require_grade(reply, grades, hypothesis)
    return Reply(float(grade), grade, float(len(prompt)), float(len(new)))
