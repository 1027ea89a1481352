"""The four gold sources of the blind-spots paper, and how to load each as a ``datasets.Dataset``.

A gold source names a task's gold hypotheses (column ``gold``), what they are scored against
(``references`` or ``reference``), the source text where there is one, and everything a dataset
card needs to credit the upstream data (Hub ids, homepage, licence, BibTeX).

:func:`load_gold` reads the local JSONL file (``$BLINDSPOT_DATA``, else ``../shared/data``) when it
is there. Elsewhere, and only with network access, it rebuilds the same table from the upstream
release (the Hugging Face Hub, or the papers' own plain-text releases for the two translation
sets, which are not on the Hub). Offline without the file it fails with a message that says
where the file goes.

``datasets`` is imported where rows become a Dataset, so that the command line can name the
sources (``blindspot build-dataset --help``) without loading it.
"""

from __future__ import annotations

import json
import os
import random
import re
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blindspot.datasets_scripts.hub_licenses import allows_derivatives

#: The blind-spots paper, cited by every card this package writes.
BLINDSPOT_CITATION = """@inproceedings{he-etal-2023-blind,
    title = "On the Blind Spots of Model-Based Evaluation Metrics for Text Generation",
    author = "He, Tianxing and Zhang, Jingyu and Wang, Tianle and Kumar, Sachin and Cho, Kyunghyun and Glass, James and Tsvetkov, Yulia",
    booktitle = "Proceedings of the 61st Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)",
    year = "2023",
    address = "Toronto, Canada",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2023.acl-long.674",
    doi = "10.18653/v1/2023.acl-long.674",
}"""

_WIKITEXT_CITATION = """@article{merity2016pointer,
    title = "Pointer Sentinel Mixture Models",
    author = "Merity, Stephen and Xiong, Caiming and Bradbury, James and Socher, Richard",
    journal = "arXiv preprint arXiv:1609.07843",
    year = "2016",
}"""

_CNNDM_CITATION = """@inproceedings{hermann2015teaching,
    title = "Teaching Machines to Read and Comprehend",
    author = "Hermann, Karl Moritz and Ko{\\v{c}}isk{\\'y}, Tom{\\'a}{\\v{s}} and Grefenstette, Edward and Espeholt, Lasse and Kay, Will and Suleyman, Mustafa and Blunsom, Phil",
    booktitle = "Advances in Neural Information Processing Systems",
    volume = "28",
    year = "2015",
}

@inproceedings{see-etal-2017-get,
    title = "Get To The Point: Summarization with Pointer-Generator Networks",
    author = "See, Abigail and Liu, Peter J. and Manning, Christopher D.",
    booktitle = "Proceedings of the 55th Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)",
    year = "2017",
    publisher = "Association for Computational Linguistics",
    doi = "10.18653/v1/P17-1099",
}

@article{fabbri-etal-2021-summeval,
    title = "{S}umm{E}val: Re-evaluating Summarization Evaluation",
    author = "Fabbri, Alexander R. and Kry{\\'s}ci{\\'n}ski, Wojciech and McCann, Bryan and Xiong, Caiming and Socher, Richard and Radev, Dragomir",
    journal = "Transactions of the Association for Computational Linguistics",
    volume = "9",
    pages = "391--409",
    year = "2021",
    doi = "10.1162/tacl_a_00373",
}

@inproceedings{kasai-etal-2022-bidimensional,
    title = "Bidimensional Leaderboards: Generate and Evaluate Language Hand in Hand",
    author = "Kasai, Jungo and Sakaguchi, Keisuke and Le Bras, Ronan and Dunagan, Lavinia and Morrison, Jacob and Fabbri, Alexander R. and Choi, Yejin and Smith, Noah A.",
    booktitle = "Proceedings of the 2022 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies",
    year = "2022",
}"""

_WMT21_CITATION = """@inproceedings{akhbardeh-etal-2021-findings,
    title = "Findings of the 2021 Conference on Machine Translation ({WMT}21)",
    author = "Akhbardeh, Farhad and others",
    booktitle = "Proceedings of the Sixth Conference on Machine Translation",
    year = "2021",
    publisher = "Association for Computational Linguistics",
}

@inproceedings{freitag-etal-2021-results,
    title = "Results of the {WMT}21 Metrics Shared Task: Evaluating Metrics with Expert-based Human Evaluations on {TED} and News Domain",
    author = "Freitag, Markus and Rei, Ricardo and Mathur, Nitika and Lo, Chi-kiu and Stewart, Craig and Foster, George and Lavie, Alon and Bojar, Ond{\\v{r}}ej",
    booktitle = "Proceedings of the Sixth Conference on Machine Translation",
    year = "2021",
    publisher = "Association for Computational Linguistics",
}"""

