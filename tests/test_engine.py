"""The engine's promises, for every registered test: determinism per row (across runs, batch
sizes, processes and row order), nothing lost or reordered, bad input handled, parse once."""

from __future__ import annotations

import datasets
import pytest
from engine_support import all_levels, build_tiny_mlm, cnndm_rows, first_level, wikitext_references

from blindspot.noise import noise_ratio
from blindspot.parsing import get_parser
from blindspot.perturbations import OUTPUT_COLUMNS, REGISTRY, get_perturbation
from blindspot.perturbations.dataset import build_perturbation, perturb_dataset, run_suite

NAMES = sorted(REGISTRY)


@pytest.fixture(scope="module")
def resources(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return {"mlm": build_tiny_mlm(tmp_path_factory.mktemp("tiny-mlm")), "lm": "smollm2",
            "ngram_corpus": wikitext_references(100)}


@pytest.fixture(scope="module")
def gold() -> datasets.Dataset:
    rows = cnndm_rows(10)
    return datasets.Dataset.from_dict({"id": [r["id"] for r in rows], "gold": [r["gold"] for r in rows],
                                       "source": [r["source"] for r in rows]})


def _frame(ds: datasets.Dataset) -> dict[str, list]:
    return ds.to_dict()


# -- noise ratio ---------------------------------------------------------------------------------

def test_noise_ratio_by_hand() -> None:
    # one deletion out of four words; a swap of two words is two edits, halved for swap tests
    assert noise_ratio("a b c d", "a b d") == pytest.approx(0.25)
    assert noise_ratio("a b c d", "b a c d") == pytest.approx(0.5)
    assert noise_ratio("a b c d", "b a c d", swap=True) == pytest.approx(0.25)
    assert noise_ratio("", "x") == 0.0


# -- determinism -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_same_output_across_instances_and_row_order(name: str, gold, resources) -> None:
    cls = REGISTRY[name]
    level = all_levels(cls)[-1]
    kwargs = dict(source_column="source", **resources)
    first = perturb_dataset(gold, name, level, seed=3, batch_size=4, **kwargs)
    again = perturb_dataset(gold, name, level, seed=3, batch_size=1, **kwargs)
    assert _frame(first) == _frame(again)
    # row order: reversed input gives the same output per id, in the reversed order
    reverse = gold.select(range(gold.num_rows - 1, -1, -1))
    backwards = perturb_dataset(reverse, name, level, seed=3, batch_size=3, **kwargs)
    assert backwards["id"] == list(reversed(first["id"]))
    assert dict(zip(backwards["id"], backwards["perturbed"], strict=True)) == dict(zip(first["id"],
                                                                          first["perturbed"], strict=True))
    # every input column kept, in order, and the output columns added
    assert first.column_names == gold.column_names + list(OUTPUT_COLUMNS)
    assert first["gold"] == gold["gold"]


@pytest.mark.parametrize("name", [n for n in NAMES if not REGISTRY[n].deterministic])
def test_seeds_differ_for_random_tests(name: str, gold, resources) -> None:
    level = first_level(REGISTRY[name])  # the lowest level: at p = 1 a random test is not random
    outs = [perturb_dataset(gold, name, level, seed=s, source_column="source", **resources)
            ["perturbed"] for s in (1, 2)]
    assert outs[0] != outs[1], f"{name} gives the same output for seeds 1 and 2"


def test_row_output_independent_of_other_rows(gold, resources) -> None:
    """A row's output does not depend on which other rows exist (except corpus pools)."""
    full, _ = run_suite(gold, "all", "summarization", seeds=[1, 2], source_column="source",
                        resources=resources, progress=False)
    part, _ = run_suite(gold.select([2, 5]), "all", "summarization", seeds=[1, 2],
                        source_column="source", resources={**resources, "pool": gold["gold"]},
                        progress=False)
    key = ("id", "perturbation", "level", "seed")
    whole = {tuple(r[k] for k in key): r["perturbed"] for r in full}
    for row in part:
        assert whole[tuple(row[k] for k in key)] == row["perturbed"]


def test_suite_identical_with_processes(gold) -> None:
    # parse-based, pool-based and plain tests; the model-based ones cost a model load per worker
    tests = "fluency,sentence_replacement,noun_switching,named_entity_switching"
    one, plan = run_suite(gold, tests, "summarization", seeds=[1, 2], progress=False)
    two, _ = run_suite(gold, tests, "summarization", seeds=[1, 2], num_proc=2, progress=False)
    assert _frame(one) == _frame(two)
    assert one.num_rows == gold.num_rows * len(plan.items)


def test_map_with_num_proc_matches_single_process(gold) -> None:
    name = next(n for n in NAMES if REGISTRY[n].needs_parse)
    level = first_level(REGISTRY[name])
    single = perturb_dataset(gold, name, level, seed=1)
    multi = perturb_dataset(gold, name, level, seed=1, num_proc=2, batch_size=2)
    assert _frame(single) == _frame(multi)


def test_usable_inside_dataset_map(gold) -> None:
    fn = get_perturbation("truncation").as_map(0.5, seed=1)
    out = gold.map(fn, batched=True, batch_size=3)
    assert out["perturbed"][0] == get_perturbation("truncation").apply(gold["gold"][0], 0.5).perturbed


# -- bad input -----------------------------------------------------------------------------------

ODD_TEXTS = ["", "   ", "\n\t", "Word", "no punctuation at all here just words",
             "Das ist ein deutscher Satz ohne Englisch.", "😀 🎉 👍🏽", "名前は田中です。",
             ("The committee met in Geneva on Monday. " * 2500).strip()]


@pytest.mark.parametrize("name", NAMES)
def test_odd_texts_never_crash(name: str, resources) -> None:
    perturbation = build_perturbation(name, ODD_TEXTS, resources)
    level = first_level(REGISTRY[name])
    ids = list(range(len(ODD_TEXTS))) + [99]
    texts = ODD_TEXTS + [None]
    cols = perturbation.apply_rows(texts, ids, level, seed=1, sources=texts)
    assert len(cols["perturbed"]) == len(texts)
    for text, out, applied, ratio in zip(texts, cols["perturbed"], cols["applied"],
                                         cols["noise_ratio"], strict=True):
        if text is None or not text.strip():
            assert out == text and applied is False and ratio == 0.0
        if not applied:
            assert out == text
        assert ratio >= 0.0


# -- clear errors ---------------------------------------------------------------------------------

def test_unknown_test_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="unknown test 'truncate'.*truncation"):
        get_perturbation("truncate")


