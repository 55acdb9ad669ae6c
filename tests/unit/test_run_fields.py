"""A run-file field is described once, where its record declares it (runfile/records.py, its
blocks in runfile/fields.py): a field added there is checked by the reader and stated by the JSON
Schema, with no other edit; and every bound the schema states is the one the reader's rule keeps."""

import math
from dataclasses import dataclass

import pytest

from primbench.runfile import fields
from primbench.runfile.json_spec import F, between, object_problem
from primbench.runfile.records import RECORD_TYPES, RunHeader, json_field, json_fields
from primbench.runfile.schema import json_schema
from primbench.runfile.validate import compiled_records, record_problem

# A throwaway field in a copy of a block, and a throwaway block of the header's own.
FAN_RPM = F(("integer", "null"), rule=between(0, 100_000, "revolutions per minute from 0 to 100,000"))


@dataclass(frozen=True)
class WiderHeader(RunHeader):
    device: dict = json_field("object", required=True, fields={**fields.DEVICE, "fan_rpm": FAN_RPM}, factory=dict)
    cooling: dict = json_field("object", fields={"liquid": F("boolean", required=True)}, factory=dict)


HEADER = {"kind": "header", "run_id": "r", "schema": 4, "device": {"name": "NVIDIA H200", "fan_rpm": 1200}}


def test_a_field_added_to_a_declaration_is_checked_by_the_reader():
    check = compiled_records({"header": WiderHeader})["header"]
    assert object_problem(HEADER, check) is None
    assert object_problem({**HEADER, "device": {"name": "x", "fan_rpm": -1}}, check) == (
        "'device.fan_rpm' must be revolutions per minute from 0 to 100,000, not -1")
    assert object_problem({**HEADER, "device": {"name": "x", "fan_rpm": "fast"}}, check) == (
        "'device.fan_rpm' must be integer or null, not str")
    assert object_problem({**HEADER, "cooling": {}}, check) == "lacks 'cooling.liquid'"
    # the declared header knows neither field: a later primbench's fields are let through
    assert record_problem({**HEADER, "device": {"name": "x", "fan_rpm": -1}, "cooling": {}}) is None


def test_a_field_added_to_a_declaration_is_stated_by_the_schema():
    header = json_schema({"header": WiderHeader})["$defs"]["header"]["properties"]
    assert header["device"]["properties"]["fan_rpm"] == {"type": ["integer", "null"], "minimum": 0, "maximum": 100_000}
    assert header["cooling"] == {"type": "object", "properties": {"liquid": {"type": "boolean"}}, "required": ["liquid"]}
    assert "fan_rpm" not in json_schema()["$defs"]["header"]["properties"]["device"]["properties"]
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json_schema({"header": WiderHeader}))
    assert validator.is_valid(HEADER)
    assert not validator.is_valid({**HEADER, "device": {"name": "x", "fan_rpm": -1}})
    assert not validator.is_valid({**HEADER, "cooling": {}})


def _rules(field, path=""):
    """Every (path, rule) in a declaration's tree."""
    if field.rule is not None:
        yield path, field.rule
    for name, inner in (field.fields or {}).items():
        yield from _rules(inner, f"{path}.{name}")
    if field.items is not None:
        yield from _rules(field.items, f"{path}[]")
    if field.values is not None:
        yield from _rules(field.values, f"{path}.*")


RULES = [(f"{kind}{path}", rule) for kind, record_type in RECORD_TYPES.items()
         for name, field in json_fields(record_type).items() for path, rule in _rules(field, f".{name}")]


def _with(attribute: str) -> list:
    return [pytest.param(path, rule, id=path) for path, rule in RULES if hasattr(rule, attribute)]


def _beyond(bound: float, direction: int) -> float:
    """Just past a bound: by 1 for a large integer (a float step would round away), else a hair."""
    step = 1 if isinstance(bound, int) and abs(bound) > 2**52 else max(abs(bound) * 1e-9, 1e-12)
    return bound + direction * step


@pytest.mark.parametrize("path, rule", _with("bounds"))
def test_the_bounds_the_schema_states_are_the_readers(path, rule):
    bounds = rule.bounds
    assert (rule(bounds.low, path) is None) != bounds.low_open
    assert rule(_beyond(bounds.low, -1), path) is not None
    if math.isfinite(bounds.high):
        assert rule(bounds.high, path) is None and rule(_beyond(bounds.high, +1), path) is not None
    if bounds.or_zero:
        assert rule(0, path) is None and rule(_beyond(0, +1), path) is not None


@pytest.mark.parametrize("path, rule", _with("item_bounds"))
def test_the_item_bounds_the_schema_states_are_the_readers(path, rule):
    low, high = rule.item_bounds.low, rule.item_bounds.high
    assert rule([low, high], path) is None
    assert rule([low, _beyond(low, -1)], path) is not None and rule([_beyond(high, +1)], path) is not None


@pytest.mark.parametrize("path, rule", _with("choices"))
def test_the_choices_the_schema_states_are_the_readers(path, rule):
    assert all(rule(choice, path) is None for choice in rule.choices) and rule("nonesuch", path) is not None


def test_the_rules_are_found():
    paths = {path for path, _ in RULES}
    assert len(RULES) > 50 and {"case.n", "case.status", "case.samples.cold_ms", "header.device.peak_gbps"} <= paths