_TED_CITATION = """@misc{duh2018multitarget,
    title = "The Multitarget {TED} Talks Task",
    author = "Duh, Kevin",
    year = "2018",
    howpublished = "\\url{http://www.cs.jhu.edu/~kevinduh/a/multitarget-tedtalks/}",
}"""

#: The paper's code and data release (TED-MT lives there), pinned to one commit.
_PAPER_REPO_RAW = ("https://raw.githubusercontent.com/cloudygoose/blindspot_nlg/"
                   "54866d3143b2bc148e209cdc7b143e9e255c0087")
#: The WMT21 news systems release (sources, references A and B), pinned to one commit.
_WMT21_REPO_RAW = ("https://raw.githubusercontent.com/wmt-conference/wmt21-news-systems/"
                   "cd9d313e041ace3a58d2325a48449c911b7fa38d/txt")


class GoldDataMissingError(FileNotFoundError):
    """A gold file is not on this machine and cannot be rebuilt (offline, or no upstream)."""


@dataclass(frozen=True)
class GoldSource:
    """One task's gold data: where the file is, its column roles, and its upstream release."""

    name: str
    task: str
    file: str
    pretty_name: str
    description: str
    references_column: str
    source_column: str | None
    languages: tuple[str, ...]
    license: str  # a Hub licence id
    task_category: str  # a Hub task category
    upstream: tuple[str, ...]  # Hub dataset ids or release URLs, in the order they are used
    citation: str
    fetch: Callable[[], Any] = field(repr=False, compare=False)
    hypothesis_column: str = "gold"
    id_column: str = "id"
    #: columns too bulky to repeat in every perturbed config; they stay in the ``gold`` config
    gold_only_columns: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()

    def roles(self) -> dict[str, str | None]:
        """The column roles, as a card or a metric runner wants them."""
        return {"id": self.id_column, "hypothesis": self.hypothesis_column,
                "references": self.references_column, "source": self.source_column}


# -- upstream readers (online only) ---------------------------------------------------------------

def _fetch_text(url: str, timeout: float = 60.0) -> str:
    """The UTF-8 text at ``url`` (plain ``urllib``: the releases are small text files)."""
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (fixed https URLs)
        return response.read().decode("utf-8")


def _load_hub(repo_id: str, config: str | None, split: str) -> Any:
    import datasets  # the heavy edge (see the module's docstring)

    return datasets.load_dataset(repo_id, config, split=split)


def _from_columns(columns: dict[str, list[Any]]) -> Any:
    """The columns as a Dataset."""
    import datasets

    return datasets.Dataset.from_dict(columns)


_WIKI_SPECIAL = (".", ",", "?", "!", ":", ";", ")", "'s", "%")


def detokenize_wikitext(text: str) -> str:
    """Undo WikiText's tokenisation the way the paper's release does (App. B.2).

    Spaces before closing punctuation and ``'s`` go, the space after ``(`` goes, ``@.@ @,@ @-@``
    join numbers and compounds, and text inside double quotes loses its inner padding. Other
    clitics (``n 't``) are left as they are, as in the paper's data.
    """
    out = text
    for mark in _WIKI_SPECIAL:
        out = out.replace(f" {mark}", mark)
    out = out.replace("( ", "(")
    for mark in (".", ",", "-"):
        out = out.replace(f" @{mark}@ ", mark)
    parts = out.split('"')
    for i in range(1, len(parts), 2):
        parts[i] = parts[i].strip()
    return '"'.join(parts).strip()


def cut_at_last_period(text: str) -> str:
    """``text`` up to its last sentence-final period (WikiText's ``@.@`` is not one)."""
    end = len(text)
    while True:
        pos = text.rfind(".", 0, end)
        if pos <= 0:
            return text
        if text[pos - 1:pos + 2] == "@.@":
            end = pos - 1
            continue
        return text[:pos + 1]


