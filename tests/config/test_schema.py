"""The published JSON Schemas (docs/schema/) are the models' own, and every
shipped scenario and topology file validates against them and loads."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from control_plane import topology
from control_plane.pipelines import REPO
from fabric_sim import scenario
from fabric_sim.scenario import schema

TOPOLOGY_FILES = sorted((REPO / "bmv2_configs" / "topologies").rglob("*.yaml")) + \
    sorted((REPO / "scenarios").rglob("topologies/**/*.yaml"))
SCENARIO_FILES = [p for p in sorted((REPO / "scenarios").rglob("*.yaml")) if "topologies" not in p.parts]


@pytest.mark.parametrize("name", sorted(schema.FORMATS))
def test_the_published_schema_is_up_to_date(name):
    published = (REPO / "docs" / "schema" / f"{name}.schema.json").read_text()
    assert published == schema.text(name), f"run: python -m fabric_sim.scenario.schema ({name} is out of date)"


def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((REPO / "docs" / "schema" / f"{name}.schema.json").read_text()))


def test_every_shipped_file_is_found():
    assert len(SCENARIO_FILES) >= 15 and len(TOPOLOGY_FILES) >= 7
    assert {p.parent.name for p in TOPOLOGY_FILES} == {"topologies"}


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_shipped_scenarios_validate_against_the_schema(path):
    assert [e.message for e in _validator("scenario").iter_errors(yaml.safe_load(path.read_text()))] == []
    assert scenario.load(path).transports


@pytest.mark.parametrize("path", TOPOLOGY_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_shipped_topologies_validate_against_the_schema(path):
    assert [e.message for e in _validator("topology").iter_errors(yaml.safe_load(path.read_text()))] == []
    assert topology.load(path).nics > 0


def test_the_schema_refuses_what_the_models_refuse():
    bad = {"topology": {"planes": 9, "t0_per_plane": 1, "t1_per_plane": 1, "hosts_per_t0": 2},
           "workload": {"pattern": "shuffle", "message_bytes": 0}, "speed": 1}
    errors = sorted(e.json_path for e in _validator("scenario").iter_errors(bad))
    assert errors == ["$", "$.topology", "$.workload.message_bytes", "$.workload.pattern"]
