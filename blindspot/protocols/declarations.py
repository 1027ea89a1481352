"""Every protocol's declaration: its name, what it judges, its options and where its code lives.

This is what ``blindspot protocols`` lists, what every entry point checks a protocol's options
against (:meth:`~blindspot.protocols.interface.ProtocolDeclaration.check_options`) and what the
Space's forms read, and it imports no execution code: the runner (``datasets``), the judge
(``scipy``) and the report writer (matplotlib) load only when a protocol runs
(:func:`~blindspot.protocols.interface.get_protocol`). :mod:`blindspot.catalog` fills
:data:`~blindspot.protocols.interface.PROTOCOLS` from this module, in the order declared here,
which is the order ``blindspot protocols`` lists them.

Each option's ``visitor_safe``: a visitor of the public Space may set it; engine settings, models
and anything that names a server path never are; ``file`` options come from the Space's upload
box only.
"""

from __future__ import annotations

from blindspot import defaults
from blindspot.challenge_sets.names import FORMAT_NAMES, TIES_POLICIES
from blindspot.demo import DEMO_TASKS
from blindspot.protocols.interface import ProtocolDeclaration, register_protocol
from blindspot.protocols.options import MAX_SEED, OptionSpec
from blindspot.protocols.preference import ERROR_TYPES, MODES

# -- options several protocols share -------------------------------------------------------------

BATCH_SIZE = OptionSpec("batch_size", "int", "texts per metric call (the metric's default when "
                        "unset)", minimum=1)

#: how the deviation protocol brings metric scores to [0, 1]
NORMALISE = ("auto", "minmax", "none")

# -- the protocols, in the order they are listed -------------------------------------------------

RANK = register_protocol(ProtocolDeclaration(
    "rank",
    "rank and monotonicity (He et al., 2023): the score must strictly decrease as the noise "
    "ratio grows",
    implementation="blindspot.protocols.rank:RankProtocol",
    options=(
        OptionSpec("levels", "levels", "levels per test instead of the paper's",
                   visitor_safe=True),
        OptionSpec("tolerance", "float", "a mean score may rise by this much and still count as "
                   "a decrease", default=defaults.TOLERANCE, minimum=0, visitor_safe=True),
        OptionSpec("worst_examples", "int", "examples the metric penalised least, per test",
                   default=defaults.WORST_EXAMPLES, minimum=0, maximum=1000, visitor_safe=True),
        OptionSpec("bootstrap_seed", "int", "seed of the bootstrap confidence intervals",
                   default=defaults.BOOTSTRAP_SEED,
                   minimum=0, maximum=MAX_SEED, visitor_safe=True),
        BATCH_SIZE,
        OptionSpec("state_dir", "path", "folder of the run's resumable state (default "
                   "<out>/.state)"),
        OptionSpec("engine", "engine", "where perturbation and scoring run: local (this "
                   "machine) or ray (a Ray cluster)", default="local", choices=("local", "ray")),
        OptionSpec("address", "text", "Ray cluster to join with engine ray: auto or HOST:PORT "
                   "from a node of it, ray://HOST:PORT (Ray Client) from elsewhere (default: "
                   "start one here)"),
        OptionSpec("actors", "int", "engine ray: scoring actors (default: one per GPU, else "
                   "one per CPU)", minimum=1),
        OptionSpec("gpus_per_actor", "float", "engine ray: GPUs per scoring actor (default: 1 "
                   "when the cluster has GPUs)", minimum=0),
        OptionSpec("chunk_size", "int", "stream each data file (a local .jsonl/.parquet) this "
                   "many rows at a time, in bounded memory, with the same results; resumes like "
                   "any run", minimum=1),
    )))

#: the rank options that say where the work runs: ``blindspot run`` and ``stream`` take each as
#: its own flag (``--engine``...)
ENGINE_OPTIONS = ("engine", "address", "actors", "gpus_per_actor", "chunk_size")