def wikitext_paragraphs(lines: Iterable[str], tokenizer: Any, max_tokens: int = 256
                        ) -> list[str]:
    """WikiText-103 paragraphs as the paper uses them (App. B.2).

    A paragraph is a non-empty line that is not a ``= heading =``. Paragraphs shorter than
    ``max_tokens`` GPT-2 tokens are dropped; the others are cut to their first ``max_tokens``
    tokens, then back to the last full sentence, then detokenised.
    """
    out = []
    for line in lines:
        text = line.strip()
        if not text or text.startswith("="):
            continue
        ids = tokenizer(text)["input_ids"]
        if len(ids) < max_tokens:
            continue
        head = tokenizer.decode(ids[:max_tokens])
        out.append(detokenize_wikitext(cut_at_last_period(head)))
    return out


def _wikitext_from_hub(n: int = 1000, split: str = "train", seed: int = 0) -> Any:
    """WikiText-103 (raw) paragraphs: ``n`` golds and a disjoint set of ``n`` references.

    The paper's own 1000+1000 selection is not recoverable from the Hub; this draws the same
    kind of sample reproducibly (``random.Random(seed)`` over the qualifying paragraphs).
    """
    from transformers import AutoTokenizer

    raw = _load_hub("Salesforce/wikitext", "wikitext-103-raw-v1", split)
    paragraphs = wikitext_paragraphs(raw["text"], AutoTokenizer.from_pretrained("gpt2"))
    if len(paragraphs) < 2 * n:
        raise ValueError(f"only {len(paragraphs)} WikiText-103 {split} paragraphs qualify; "
                         f"need {2 * n}")
    chosen = random.Random(seed).sample(paragraphs, 2 * n)
    return _from_columns({
        "id": [f"wiki-{i:04d}" for i in range(n)], "gold": chosen[:n], "reference": chosen[n:]})


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _cnndm_from_hub() -> Any:
    """The 100 SummEval CNN/DailyMail test documents with their 10 extra references.

    SummEval (``mteb/summeval``) carries each document's 11 human summaries: the original
    highlight plus the 10 that Kryscinski et al. collected. The highlight and the article come
    from ``abisee/cnn_dailymail`` by id; the references are the 10 summaries that are not it.
    """

    summeval = _load_hub("mteb/summeval", None, "test")
    cnndm = _load_hub("abisee/cnn_dailymail", "3.0.0", "test")
    wanted = {row_id.split("-")[-1] for row_id in summeval["id"]}
    by_hash = {r["id"]: r for r in cnndm if r["id"] in wanted}
    rows: dict[str, list[Any]] = {"id": [], "source": [], "gold": [], "references": []}
    for row in summeval:
        original = by_hash.get(row["id"].split("-")[-1])
        if original is None:
            raise ValueError(f"SummEval document {row['id']} is not in abisee/cnn_dailymail test")
        highlight = original["highlights"].replace("\n", " ")
        extra = [s for s in row["human_summaries"] if _norm(s) != _norm(highlight)]
        if len(extra) == len(row["human_summaries"]):
            extra = extra[1:]  # SummEval lists the original highlight first
        rows["id"].append(row["id"])
        rows["source"].append(original["article"])
        rows["gold"].append(highlight)
        rows["references"].append(extra[:10])
    return _from_columns(rows)


def _lines(url: str) -> list[str]:
    return [line.strip() for line in _fetch_text(url).splitlines()]


def _wmt21_from_release() -> Any:
    """newstest2021 de-en: German source, translation A (gold) and B (reference).

    From the WMT21 news systems release on GitHub (the data is not on the Hub). The 21 system
    outputs of the local file are not fetched: the stress tests never use them.
    """

    src = _lines(f"{_WMT21_REPO_RAW}/sources/newstest2021.de-en.src.de")
    ref_a = _lines(f"{_WMT21_REPO_RAW}/references/newstest2021.de-en.ref.A.en")
    ref_b = _lines(f"{_WMT21_REPO_RAW}/references/newstest2021.de-en.ref.B.en")
    if not len(src) == len(ref_a) == len(ref_b):
        raise ValueError(f"newstest2021 de-en files disagree: {len(src)} sources, "
                         f"{len(ref_a)} A and {len(ref_b)} B references")
    return _from_columns({
        "id": [f"wmt21-de-en-{i:04d}" for i in range(len(src))], "source": src,
        "gold": ref_a, "reference": ref_b})


_TED_LINE = re.compile(r"^(\d+)\s+\S+\s+(ZH|EN):\s?(.*)$")