def test_aliases_resolve() -> None:
    assert get_perturbation("Truncation").name == "truncation"


@pytest.mark.parametrize("level", [0, 1.5, "x", -0.1])
def test_level_out_of_range(level) -> None:
    with pytest.raises(ValueError, match="truncation"):
        get_perturbation("truncation").apply("A b c.", level)


def test_missing_column_names_choices(gold) -> None:
    with pytest.raises(ValueError, match="text column 'summary' not found.*gold"):
        perturb_dataset(gold, "truncation", 0.1, column="summary")


def test_output_column_clash(gold) -> None:
    once = perturb_dataset(gold, "truncation", 0.1)
    with pytest.raises(ValueError, match="already has output column"):
        perturb_dataset(once, "truncation", 0.1)


def test_missing_resource_is_named() -> None:
    needs = [n for n in NAMES if REGISTRY[n].requires and "pool" not in REGISTRY[n].requires]
    for name in needs:
        with pytest.raises(ValueError, match=f"test '{name}' needs"):
            get_perturbation(name)


def test_suite_skips_tests_without_resources(gold) -> None:
    _, plan = run_suite(gold.select([0]), "all", "summarization", seeds=[1], progress=False)
    for name, cls in REGISTRY.items():
        if (cls.requires and "pool" not in cls.requires and cls.levels.get("summarization")) or \
                (cls.needs_source and cls.levels.get("summarization")):
            assert name in plan.skipped