PREFERENCE = register_protocol(ProtocolDeclaration(
    "preference",
    "preference accuracy (Chen and Eger, 2023, MENLI): the metric must score the paraphrase "
    "strictly above the adversarial candidate, per error type",
    implementation="blindspot.protocols.preference_run:PreferenceProtocol",
    options=(
        OptionSpec("mode", "choice", "the anchor the candidates are compared with",
                   default="ref-based", visitor_safe=True,
                   choices=(*MODES, *(m.replace("-", "_") for m in MODES))),
        OptionSpec("fixed", "bool", "read the *_fixed columns", default=False,
                   visitor_safe=True),
        OptionSpec("error_types", "names", "error types to judge (default: all present)",
                   choices=tuple(ERROR_TYPES), visitor_safe=True),
        OptionSpec("combine_with", "metric", "a metric N reported as w * minmax(N) + "
                   "(1 - w) * minmax(M) beside each metric M", visitor_safe=True),
        OptionSpec("weight", "float", "w of combine_with (MENLI's best MT weight)", default=0.2,
                   minimum=0, maximum=1, visitor_safe=True),
        OptionSpec("examples", "int", "failed pairs kept per error type and metric", default=1,
                   minimum=0, maximum=1000, visitor_safe=True),
        OptionSpec("format", "choice", "the set's file format: MENLI-style columns, or a "
                   "challenge set as published (blindspot run --format)", default="menli",
                   choices=("menli", *FORMAT_NAMES)),
        OptionSpec("ties", "choice", "how the Kendall-like tau counts a tie: left out (MENLI) "
                   "or against the metric (ACES); challenge-set formats", default="excluded",
                   choices=TIES_POLICIES, visitor_safe=True),
        BATCH_SIZE,
    )))

DEVIATION = register_protocol(ProtocolDeclaration(
    "deviation",
    "deviation from human judgement (Sai et al., 2021, Eq. 1): per task, criterion and "
    "checklist template, the metric's drop against the humans' drop",
    implementation="blindspot.protocols.deviation:DeviationProtocol",
    options=(
        OptionSpec("human_scores", "path", "CSV of human scores per template (default: the "
                   "shipped table)", file=True),
        OptionSpec("criteria", "names", "criteria to check (default: all of the task)",
                   visitor_safe=True),
        OptionSpec("templates", "names", "template ids to run (default: all of the criteria)",
                   visitor_safe=True),
        OptionSpec("normalise", "choice", "how metric scores are brought to [0, 1]",
                   default="auto", choices=NORMALISE, visitor_safe=True),
        OptionSpec("tolerance", "float", "a normalised drop up to this counts as none",
                   default=0.0, minimum=0, visitor_safe=True),
        BATCH_SIZE,
        OptionSpec("examples", "int", "examples per template in the report", default=2,
                   minimum=0, maximum=1000, visitor_safe=True),
    )))

CORRELATION = register_protocol(ProtocolDeclaration(
    "correlation",
    "correlation with human criteria (Kendall tau-b, Pearson, Spearman) at system and summary "
    "level, e.g. SummEval's expert coherence/consistency/fluency/relevance",
    implementation="blindspot.protocols.correlation:CorrelationProtocol",
    options=(
        OptionSpec("references", "path", "file of references joined on id (default: the "
                   "judgment rows' own)", file=True),
        OptionSpec("reference_columns", "names", "columns holding references",
                   default="gold,references", visitor_safe=True),
        OptionSpec("criteria", "names", "human criteria to correlate with (default: the "
                   "expert_* columns, else every other numeric column)", visitor_safe=True),
        OptionSpec("system_column", "text", "the column naming the system", default="system",
                   visitor_safe=True),
        OptionSpec("bootstrap", "int", "resamples of a 95% percentile bootstrap interval of "
                   "each Kendall tau, documents drawn with replacement (0: no interval)",
                   default=0, minimum=0, maximum=100_000, visitor_safe=True),
        BATCH_SIZE,
    )))

