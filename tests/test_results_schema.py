"""results.json's JSON Schema is generated from the typed results (report/schema.py): a real run's
results validate against it, and a field the code does not declare does not (issue 17)."""

from __future__ import annotations

import copy
import math

import jsonschema
import pytest

from blindspot.protocols.rank import run_blindspot
from blindspot.report.schema import STATUSES, TestResult, results_schema


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The demo judged by chrf (every field filled) and by a metric that fails (error fields)."""
    def broken(predictions: list[str], references: list[list[str]]) -> list[float]:
        return [math.nan] * len(predictions)

    return run_blindspot("demo", ["chrf", broken], task="summarization",
                         tests="truncation,copy_source", seeds=[1, 2], progress=False,
                         state_dir=tmp_path_factory.mktemp("state"))


def test_a_run_validates_against_the_generated_schema(results: dict) -> None:
    jsonschema.validate(results, results_schema())
    (dataset,) = results["datasets"].values()
    assert dataset["metrics"]["chrf.chrf"]["tests"]["truncation"]["status"] in ("pass", "fail")
    assert dataset["metrics"]["broken"]["error"].startswith("on the gold rows: ValueError: "
                                                            "metric 'broken' returned nan")


@pytest.mark.parametrize("change", ["unknown field", "unknown status", "missing field"])
def test_what_the_code_does_not_declare_does_not_validate(results: dict, change: str) -> None:
    bad = copy.deepcopy(results)
    (dataset,) = bad["datasets"].values()
    test = dataset["metrics"]["chrf.chrf"]["tests"]["truncation"]
    if change == "unknown field":
        test["verdict"] = "pass"
    elif change == "unknown status":
        test["status"] = "maybe"
    else:
        del test["points"][0]["judged"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, results_schema())


def test_the_schema_names_every_status_and_field_of_a_test() -> None:
    test = results_schema()["$defs"]["TestResult"]
    assert test["properties"]["status"] == {"enum": list(STATUSES)}
    assert list(test["properties"]) == list(TestResult.failed("t", "c", "r", "m").to_dict())