# -- parse once ---------------------------------------------------------------------------------

def test_each_text_parsed_once_across_tests_levels_and_seeds(gold, monkeypatch) -> None:
    parser = get_parser()
    texts = [f"Unique sentence number {i} about Paris. It has two sentences." for i in range(6)]
    ds = datasets.Dataset.from_dict({"id": list(range(6)), "gold": texts})
    calls: list[int] = []
    real_pipe = parser.nlp.pipe

    def counting_pipe(batch, **kwargs):
        batch = list(batch)
        calls.append(len(batch))
        return real_pipe(batch, **kwargs)

    monkeypatch.setattr(parser.nlp, "pipe", counting_pipe)
    run_suite(ds, "fluency,consistency", "summarization", seeds=[1, 2], progress=False)
    run_suite(ds, "fluency", "open_ended", seeds=[3], progress=False)
    assert sum(calls) == len(texts)


def test_parse_cache_survives_the_process(tmp_path) -> None:
    from blindspot.parsing import Parser

    first = Parser(cache_path=tmp_path / "p.sqlite")
    parsed = first.parse("Alice moved to Lisbon in 2010. She liked it.")
    second = Parser(cache_path=tmp_path / "p.sqlite")
    second._nlp = first.nlp  # same model; the point is that pipe is never called
    second.nlp.pipe, real = (lambda *a, **k: (_ for _ in ()).throw(AssertionError("re-parsed"))), \
        second.nlp.pipe
    try:
        assert second.parse("Alice moved to Lisbon in 2010. She liked it.") == parsed
    finally:
        second.nlp.pipe = real


def test_parsing_in_processes_gives_the_same_parses_in_order(gold) -> None:
    from blindspot import parsing

    texts = [t for t in gold["gold"] if t][:12] * 2  # repeats are parsed once
    expected = parsing.Parser(use_disk=False, batch_size=1).parse_many(texts)
    parsing._WORKER.clear()
    # 12 distinct texts, 2 workers, batches of 1: enough for a pool (8 shards)
    got = parsing.Parser(use_disk=False, batch_size=1).parse_many(texts, num_proc=2)
    assert "nlp" in parsing._WORKER  # set for the forked workers only when a pool ran
    assert got == expected


def test_suite_with_nothing_to_run_is_empty_but_typed(gold) -> None:
    out, plan = run_suite(gold, "sentence_switching", "translation", progress=False)
    assert "sentence_switching" in plan.skipped and "translation" in plan.skipped["sentence_switching"]
    assert out.num_rows == 0
    assert out.column_names == gold.column_names + list(OUTPUT_COLUMNS)
    assert out.features["noise_ratio"].dtype == "float64"


def test_worker_tasks_keep_each_test_on_few_workers() -> None:
    from blindspot.perturbations.dataset import SuiteItem, worker_tasks

    items = ([SuiteItem("negation", 1, s) for s in range(5)] + [SuiteItem("truncation", 0.1, 1),
             SuiteItem("truncation", 0.2, 1)] + [SuiteItem("token_drop", 0.1, 1)])
    assert worker_tasks(items, 2) == [[0, 1, 2], [3, 4], [5], [6], [7]]
    assert worker_tasks(items, 1) == [[0, 1, 2, 3, 4], [5, 6], [7]]
    assert sorted(i for task in worker_tasks(items, 3) for i in task) == list(range(8))
    # a test with a one-off load is one task, handed out first
    assert worker_tasks(items, 2, {"negation"}) == [[0, 1, 2, 3, 4], [5], [6], [7]]
    assert worker_tasks(items, 2, {"token_drop"}) == [[7], [0, 1, 2], [3, 4], [5], [6]]


def test_tests_with_a_one_off_load_say_so() -> None:
    assert REGISTRY["negation"].loads_once()  # CheckList's negator
    assert REGISTRY["noun_mismatch"].loads_once()  # its own preload: the MENLI word list
    assert not REGISTRY["truncation"].loads_once()