SEARCH = register_protocol(ProtocolDeclaration(
    "search",
    "adversarial search (He et al., 2023, Appendix J): greedy word edits the metric penalises "
    "least, judged by a panel of other metrics",
    implementation="blindspot.search.protocol:SearchProtocol",
    options=(
        OptionSpec("noise_ratio", "float", "target noise ratio of every hypothesis",
                   default=0.1, minimum=0, maximum=1, exclusive_minimum=True, visitor_safe=True),
        OptionSpec("panel", "metrics", "other metrics scoring the same perturbed texts",
                   visitor_safe=True),
        OptionSpec("k", "int", "candidates per source and word", default=8, minimum=1,
                   maximum=100, visitor_safe=True),
        OptionSpec("mlm", "model", "masked LM for top-k candidates (default: the run's --mlm)"),
        OptionSpec("embedding_model", "model", "model whose input embeddings give "
                   "nearest-word candidates", default="minilm"),
        OptionSpec("max_calls", "int", "budget: scored candidate texts (one search step of one "
                   "text costs one call per candidate edit)", minimum=1, visitor_safe=True),
        OptionSpec("max_seconds", "float", "budget: wall time", minimum=0,
                   exclusive_minimum=True, visitor_safe=True),
        OptionSpec("seed", "int", "breaks exact ties between edits", default=0, minimum=0,
                   maximum=MAX_SEED, visitor_safe=True),
        OptionSpec("limit", "int", "search the first N rows only", minimum=1, visitor_safe=True),
        OptionSpec("generalise", "bool", "check that the patterns found generalise (rank "
                   "protocol)", default=False, visitor_safe=True),
        OptionSpec("top_patterns", "int", "patterns checked by generalise", default=3,
                   minimum=0, maximum=100, visitor_safe=True),
        BATCH_SIZE,
    )))

SELF_BIAS = register_protocol(ProtocolDeclaration(
    "self-bias",
    "self-evaluation bias (He et al., 2023, §5.4): the generator x evaluator score matrix, "
    "flagging evaluators that rank their own base model's system first",
    implementation="blindspot.protocols.self_bias:SelfBiasProtocol",
    options=(
        OptionSpec("system_column", "text", "the generator-system column", default="system",
                   visitor_safe=True),
    )))

CHECKUP = register_protocol(ProtocolDeclaration(
    "checkup",
    "a metric's check-up: batch and order invariance, determinism across processes, the input "
    "length it is blind past, normalisation, reference handling and sanity anchors in score "
    "units (one metric at a time)",
    implementation="blindspot.checkup.protocol:CheckupProtocol",
    options=(
        OptionSpec("rows", "int", "check the first N rows (an unrelated gold comes from another "
                   "row, so at least 2)", default=64, minimum=2, visitor_safe=True),
        OptionSpec("seed", "int", "seed of the shuffled-word and random-character anchors and "
                   "of the appended text", default=0, minimum=0, maximum=MAX_SEED),
        OptionSpec("max_words", "int", "truncation check: append at most this many words "
                   "before reporting no limit", default=2048, minimum=32),
    )))

#: the judge audits (:data:`blindspot.judge_audit.AUDITS`, whose tolerances are the defaults here)
JUDGE_AUDITS = ("position", "rubric", "panel", "flakiness")

