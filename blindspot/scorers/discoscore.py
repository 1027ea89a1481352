"""DiscoScore FocusDiff (Zhao et al., 2023), the variant the MENLI paper reports ("Focus
Frequency", noun foci): how differently a hypothesis and a reference treat the nouns they share.

A text's foci are its nouns: spaCy's ``NOUN`` and ``PROPN`` tokens (``en_core_web_sm``, the
project's cached parser), grouped by lemma. The text is encoded as ``[CLS]`` followed by the
word pieces of its tokens, by the encoder cut after its first ``num_layers`` layers (8, the
authors' cut of BERT); a focus' vector is the sum, over its occurrences, of the L2-normalised
vector of each occurrence's last word piece, so it grows with how often the focus recurs. With
``F_h`` the hypothesis' foci and ``F_h & F_r`` those the reference shares:

    discoscore = sum over shared foci f of ||h_f - r_f||^2 / |F_h|

a distance: 0 for identical texts, lower is better. As in the authors' code, a hypothesis that
shares no focus with the reference (or has no noun) scores 0, the best value: the metric judges
how shared foci are used, not whether they are there.

Choices: the authors' default checkpoint is ``bert-base-uncased`` (their paper's best was
Conpono, a BERT fine-tuned for discourse coherence; give its folder as ``model_type``); their
code splits words on whitespace and finds nouns with UDPipe, keeping a whitespace word when it
equals a noun's lemma; here the words are spaCy's tokens and a noun is found by its tag, so
"cats." is a focus ``cat`` (the authors' reading misses it); the checkpoint's own tokenizer is
used as it is (the authors' code turns lower-casing off, even for the uncased BERT). Several
references: the mean (as the authors').
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from blindspot.parsing import ParsedText, get_parser
from blindspot.scorers._encoders import checked_layer, encoder_on_device, layer_count
from blindspot.scorers._token_vectors import LayerVectorScorer
from blindspot.scoring.scorer import ScoreInput, register_scorer

DEFAULT_MODEL = "bert-base-uncased"
#: the authors' cut of BERT: its first 8 layers
DEFAULT_LAYERS = 8
FOCUS_TAGS = frozenset({"NOUN", "PROPN"})


def focus_difference(hypothesis: dict[str, Any], reference: dict[str, Any]) -> float:
    """Sum of squared distances of the shared foci' vectors over the hypothesis' focus count
    (0 when none is shared)."""
    import numpy as np

    shared = sorted(set(hypothesis) & set(reference))
    if not shared:
        return 0.0
    return float(sum(np.sum((hypothesis[f] - reference[f]) ** 2) for f in shared)
                 / len(hypothesis))


@register_scorer
class DiscoScore(LayerVectorScorer):
    """DiscoScore FocusDiff (noun foci, frequency-summed) of each hypothesis against each
    reference, averaged over references."""

    name = "discoscore"
    outputs = ("discoscore",)
    lower_is_better = frozenset({"discoscore"})

    def __init__(self, model_type: str = DEFAULT_MODEL, num_layers: int | None = None,
                 batch_size: int = 64, device: str | None = None) -> None:
        path = self.setup(model_type, 1, False, batch_size, device)
        layers = checked_layer(model_type, num_layers,
                               min(DEFAULT_LAYERS, layer_count(model_type)))
        super().__init__(model_type=path, num_layers=layers)

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

    def foci(self, texts: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Each distinct text's focus vectors, encoded ``batch_size`` texts at a time."""
        import torch

        unique = list(dict.fromkeys(texts))
        inputs = [self.pieces(p) for p in get_parser().parse_many(unique)]
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