def parse_ted_release(text: str) -> list[dict[str, str]]:
    """The paragraphs of one TED-MT release file (``<n> <lines> ZH: ...`` / ``... EN: ...``)."""
    rows: dict[int, dict[str, str]] = {}
    for line in text.splitlines():
        match = _TED_LINE.match(line.strip())
        if match:
            rows.setdefault(int(match.group(1)), {})[match.group(2).lower()] = match.group(3)
    return [rows[i] for i in sorted(rows)]


def _ted_from_release() -> Any:
    """TED-MT zh-en (100 paragraphs), from the blind-spots paper's release on GitHub.

    The gold is the original TED English (with the Chinese apostrophe normalised, as the paper
    does); the reference is the authors' second translation, whose file also carries their
    corrected Chinese source.
    """

    base = f"{_PAPER_REPO_RAW}/sum_mt/MT/ted_zhen/translate"
    original = parse_ted_release(_fetch_text(f"{base}/zh_en0.txt"))
    second = parse_ted_release(_fetch_text(f"{base}/zh_en_jacktx.txt"))
    if len(original) != len(second):
        raise ValueError(f"TED-MT release files disagree: {len(original)} vs {len(second)} rows")
    return _from_columns({
        "id": [f"ted-zh-en-{i:03d}" for i in range(len(original))],
        "source": [r["zh"] for r in second],
        "gold": [r["en"].replace("\u2019", "'") for r in original],
        "reference": [r["en"] for r in second]})


# -- the registry ---------------------------------------------------------------------------------

GOLD_SOURCES: dict[str, GoldSource] = {}


def _register(source: GoldSource) -> None:
    GOLD_SOURCES[source.name] = source


_register(GoldSource(
    name="wikitext103", task="open_ended", file="wikitext103_open_ended.jsonl",
    pretty_name="WikiText-103 paragraphs (open-ended generation)",
    description="1000 WikiText-103 paragraphs (about 256 GPT-2 tokens, cut to the last full "
                "sentence and detokenised as in the blind-spots paper, App. B.2) as gold "
                "hypotheses, with a disjoint set of 1000 paragraphs as the reference set.",
    references_column="reference", source_column=None, languages=("en",),
    license="cc-by-sa-3.0", task_category="text-generation",
    upstream=("Salesforce/wikitext (wikitext-103-raw-v1)",), citation=_WIKITEXT_CITATION,
    fetch=_wikitext_from_hub, aliases=("wikitext", "wiki", "open_ended", "open-ended")))

_register(GoldSource(
    name="cnndm", task="summarization", file="cnndm_summeval100_summarization.jsonl",
    pretty_name="CNN/DailyMail with 10 extra references (summarization)",
    description="The 100 CNN/DailyMail test articles of SummEval; the gold hypothesis is the "
                "original highlight, scored against the 10 additional human summaries of "
                "Kryscinski et al. (released with SummEval, distributed with THumB).",
    references_column="references", source_column="source", languages=("en",),
    license="apache-2.0", task_category="summarization",
    upstream=("mteb/summeval", "abisee/cnn_dailymail (3.0.0)"), citation=_CNNDM_CITATION,
    fetch=_cnndm_from_hub, aliases=("cnn_dailymail", "summeval", "summarization", "sum")))

_register(GoldSource(
    name="wmt21_de_en", task="translation", file="wmt21_de_en_translation.jsonl",
    pretty_name="WMT21 news test de-en (sentence-level translation)",
    description="newstest2021 German-English: the German source, human translation A as the "
                "gold hypothesis and human translation B as the reference.",
    references_column="reference", source_column="source", languages=("de", "en"),
    license="other", task_category="translation",
    upstream=("https://github.com/wmt-conference/wmt21-news-systems",
              "https://www.statmt.org/wmt21/metrics-task.html"),
    citation=_WMT21_CITATION, fetch=_wmt21_from_release, gold_only_columns=("systems",),
    aliases=("wmt21", "wmt", "translation", "mt")))

