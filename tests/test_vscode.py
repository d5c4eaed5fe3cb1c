"""The VS Code extension in editors/vscode: a consistent manifest, a TextMate grammar that knows every keyword
and whose scopes are all asserted, and (when Node.js is installed) its grammar and client tests.

The Node tests skip when `node`/`npm` are missing or the npm packages cannot be installed; with
SKILLC_REQUIRE_NODE=1 those cases fail instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillc.syntax.grammar import keyword_terminals
from tests.conftest import EXAMPLES, ROOT, STDLIB

EXT = ROOT / "editors" / "vscode"
GRAMMAR = EXT / "syntaxes" / "skm.tmLanguage.json"
GRAMMAR_TESTS = sorted((EXT / "test").glob("*.skm"))
REQUIRE_NODE = bool(os.environ.get("SKILLC_REQUIRE_NODE"))
MIN_NODE = 18  # node --test, npm 8+ (lockfile v3)
# Scopes under which a keyword counts as highlighted as one.
KEYWORD_SCOPES = ("keyword.", "storage.type.", "constant.language.")


def manifest() -> dict:
    return json.loads((EXT / "package.json").read_text(encoding="utf-8"))


def grammar() -> dict:
    return json.loads(GRAMMAR.read_text(encoding="utf-8"))


def rules(node):
    """Every rule object (a dict with match, begin or include) anywhere in the grammar."""
    if isinstance(node, dict):
        if {"match", "begin", "include"} & node.keys():
            yield node
        for value in node.values():
            yield from rules(value)
    elif isinstance(node, list):
        for value in node:
            yield from rules(value)


def scope_names(node) -> set[str]:
    names: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("name", "contentName") and isinstance(value, str):
                names.update(value.split())
            else:
                names |= scope_names(value)
    elif isinstance(node, list):
        for value in node:
            names |= scope_names(value)
    return names


# ---------------------------------------------------------------- pure Python


def test_manifest_is_consistent_and_points_at_existing_files() -> None:
    m = manifest()
    assert (m["name"], m["publisher"], m["license"]) == ("skillc-skm", "skillc", "MIT")
    assert re.fullmatch(r"\d+\.\d+\.\d+", m["version"]) and m["displayName"] and m["repository"]
    assert m["engines"]["vscode"] == "^1.85.0"
    assert m["activationEvents"] == ["onLanguage:skm"]
    # The entry point is the esbuild bundle of src/extension.js (a build output: `npm run bundle`).
    assert m["main"] == "./dist/extension.js" and (EXT / "src" / "extension.js").is_file()
    assert m["scripts"]["bundle"].startswith("esbuild src/extension.js --bundle --outfile=dist/extension.js")
    assert m["scripts"]["vscode:prepublish"] == "npm run bundle" and "esbuild" in m["devDependencies"]
    assert (EXT / m["icon"]).read_bytes().startswith(b"\x89PNG")
    assert m["homepage"].startswith("https://") and m["bugs"]["url"].startswith("https://")
    [language] = m["contributes"]["languages"]
    assert language["id"] == "skm" and language["extensions"] == [".skm"] and language["aliases"]
    assert (EXT / language["configuration"]).is_file()
    [tm] = m["contributes"]["grammars"]
    assert (tm["language"], tm["scopeName"]) == ("skm", "source.skm")
    assert (EXT / tm["path"]).resolve() == GRAMMAR.resolve()
    settings = m["contributes"]["configuration"]["properties"]
    assert settings["skillc.server.path"]["default"] == "skillc"
    assert settings["skillc.server.args"]["default"] == ["lsp"]
    assert m["dependencies"]["vscode-languageclient"].startswith("^9")
    assert {"vscode-tmgrammar-test", "@vscode/vsce"} <= m["devDependencies"].keys()
    assert {"test:grammar", "package"} <= m["scripts"].keys()
    for name in ("README.md", "LICENSE", ".vscodeignore", "package-lock.json"):
        assert (EXT / name).is_file(), name
    lock = json.loads((EXT / "package-lock.json").read_text())
    assert lock["name"] == "skillc-skm" and "node_modules/vscode-languageclient" in lock["packages"]
    ignored = (EXT / ".gitignore").read_text().split()
    assert "node_modules/" in ignored and "*.vsix" in ignored
    # Every command the client registers is contributed, and the other way round.
    source = (EXT / "src" / "extension.js").read_text()
    registered = set(re.findall(r"registerCommand\('([\w.]+)'", source))
    assert registered == {c["command"] for c in m["contributes"]["commands"]}


def test_grammar_is_valid_and_names_source_skm() -> None:
    g = grammar()
    assert g["scopeName"] == "source.skm"
    assert g["patterns"]
    # Includes resolve, and every regex compiles (the grammar's regexes stay within Python's syntax too).
    defined = set(g["repository"])
    for rule in rules(g):
        include = rule.get("include")
        if include and include != "$self":
            assert include.startswith("#") and include[1:] in defined, include
        for key in ("match", "begin", "end"):
            if key in rule:
                re.compile(rule[key])


def test_grammar_highlights_every_keyword_of_the_language() -> None:
    keywords = set(keyword_terminals().values())
    assert {"machine", "judge", "forbid", "none", "in"} <= keywords
    standalone = []  # (regex, scope) of rules that match a keyword on its own
    for rule in rules(grammar()):
        if "match" in rule:
            scope = rule.get("name") or rule.get("captures", {}).get("1", {}).get("name", "")
            if scope.startswith(KEYWORD_SCOPES):
                standalone.append((re.compile(rule["match"]), scope))
    for word in sorted(keywords):
        hits = [scope for regex, scope in standalone if regex.fullmatch(word)]
        assert hits, f"no keyword pattern of the TextMate grammar matches {word!r}"
        # Whole words only: `variable` is a name, not `var` + `iable`, and neither is `xvar`.
        for regex, _ in standalone:
            if regex.fullmatch(word):
                assert not regex.match(word + "iable") and not regex.search("x" + word), (word, regex.pattern)


def test_every_scope_of_the_grammar_is_asserted_by_a_grammar_test() -> None:
    assert len(GRAMMAR_TESTS) >= 6
    assertions = "\n".join(
        line for path in GRAMMAR_TESTS for line in path.read_text(encoding="utf-8").splitlines()[1:]
        if re.match(r"#\s*(\^|<~*-)", line)
    )
    for path in GRAMMAR_TESTS:
        assert path.read_text(encoding="utf-8").startswith('# SYNTAX TEST "source.skm"'), path
    asserted = set(re.findall(r"[a-z][\w-]*(?:\.[\w-]+)*\.skm\b", assertions))
    missing = scope_names(grammar()) - {"skm"} - asserted
    assert not missing, f"scopes without a grammar test: {sorted(missing)}"


def test_language_configuration() -> None:
    conf = json.loads((EXT / "language-configuration.json").read_text())
    assert conf["comments"] == {"lineComment": "#"}
    assert ["{", "}"] in conf["brackets"] and ["(", ")"] in conf["brackets"] and ["[", "]"] in conf["brackets"]
    opens = {pair["open"] for pair in conf["autoClosingPairs"]}
    assert {"{", "[", "(", '"', '"""'} <= opens
    markers = conf["folding"]["markers"]
    assert re.match(markers["start"], "  # region states") and re.match(markers["end"], "# endregion")
    assert not re.match(markers["start"], "# endregion")
    word = re.compile(conf["wordPattern"])
    assert word.fullmatch("save.readback") and word.fullmatch("2.0e-3") and not word.fullmatch("a.")
    rules_ = conf["indentationRules"]
    assert re.match(rules_["increaseIndentPattern"], "  model solve {  # comment")
    assert re.match(rules_["decreaseIndentPattern"], "  }")


