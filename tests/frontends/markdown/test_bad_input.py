"""Bad skill documents are diagnostics with a code and a line, never tracebacks, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from skillc.cli import main
from skillc.diagnostics.files import load_front_matter
from skillc.frontends.markdown import build
from skillc.frontends.markdown.document import parse_document
from skillc.registry import BY_CODE as REGISTRY
from skillc.runtime.baselines import skill_tools
from tests.conftest import codes

_LEVELS = "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 9))
_BOMB = ("---\nname: bomb\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + _LEVELS
         + "---\n# Skill\n\n1. Do it.\n").encode()

CASES = {
    "empty": (b"", "SKM300", "is empty"),
    "blank": (b"  \n\n\t\n", "SKM300", "is empty"),
    "front matter only": (b"---\nname: x\n---\n", "SKM300", "no body"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "SKM301", "not a text document"),
    "latin-1": ("# Caf\u00e9\n\n1. Order a caf\u00e9.\n".encode("latin-1"), "SKM301", "not UTF-8"),
    "2 MB": (b"# Big\n\n" + b"1. Do the thing again and again.\n" * 65_000, "SKM302", "limited to"),
    "unclosed front matter": (b"---\nname: x\n# Skill\n\n1. Do it.\n", "SKM303", "never closed"),
    "bad YAML": (b"---\nname: [unclosed\n---\n# Skill\n\n1. Do it.\n", "SKM303", "not valid YAML"),
    "not a mapping": (b"---\n- a\n- b\n---\n# Skill\n\n1. Do it.\n", "SKM303", "must be a mapping"),
    "tools not a list": (b"---\nallowed-tools: {a: 1}\n---\n# Skill\n\n1. Do it.\n", "SKM303", "allowed-tools"),
    # 9^9 values once expanded: printing it (the LLM request lists the front matter) never ended
    "alias bomb": (_BOMB, "SKM303", "more than 100,000 values"),
    "recursive alias": (b"---\nname: x\nloop: &l [*l]\n---\n# Skill\n\n1. Do it.\n", "SKM303", "contains it"),
}


@pytest.mark.parametrize("name", CASES)
def test_bad_document_is_a_clear_diagnostic(tmp_path: Path, name: str) -> None:
    data, code, words = CASES[name]
    skill = tmp_path / "SKILL.md"
    skill.write_bytes(data)
    out = tmp_path / "skill.skm"
    r = CliRunner().invoke(main, ["build", str(skill), "-o", str(out)])
    assert r.exit_code == 1, r.output
    assert f"error[{code}]" in r.output and words in r.output
    assert "Traceback" not in r.output
    assert not out.exists()
    assert "nothing written" in r.output


def test_bad_front_matter_points_at_the_line(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("---\nname: ok\ndescription: [oops\n---\n# S\n\n1. Go.\n")
    result = build(skill)
    d = next(d for d in result.diagnostics if str(d.code) == "SKM303")
    assert d.span.start_pos[0] == 3


def test_missing_file_folder_and_overwrite_are_usage_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(main, ["build", str(tmp_path / "nope.md")])
    assert r.exit_code == 2 and "SKM901" in r.output
    r = runner.invoke(main, ["build", str(tmp_path)])
    assert r.exit_code == 2 and "folder" in r.output
    skill = tmp_path / "SKILL.md"
    skill.write_text("# S\n\n1. Go.\n")
    r = runner.invoke(main, ["build", str(skill), "-o", str(skill)])
    assert r.exit_code == 2 and "refusing to overwrite" in r.output
    assert skill.read_text() == "# S\n\n1. Go.\n"
    r = runner.invoke(main, ["build", str(skill), "-o", str(tmp_path / "no" / "dir.skm")])
    assert r.exit_code == 2


def test_a_failed_build_keeps_the_previous_output(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    out = tmp_path / "skill.skm"
    out.write_text("previous\n")
    skill.write_bytes(b"")
    CliRunner().invoke(main, ["build", str(skill), "-o", str(out)])
    assert out.read_text() == "previous\n"


def test_cli_build_writes_the_machine_and_reports(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Answer\n\n1. Read the question.\n2. Write the answer.\n\nNever guess a number.\n")
    r = CliRunner().invoke(main, ["build", str(tmp_path), "--report"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "SKILL.skm"
    assert out.exists()
    assert "coverage: 3/3 clauses (100.0%)" in r.output
    # The prohibition names no operation: it is a constraint in the prompts, reported as such (not an invented
    # `rule forbid guess_number` over a tool nobody calls, which could never fail).
    assert "prohibitions: 1 kept as constraints in prompts" in r.output
    assert "rule forbid" not in out.read_text()
    r = CliRunner().invoke(main, ["check", str(out)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["build", str(skill), "-o", "-"])
    assert r.output.startswith("machine answer {")


def test_build_codes_are_registered_and_documented() -> None:
    for code in ("SKM300", "SKM301", "SKM302", "SKM303", "SKM304", "SKM305", "SKM306", "SKM310", "SKM311", "SKM312",
                 "SKM313", "SKM314"):
        assert REGISTRY[code].stage == "markdown front end"
    doc = (Path(__file__).parents[3] / "docs" / "diagnostics.md").read_text()
    assert "## SKM303" in doc


def test_front_matter_example_of_the_registry_yields_its_code(tmp_path: Path) -> None:
    for code in ("SKM303", "SKM304", "SKM306", "SKM307"):
        skill = tmp_path / f"{code}.md"
        skill.write_text(REGISTRY[code].bad)
        assert code in codes(build(skill).diagnostics)
        skill.write_text(REGISTRY[code].good)
        assert code not in codes(build(skill).diagnostics)


def test_an_unquoted_colon_in_a_front_matter_value_is_read_as_the_line(tmp_path: Path) -> None:
    """`description: Review a PR: read the diff` is no YAML; skillc reads the line as its author meant (SKM307),
    continuation lines folded in, and keeps the rest of the header: `allowed-tools` is not lost."""
    skill = tmp_path / "SKILL.md"
    skill.write_text("---\nname: review\ndescription: Review a PR: read the diff,\n  then comment: briefly.\n"
                     "allowed-tools: Read, Bash(git diff:*)\nmetadata:\n  owner: team\n---\n# Review\n\n"
                     "1. Run `git diff` to read the change.\n2. Comment on it.\n", encoding="utf-8")
    result = build(skill, output=tmp_path / "out.skm")
    [d] = [d for d in result.diagnostics if str(d.code) == "SKM307"]
    assert d.span is not None and d.span.start_pos[0] == 3 and "`description`" in d.message
    assert result.text is not None
    assert 'doc "Review a PR: read the diff, then comment: briefly."' in result.text
    doc, _ = parse_document(skill.read_bytes())
    assert doc is not None and doc.front.allowed_tools == ("Read", "Bash(git diff:*)")
    assert doc.front.raw["metadata"] == {"owner": "team"}
    assert skill_tools(skill.read_text(encoding="utf-8")) == ("read", "bash")  # the native baseline's reading
    # a comment holding `: ` is no prose to repair: the tools the author left out stay out (a harness that read the
    # whole line would grant Write)
    commented = ("---\nname: review\ndescription: Review a PR: read the diff first\nallowed-tools: Read, Bash  # note: "
                 "Write is not needed\n---\n# Review\n\n1. Run `git diff` to read the change.\n")
    doc, found = parse_document(commented.encode())
    assert doc is not None and doc.front.allowed_tools == ("Read", "Bash")
    assert [d.span.start_pos[0] for d in found if str(d.code) == "SKM307" and d.span is not None] == [3]
    assert skill_tools(commented) == ("read", "bash")
    # a problem of another kind is still refused, at its line
    skill.write_text("---\nname: review\ndescription: Review: [oops\ntools: {a\n---\n# Review\n\n1. Go.\n")
    refused = build(skill)
    assert "SKM303" in codes(refused.diagnostics) and "SKM307" not in codes(refused.diagnostics)


def test_only_the_values_yaml_refuses_are_read_as_their_line() -> None:
    """The repair touches the values YAML stops at, nothing else: not a nested value, a list item, a block, a quoted
    value or a comment that holds `: `; a ` # comment` after a repaired value stays a comment."""
    text = ("name: x\ndescription: a: b  # why: prose\nallowed-tools: Read, Bash  # note: Write is not needed\n"
            "quoted: \"c: d\"\nnested:\n  inner: e\nlist:\n  - g: h\nblock: |\n  i: j\nflag: false  # default: true\n"
            "url: https://example.com\nlast: ends with:\n  and goes on: here")
    value, fixed = load_front_matter(text)
    assert fixed == ((1, "description"), (12, "last"))
    assert value == {"name": "x", "description": "a: b", "allowed-tools": "Read, Bash", "quoted": "c: d",
                     "nested": {"inner": "e"}, "list": [{"g": "h"}], "block": "i: j\n", "flag": False,
                     "url": "https://example.com", "last": "ends with: and goes on: here"}
    assert load_front_matter("name: x\ndescription: fine") == ({"name": "x", "description": "fine"}, ())
    with pytest.raises(yaml.YAMLError):  # another problem: refused as before (SKM303)
        load_front_matter("description: a: b\ntools: [oops")
    with pytest.raises(yaml.YAMLError):  # `: ` in a nested value is not the author's prose line: refused
        load_front_matter("metadata:\n  owner: team: core")


def test_a_step_outside_the_skills_allowed_tools_refuses_the_build(tmp_path: Path) -> None:
    """allowed-tools is never widened silently: a command step with `Bash` unlisted is SKM322 at the sentence."""
    from skillc.frontends.markdown import build

    skill = tmp_path / "SKILL.md"
    skill.write_text("---\nname: lister\ndescription: List.\nallowed-tools: Read Grep\n---\n\n# Lister\n\n"
                     "1. Run `ls -la` to list the files.\n2. Summarise them.\n", encoding="utf-8")
    refused = build(skill, output=tmp_path / "out.skm")
    assert refused.text is None and not (tmp_path / "out.skm").exists()
    [d] = [d for d in refused.diagnostics if str(d.code) == "SKM322"]
    assert d.span is not None and d.span.start_pos[0] == 9 and "allowed-tools (Read, Grep)" in d.message
    skill.write_text(skill.read_text(encoding="utf-8").replace("Read Grep", "Read Grep Bash(ls:*)"),
                     encoding="utf-8")
    assert build(skill, output=tmp_path / "out.skm").text is not None


def test_the_bounded_yaml_reader_reads_what_safe_load_reads() -> None:
    """`load_yaml` is `yaml.safe_load` for ordinary text (shared values included) and refuses what cannot end."""
    import yaml

    from skillc.diagnostics.files import load_yaml
    from skillc.runtime.baselines import skill_tools

    text = "name: x\ntools: &t [Read, Bash]\nagain: *t\nwhen: 2024-01-02\nn: 3\nnested: {a: [1, {b: null}]}\n"
    assert load_yaml(text) == yaml.safe_load(text)
    assert load_yaml("") is None
    with pytest.raises(yaml.YAMLError, match="levels deep"):
        load_yaml("a: " + "[" * 300 + "]" * 300)
    with pytest.raises(yaml.YAMLError, match="more than 100,000"):
        load_yaml(_BOMB.decode().split("---")[1])
    assert skill_tools(_BOMB.decode()) == ()  # the native baseline's reading of the same front matter
