"""The perturbation templates of Sai et al. (EMNLP 2021), Tables 4-5, per task and criterion.

Each :class:`Template` names the registered perturbation (``blindspot list``) and level that
implement it, and what a good metric does: ``drop`` (the template hurts the criterion, the score
should fall) or ``invariant`` (the meaning is kept: synonyms, contractions, expansions, numerals
to words, and the alternative-reference control; the score must NOT drop).

The fluency and invariance templates are common to every task (paper §3); the control row
("an alternative human reference", last row of each panel of the paper's Figure 4) is not a text
transform: the deviation protocol scores another reference of the row instead of the gold.

Choices, stated:

* Where the paper gives one template for several edits ("negation / antonyms", "keep only /
  remove stop words", "perturb names, nouns, verbs", "misplaced / missing punctuation"), each
  edit is its own row, so a metric's reaction to each is visible.
* "Use hyponyms" (summarization, data-to-text), "change attributes" (image captioning) and
  "perturb nouns/verbs" (question generation) are ``sibling_substitution``: App. B defines the
  related words as hyponyms of hypernyms, and the paper's examples are siblings.
* "Mask a few words and predict" is the blind-spots suite's ``bert_diverge`` (the same masked-LM
  re-sampling) at r = 0.2, a few words of a question.
* "Add extra text" / "add non-sensible text" append a random sentence of another gold
  (``random_sentence_addition``); "random text" / "random responses" replace the whole text
  (``random_response``); generic replies are the spec's ok / thanks / yes / bye.
* Typos, jumbling, subject-verb disagreement, number and name changes and the dropped phrase
  (a contiguous 20 % span) are the MENLI attacks (``typo``, ``jumble``,
  ``subject_verb_disagreement``, ``number_error``, ``name_error``, ``omission``); a template
  whose test is not registered in this install is reported as skipped, never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from blindspot.registry import Registry, snake

#: The checklist paper's six tasks (the entry is its abbreviation), with their aliases; the same
#: registry idiom as the perturbation tasks, but another set of tasks (the paper's own).
TASKS: Registry[str] = Registry("checklist task", normalise=snake)
TASKS.register("translation", "MT", aliases=("mt", "wmt", "translation_paragraph", "ted"))
TASKS.register("summarization", "AS", aliases=("as", "sum"))
TASKS.register("question_generation", "QG", aliases=("qg",))
TASKS.register("dialogue", "DG", aliases=("dg", "dialog"))
TASKS.register("image_captioning", "IC", aliases=("ic", "captioning"))
TASKS.register("data_to_text", "D2T", aliases=("d2t", "data2text"))
#: the test name of the control row (not a perturbation: another reference of the row)
CONTROL = "alternative_reference"
DROP, INVARIANT = "drop", "invariant"


def canonical_checklist_task(task: str) -> str:
    """The canonical task name of the checklist; a clear error lists the valid ones."""
    return TASKS.canonical(task, note=" (the perturbation checklist covers these tasks only)")


@dataclass(frozen=True)
class Template:
    """One (task, criterion, template) row and the perturbation that implements it."""

    task: str
    criterion: str
    template: str
    test: str
    level: Any
    expectation: str
    paper: str  #: the paper's wording of the template

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.task, self.criterion, self.template)

    @property
    def is_control(self) -> bool:
        return self.test == CONTROL

    def as_json(self) -> dict[str, Any]:
        return {"task": self.task, "criterion": self.criterion, "template": self.template,
                "test": self.test, "level": str(self.level), "expectation": self.expectation,
                "paper": self.paper}


# (criterion, template id, test, level, expectation, paper wording)
_Spec = tuple[str, str, str, Any, str, str]

_COMMON: list[_Spec] = [
    ("fluency", "missing_punctuation", "punctuation_removal", "-", DROP, "Misplaced/missing punctuation"),
    ("fluency", "misplaced_punctuation", "noised_punctuation", 1.0, DROP, "Misplaced/missing punctuation"),
    ("fluency", "jumbled_word_order", "jumble", "-", DROP, "Jumbling word order"),
    ("fluency", "subject_verb_disagreement", "subject_verb_disagreement", "-", DROP, "Subject-verb disagreement"),
    ("fluency", "drop_stop_words", "stopword_removal", 1.0, DROP, "Dropping words (such as prepositions/articles, etc)"),
    ("fluency", "drop_articles", "article_removal", 1.0, DROP, "Dropping words (such as prepositions/articles, etc)"),
    ("fluency", "drop_prepositions", "preposition_removal", 1.0, DROP, "Dropping words (such as prepositions/articles, etc)"),
    ("fluency", "drop_adjectives", "pos_drop", "ADJ", DROP, "Dropped adjectives (spec C)"),
    ("fluency", "spelling_errors", "typo", 1, DROP, "Spelling errors"),
    ("invariance", "synonyms", "synonym_substitution", "-", INVARIANT, "Replace with synonyms"),
    ("invariance", "contractions", "contraction", "-", INVARIANT, "Contractions"),
    ("invariance", "expansions", "expansion", "-", INVARIANT, "Expansions"),
    ("invariance", "numerals_to_words", "numerals_to_words", "-", INVARIANT, "Numerals to words"),
    ("control", "alternative_reference", CONTROL, "-", INVARIANT, "Alternative human reference (Figure 4, last row)"),
]

_PER_TASK: dict[str, list[_Spec]] = {
    "translation": [
        ("adequacy", "drop_phrases", "omission", 0.2, DROP, "Dropping out words or phrases"),
        ("adequacy", "add_extra_text", "random_sentence_addition", "-", DROP, "Adding extra wrong information"),
        ("adequacy", "negation", "negation", 1.0, DROP, "Negation / antonyms"),
        ("adequacy", "antonyms", "antonym_substitution", "-", DROP, "Negation / antonyms"),
        ("adequacy", "repeat_phrases", "leading_phrase_repetition", 0.25, DROP, "Repeat phrases"),
        ("adequacy", "change_numbers", "number_error", "-", DROP, "Change numbers (spec C)"),
        ("adequacy", "change_names", "name_error", "-", DROP, "Change names (Table 1)"),
        ("adequacy", "remove_stop_words", "stopword_removal", 1.0, DROP, "Remove stop words (spec C)"),
        ("adequacy", "keep_only_stop_words", "stopword_only", "-", DROP, "Keep only stop words (spec C)"),
    ],
    "summarization": [
        ("coverage", "drop_phrases", "omission", 0.2, DROP, "Dropping words"),
        ("informativeness", "negation", "negation", 1.0, DROP, "Negation and antonyms"),
        ("informativeness", "antonyms", "antonym_substitution", "-", DROP, "Negation and antonyms"),
        ("informativeness", "hyponyms", "sibling_substitution", "noun", DROP, "Use hyponyms to create misinformation"),
        ("coherence", "reorder_sentences", "sentence_switching", 1, DROP, "Reorder sentences"),
        ("non_redundancy", "repeat_sentences", "sentence_repetition", "-", DROP, "Repeat sentences"),
        ("referential_clarity", "nouns_to_pronouns", "noun_to_pronoun", "-", DROP, "Replace nouns by pronouns"),
        ("relevance", "change_names", "name_error", "-", DROP, "Change names (spec C)"),
    ],
    "question_generation": [
        ("answerability", "change_question_word", "question_word_change", "-", DROP, "Change question word"),
        ("answerability", "drop_question_word", "question_word_drop", "-", DROP, "Drop question word"),
        ("answerability", "question_to_assertion", "question_to_assertion", "-", DROP, "Change question to assertive statement"),
        ("answerability", "drop_stop_words", "stopword_removal", 1.0, DROP, "Drop NLTK stop words"),
        ("relevance", "mask_and_fill", "bert_diverge", 0.2, DROP, "Mask a few words and predict"),
        ("relevance", "change_names", "name_error", "-", DROP, "Perturb named entities, nouns, verbs"),
        ("relevance", "perturb_nouns", "sibling_substitution", "noun", DROP, "Perturb named entities, nouns, verbs"),
        ("relevance", "perturb_verbs", "sibling_substitution", "verb", DROP, "Perturb named entities, nouns, verbs"),
    ],
    "dialogue": [
        ("making_sense", "negate_previous_utterance", "context_negation", "-", DROP, "Negate a previous statement by same speaker"),
        ("making_sense", "add_non_sensible_text", "random_sentence_addition", "-", DROP, "Add extra non-sensible text"),
        ("avoid_repetition", "repeat_previous_utterance", "context_repetition", "-", DROP, "Repeat previous utterances"),
        ("avoid_repetition", "repeat_phrases", "leading_phrase_repetition", 0.25, DROP, "Repeat phrases"),
        ("listening", "can_you_repeat", "generic_response", "repeat", DROP, "Replace with \"Can you repeat?\""),
        ("engagingness", "generic_ok", "generic_response", "ok", DROP, "Generic reply (§5.2: ok, thanks)"),
        ("engagingness", "generic_thanks", "generic_response", "thanks", DROP, "Generic reply (§5.2: ok, thanks)"),
        ("engagingness", "generic_yes", "generic_response", "yes", DROP, "Generic reply (spec C)"),
        ("engagingness", "generic_bye", "generic_response", "bye", DROP, "Generic reply (spec C)"),
        ("relevance", "random_response", "random_response", "-", DROP, "Map random responses"),
    ],
    "image_captioning": [
        ("correctness", "change_object_order", "object_order_swap", "-", DROP, "Change the order of objects"),
        ("correctness", "change_gender", "gender_swap", "-", DROP, "Change gender"),
        ("thoroughness", "change_attributes", "sibling_substitution", "adj", DROP, "Change attributes"),
        ("thoroughness", "drop_objects", "pos_drop", "NOUN", DROP, "Drop objects/noun"),
        ("thoroughness", "repeat_object", "object_repetition", "-", DROP, "Repeat (append) object"),
    ],
    "data_to_text": [
        ("correctness", "hyponyms", "sibling_substitution", "noun", DROP, "Use hyponyms"),
        ("correctness", "change_numbers", "number_error", "-", DROP, "Change numbers"),
        ("correctness", "negation", "negation", 1.0, DROP, "Negation / antonyms"),
        ("coverage", "drop_phrases", "omission", 0.2, DROP, "Drop phrases"),
        ("relevance", "repeat_phrases", "leading_phrase_repetition", 0.25, DROP, "Repeat phrases"),
        ("relevance", "random_text", "random_response", "-", DROP, "Random text"),
        ("relevance", "change_names", "name_error", "-", DROP, "Perturb names"),
    ],
}


def _build() -> tuple[Template, ...]:
    rows = []
    for task in TASKS:
        for spec in [*_PER_TASK[task], *_COMMON]:
            rows.append(Template(task, *spec))
    return tuple(rows)


#: Every template of every task, task-specific rows first, then fluency, invariance, control.
TEMPLATES: tuple[Template, ...] = _build()


def templates_for(task: str, criteria: str | list[str] | None = None) -> list[Template]:
    """The templates of ``task``, optionally only those of the given criteria (names checked)."""
    key = canonical_checklist_task(task)
    rows = [t for t in TEMPLATES if t.task == key]
    if criteria:
        wanted = criteria.split(",") if isinstance(criteria, str) else list(criteria)
        wanted = [c.strip() for c in wanted if c.strip()]
        known = sorted({t.criterion for t in rows})
        unknown = [c for c in wanted if c not in known]
        if unknown:
            raise ValueError(f"criterion {unknown[0]!r} is not a criterion of task {key!r}; "
                             f"choose from {known}")
        rows = [t for t in rows if t.criterion in wanted]
    return rows