_register(GoldSource(
    name="ted_mt_zh_en", task="translation_paragraph", file="ted_mt_zh_en_translation.jsonl",
    pretty_name="TED-MT zh-en (paragraph-level translation)",
    description="100 TED talk paragraphs (about 7 sentences each) from the Multitarget TED Talks "
                "task: Chinese source, the original English as the gold hypothesis, and a "
                "second human translation by the blind-spots authors as the reference.",
    references_column="reference", source_column="source", languages=("zh", "en"),
    license="cc-by-nc-nd-4.0", task_category="translation",
    upstream=("https://github.com/cloudygoose/blindspot_nlg (sum_mt/MT/ted_zhen)",
              "http://www.cs.jhu.edu/~kevinduh/a/multitarget-tedtalks/"),
    citation=_TED_CITATION, fetch=_ted_from_release,
    aliases=("ted", "ted_mt", "translation_paragraph")))


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def get_gold_source(name: str) -> GoldSource:
    """A gold source by name, alias, task or file name; a clear error lists the valid names."""
    key = _key(name)
    for source in GOLD_SOURCES.values():
        names = (source.name, source.file, Path(source.file).stem, *source.aliases)
        if key in {_key(n) for n in names}:
            return source
    raise ValueError(f"unknown gold source {name!r}; choose one of {sorted(GOLD_SOURCES)} "
                     f"(or their tasks: {sorted(s.task for s in GOLD_SOURCES.values())})")


def is_gold_source(name: str) -> bool:
    try:
        get_gold_source(name)
    except ValueError:
        return False
    return True


def _truthy(value: str | None) -> bool:
    return (value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_offline() -> bool:
    """Whether the user asked for no network (``HF_HUB_OFFLINE`` / ``HF_DATASETS_OFFLINE``)."""
    return _truthy(os.environ.get("HF_HUB_OFFLINE")) or _truthy(
        os.environ.get("HF_DATASETS_OFFLINE"))


def default_data_dir() -> Path | None:
    """``$BLINDSPOT_DATA``, else the first ``../shared/data`` found beside the repo or the cwd."""
    explicit = os.environ.get("BLINDSPOT_DATA")
    if explicit:
        return Path(explicit)
    repo = Path(__file__).resolve().parents[1]
    for base in (repo, Path.cwd()):
        candidate = base.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None


def gold_file(name: str, data_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The local file of gold source ``name`` when it exists, else None."""
    source = get_gold_source(name)
    folder = Path(data_dir) if data_dir is not None else default_data_dir()
    if folder is None:
        return None
    path = folder / source.file
    return path if path.is_file() else None


def read_jsonl(path: str | os.PathLike[str]) -> Any:
    """A JSONL file as a Dataset, rows and columns in file order (no cache files written)."""
    import datasets

    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}, line {number}: not valid JSON ({error})") from None
    return datasets.Dataset.from_list(rows)


def _missing_message(source: GoldSource, data_dir: Path | None, why: str) -> str:
    where = data_dir if data_dir is not None else "the folder named by $BLINDSPOT_DATA"
    return (f"gold data {source.name!r} ({source.file}) is not available: {why}. Put "
            f"{source.file} in {where} (or set BLINDSPOT_DATA to the folder that holds it, or "
            f"pass data_dir=...), or go online so it can be rebuilt from "
            f"{', '.join(source.upstream)}.")


def load_gold(name: str, data_dir: str | os.PathLike[str] | None = None) -> Any:
    """The gold rows of source ``name`` as a ``datasets.Dataset``.

    The local file wins; without it the table is rebuilt from upstream, which needs the
    network (never tried when ``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE`` is set).
    """
    source = get_gold_source(name)
    folder = Path(data_dir) if data_dir is not None else default_data_dir()
    path = gold_file(name, folder) if folder is not None else None
    if path is not None:
        return read_jsonl(path)
    if hub_offline():
        raise GoldDataMissingError(_missing_message(
            source, folder, "the file is missing and the Hub is offline (HF_HUB_OFFLINE)"))
    try:
        return source.fetch()
    except (OSError, ConnectionError) as error:
        raise GoldDataMissingError(_missing_message(
            source, folder, f"the file is missing and upstream could not be reached "
                            f"({type(error).__name__}: {str(error)[:200]})")) from error


def describe_sources() -> list[dict[str, Any]]:
    """One line of facts per gold source (for ``--help`` and docs)."""
    return [{"name": s.name, "task": s.task, "file": s.file, "upstream": list(s.upstream)}
            for s in GOLD_SOURCES.values()]


def publishable_sources() -> list[GoldSource]:
    """The gold sources whose licence allows publishing a perturbed copy, in registry order
    (what ``blindspot publish`` offers)."""
    return [s for s in GOLD_SOURCES.values() if allows_derivatives(s.license)]


__all__ = [
    "BLINDSPOT_CITATION", "GOLD_SOURCES", "GoldDataMissingError", "GoldSource",
    "default_data_dir", "describe_sources", "get_gold_source", "gold_file", "hub_offline",
    "is_gold_source", "load_gold", "publishable_sources", "read_jsonl"]