JUDGE_AUDIT = register_protocol(ProtocolDeclaration(
    "judge-audit",
    "the LLM judge's own blind spots (--metrics llm_judge@MODEL): position (pairwise order), "
    "rubric order and wording, flakiness of a sampled judge, panels of judges, on the first rows",
    implementation="blindspot.protocols.judge_audit_run:JudgeAuditProtocol",
    options=(
        OptionSpec("audits", "names", "the audits to run", default="position,rubric,flakiness",
                   choices=JUDGE_AUDITS, visitor_safe=True),
        OptionSpec("rows", "int", "judge the data's first ROWS rows", default=4, minimum=1,
                   visitor_safe=True),
        OptionSpec("test", "text", "the text test whose perturbed gold the position audit pairs "
                   "with the gold, and whose verdict the flakiness audit repeats",
                   default="truncation", visitor_safe=True),
        OptionSpec("level", "text", "the test's level (default: its first for the task)",
                   visitor_safe=True),
        OptionSpec("repeats", "int", "flakiness: sampled repeats (one seed each)", default=3,
                   minimum=2, maximum=100, visitor_safe=True),
        OptionSpec("mode", "choice", "how the position, rubric and panel judges answer "
                   "(auto: weighted where the judge gives log-probabilities, else greedy)",
                   default="weighted", choices=("weighted", "greedy", "auto"), visitor_safe=True),
        OptionSpec("template", "text", "the template graded by the rubric, panel and flakiness "
                   "audits (a shipped name or your .toml file)", default="fluency"),
        OptionSpec("pairwise", "text", "the pairwise template of the position audit (a shipped "
                   "name or your .toml file)", default="pairwise"),
        OptionSpec("judges", "names", "panel: each judge as options over the base judge, e.g. "
                   "rubric=reworded or model=./other (a list, e.g. JSON [\"rubric=reworded\", "
                   "\"mode=sample,seed=1\"]; default: the rubric as written, reversed, reworded)"),
        OptionSpec("position_tolerance", "float", "position: the share of pairs that may flip "
                   "with the order", default=0.1, minimum=0, maximum=1, visitor_safe=True),
        OptionSpec("rubric_tolerance", "float", "rubric: the mean absolute score change (grade "
                   "points) a rubric variant may cause", default=0.25, minimum=0,
                   visitor_safe=True),
        OptionSpec("panel_tolerance", "float", "panel: the share of rows on which a judge may "
                   "give another grade than the first", default=0.2, minimum=0, maximum=1,
                   visitor_safe=True),
    )))

CARD = register_protocol(ProtocolDeclaration(
    "card",
    "a metric's report card: the blind-spot suite (rank) on the demo tasks it applies to or the "
    "data, the check-up, the agreement with human judgments (Kendall tau with a bootstrap "
    "interval per criterion) and, for an LLM judge, the judge audits; card.md and results.json",
    implementation="blindspot.protocols.card:CardProtocol",
    options=(
        OptionSpec("tasks", "names", "the demo tasks to judge (default: every one the metric "
                   "applies to)", choices=DEMO_TASKS, visitor_safe=True),
        OptionSpec("rows", "int", "judge the first ROWS gold rows of each task (default: all)",
                   minimum=2, visitor_safe=True),
        OptionSpec("checkup_rows", "int", "rows of the check-up", default=8, minimum=2,
                   visitor_safe=True),
        OptionSpec("max_words", "int", "the check-up's long-input search: append at most this "
                   "many words", default=1024, minimum=32),
        OptionSpec("human", "path", "human judgments to correlate with: one row per output "
                   "(id, system, the output, a numeric column per criterion: SummEval's "
                   "expert_* columns)", file=True),
        OptionSpec("human_references", "path", "the references of the human judgments' "
                   "documents, joined on id (default: the judgments' own columns)", file=True),
        OptionSpec("human_documents", "int", "correlate on the judgments' first N documents "
                   "(default: all)", minimum=2, visitor_safe=True),
        OptionSpec("bootstrap", "int", "resamples of the interval of each Kendall tau",
                   default=defaults.N_BOOT, minimum=0, maximum=100_000, visitor_safe=True),
        OptionSpec("time_cost", "bool", "time the metric's scoring (the card's cost); false "
                   "leaves the timing out, so a card is byte for byte reproducible",
                   default=True, visitor_safe=True),
        OptionSpec("reports", "bool", "also write each composed protocol's own report folder "
                   "(rank-<task>/, checkup/, correlation/, judge-audit/) beside card.md",
                   default=False, visitor_safe=True),
        OptionSpec("state_dir", "path", "folder of the composed runs' resumable state (default "
                   "<out>/.state)"),
    )))

__all__ = ["BATCH_SIZE", "CARD", "CHECKUP", "CORRELATION", "DEVIATION", "ENGINE_OPTIONS", "JUDGE_AUDIT",
           "JUDGE_AUDITS", "NORMALISE", "PREFERENCE", "RANK", "SEARCH", "SELF_BIAS"]
