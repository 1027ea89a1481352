"""DiscoScore on blindspot's cached scoring layer.

DiscoScore FocusDiff (Zhao et al., 2023), noun foci, frequency-summed ("Focus Frequency", the variant
the MENLI paper reports), as the authors' code reads a text: a focus is a whitespace word equal to
the lemma of one of its nouns (spaCy NOUN/PROPN; the authors tag with UDPipe); the text is encoded
as `[CLS]` + the word pieces of its words (lower-casing off, as theirs) by the encoder cut after 8
layers (`reading="tokens"`: spaCy's tokens by lemma); a focus' vector is the sum of
its occurrences' normalised vectors; the score is the summed squared distance of the shared foci'
vectors over the hypothesis' focus count.

Runs offline on MiniLM (``model_type="minilm"``). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.

Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/discoscore")
    >>> out = metric.compute(predictions=["The company hired a new chef. The chef cooks pasta.",
    ...                                   "The dog sleeps."],
    ...                      references=["The company hired a chef. The chef makes pizza.",
    ...                                  "A cat sleeps."],
    ...                      model_type="minilm", use_aggregator=False)
    >>> [round(s, 2) for s in out["discoscore"]]
    [0.13, 0.0]
"""

import blindspot.scorers._token_vectors as layers
import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{zhao-etal-2023-discoscore,
    title = "{D}isco{S}core: Evaluating Text Generation with {BERT} and Discourse Coherence",
    author = "Zhao, Wei and Strube, Michael and Eger, Steffen",
    booktitle = "Proceedings of EACL 2023",
    year = "2023",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = layers.module_inputs(
    """model_type (str): encoder: Hub id, local folder or offline short name "minilm" (default
        "bert-base-uncased", the authors' code default).
    num_layers (int): layers kept (default 8, or all of a smaller model).""",
    """    discoscore: a distance >= 0, lower is better; 0 for identical texts and, as in the
        authors' code, when the texts share no noun.""")


class DiscoScore(base.ScorerMetric):
    """DiscoScore on the blindspot scoring layer."""

    scorer_name = "discoscore"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