# ---------------------------------------------------------------- Node.js


def unavailable(reason: str):
    if REQUIRE_NODE:
        pytest.fail(f"{reason} (SKILLC_REQUIRE_NODE is set)")
    pytest.skip(reason)


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        unavailable(f"`{tool}` is not on PATH: the VS Code extension's Node tests need Node.js {MIN_NODE}+ and npm")
    if tool == "node":
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        major = re.match(r"v(\d+)", version)
        if not major or int(major.group(1)) < MIN_NODE:
            unavailable(f"node {version or '?'} is too old: the extension's Node tests need Node.js {MIN_NODE}+")
    return path


@pytest.fixture(scope="module")
def node_modules() -> Path:
    need("node")
    npm = need("npm")
    if not all((EXT / "node_modules" / ".bin" / tool).exists() for tool in ("vscode-tmgrammar-test", "esbuild")):
        try:
            r = subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=EXT,
                               capture_output=True, text=True, timeout=240)
        except subprocess.TimeoutExpired:
            r = None
        if r is None or r.returncode != 0:
            detail = "timed out" if r is None else (r.stdout + r.stderr)[-2000:]
            unavailable(f"npm ci in editors/vscode failed (offline?): {detail}")
    return EXT / "node_modules"


def test_grammar_tests_pass(node_modules: Path) -> None:
    npx = need("npx")
    r = subprocess.run([npx, "--no", "vscode-tmgrammar-test", "test/*.skm"], cwd=EXT, capture_output=True,
                       text=True, timeout=90)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    passed = re.findall(r"✓ (test/\S+\.skm)", out)
    assert sorted(passed) == [f"test/{p.name}" for p in GRAMMAR_TESTS], out


def test_client_tests_pass() -> None:
    node = need("node")
    r = subprocess.run([node, "--test", "test/extension.test.js"], cwd=EXT, capture_output=True, text=True,
                       timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^# fail 0$", r.stdout, re.M), r.stdout


def test_shipped_machines_highlight_cleanly(node_modules: Path, tmp_path: Path) -> None:
    """VS Code's engine leaves no text unscoped and finds nothing invalid in the examples, the stdlib and the
    `skm` blocks of the docs, and every file ends outside strings and blocks."""
    files = [*EXAMPLES.rglob("*.skm"), *STDLIB.glob("*.skm")]
    # diagnostics.md shows broken code on purpose.
    docs = [ROOT / "README.md", *(p for p in (ROOT / "docs").glob("*.md") if p.name != "diagnostics.md")]
    blocks = [block for doc in docs
              for block in re.findall(r"^```skm\n(.*?)^```", doc.read_text(encoding="utf-8"), re.M | re.S)]
    assert len(blocks) >= 8
    for i, block in enumerate(blocks):
        files.append(tmp_path / f"doc_block_{i}.skm")
        files[-1].write_text(block)
    r = subprocess.run([need("node"), "test/tokenize.js", *map(str, files)], cwd=EXT, capture_output=True,
                       text=True, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(files)} files, 0 problems" in r.stdout


def test_bundle_runs_against_the_real_language_server(node_modules: Path) -> None:
    """The esbuild bundle loads with only `vscode` outside it, and its server command serves real LSP.

    A test inside a real VS Code (@vscode/test-electron) would need a VS Code download, impossible
    offline; test/bundle.test.js drives the real `skillc lsp` with the bundle's own server command.
    """
    npm = need("npm")
    r = subprocess.run([npm, "run", "bundle"], cwd=EXT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([need("node"), "--test", "test/bundle.test.js"], cwd=EXT, capture_output=True, text=True,
                       timeout=120, env={**os.environ, "SKILLC_PYTHON": sys.executable})
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^# pass 2$", r.stdout, re.M) and re.search(r"^# fail 0$", r.stdout, re.M), r.stdout


def test_vsix_holds_the_bundle_not_the_sources(node_modules: Path) -> None:
    npx = need("npx")
    r = subprocess.run([npx, "--no", "vsce", "ls", "--no-dependencies"], cwd=EXT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    files = r.stdout.split()
    assert "dist/extension.js" in files and "images/icon.png" in files
    assert [f for f in files if f.endswith(".js")] == ["dist/extension.js"], files
