"""The tree-sitter grammar in editors/tree-sitter-skm: it knows every keyword of grammar/skm.lark, its generated
parser (src/, committed as tree-sitter grammars do) is current, parses every `.skm` file skillc's parser accepts
without an ERROR or MISSING node, and its queries compile.

The parser is compiled with the C compiler and loaded with py-tree-sitter (the `tree-sitter` package of the dev
extra); the freshness check evaluates grammar.js with Node.js. Without a C compiler, py-tree-sitter or Node.js
those tests skip; SKILLC_REQUIRE_NODE=1 (set by .ci/run for the editor tests) makes them fail instead.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

import skillc
from skillc.syntax.grammar import keyword_terminals
from tests.conftest import ROOT

TS = ROOT / "editors" / "tree-sitter-skm"
ZED = ROOT / "editors" / "zed"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
REQUIRE = bool(os.environ.get("SKILLC_REQUIRE_NODE"))
QUERIES = ("highlights", "indents", "folds", "locals")
# Folders whose .skm files are not the project's sources.
SKIPPED_PARTS = {".venv", "node_modules", ".skillc", ".git", "build", "dist"}


def unavailable(reason: str) -> None:
    if REQUIRE:
        pytest.fail(f"{reason} (SKILLC_REQUIRE_NODE is set)")
    pytest.skip(reason)


def grammar_json() -> dict:
    return json.loads((TS / "src" / "grammar.json").read_text(encoding="utf-8"))


def literals(node: object) -> set[str]:
    """Every STRING of a grammar.json rule tree: the grammar's keywords and punctuation."""
    found: set[str] = set()
    if isinstance(node, dict):
        if node.get("type") == "STRING":
            found.add(node["value"])
        for value in node.values():
            found |= literals(value)
    elif isinstance(node, list):
        for value in node:
            found |= literals(value)
    return found


def skm_sources() -> list[tuple[str, str]]:
    """(name, text) of every .skm file of the repository and every ```skm block of the README and docs/."""
    files = sorted(p for p in ROOT.rglob("*.skm") if not SKIPPED_PARTS & set(p.relative_to(ROOT).parts))
    out = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in files]
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = re.findall(r"^```skm\n(.*?)^```", doc.read_text(encoding="utf-8"), re.M | re.S)
        out += [(f"{doc.relative_to(ROOT)} block {i + 1}", block) for i, block in enumerate(blocks)]
    return out


def accepted_by_skillc(text: str) -> bool:
    """Whether skillc's own parser accepts the text (no syntax error; the checker's findings do not matter)."""
    _, diagnostics = skillc.parse(text)
    return not any(str(d.severity).lower().endswith("error") for d in diagnostics)


# ---------------------------------------------------------------- pure Python


def test_every_keyword_of_the_language_is_a_token_of_the_tree_sitter_grammar() -> None:
    keywords = set(keyword_terminals().values())
    assert {"machine", "judge", "requires", "tools", "allow"} <= keywords
    tokens = literals(grammar_json()["rules"])
    assert keywords - tokens == set(), "keywords of grammar/skm.lark missing from editors/tree-sitter-skm/grammar.js"
    # ... and no word the language does not have (a keyword left behind after a rename).
    words = {t for t in tokens if t.isidentifier()}
    assert words - keywords == set()
    # grammar.js names every one of them too (grammar.json is generated from it).
    source = (TS / "grammar.js").read_text(encoding="utf-8")
    assert all(f"'{word}'" in source for word in keywords)


def test_every_keyword_is_highlighted() -> None:
    for path in (TS / "queries" / "highlights.scm", TS / "queries" / "helix" / "highlights.scm"):
        text = path.read_text(encoding="utf-8")
        # true, false and none are named nodes: `(true)`; the other keywords anonymous ones: `"machine"`
        missing = [k for k in sorted(set(keyword_terminals().values()))
                   if f'"{k}"' not in text and f"({k})" not in text]
        assert not missing, f"{path.relative_to(ROOT)} does not highlight {missing}"


def test_generated_files_are_the_parser_of_this_grammar_json() -> None:
    """src/parser.c and src/node-types.json name every rule of src/grammar.json (regenerate after editing
    grammar.js: `make tree-sitter`)."""
    g = grammar_json()
    parser = (TS / "src" / "parser.c").read_text(encoding="utf-8")
    assert re.search(r"^#define LANGUAGE_VERSION 14$", parser, re.M)  # Neovim 0.9+, Helix, Zed, py-tree-sitter
    names = set(re.findall(r'^  \[(?:sym|anon_sym|alias_sym|aux_sym)_\w+\] = "((?:[^"\\]|\\.)*)",$', parser, re.M))
    visible = {name for name in g["rules"] if not name.startswith("_")}
    assert visible <= names, sorted(visible - names)
    node_types = {t["type"] for t in json.loads((TS / "src" / "node-types.json").read_text()) if t["named"]}
    assert visible - {"source_file"} <= node_types | {"source_file"}
    assert "ERROR" not in node_types and (TS / "src" / "tree_sitter" / "parser.h").is_file()


def test_package_metadata() -> None:
    package = json.loads((TS / "package.json").read_text())
    assert package["name"] == "tree-sitter-skm" and package["license"] == "MIT"
    # The CLI version that generated src/: the same output from `npm run generate`.
    assert package["devDependencies"]["tree-sitter-cli"] == "0.20.8"
    [lang] = package["tree-sitter"]
    assert lang["scope"] == "source.skm" and lang["file-types"] == ["skm"]
    assert all((TS / lang[q]).is_file() for q in ("highlights", "locals"))
    config = json.loads((TS / "tree-sitter.json").read_text())
    assert config["grammars"][0]["name"] == grammar_json()["name"] == "skm"
    assert config["metadata"]["version"] == package["version"]
    assert "node_modules/" in (TS / ".gitignore").read_text().split()


def test_helix_and_zed_queries_follow_the_main_queries() -> None:
    sys.path.insert(0, str(TS / "scripts"))
    try:
        import helix_queries
    finally:
        sys.path.remove(str(TS / "scripts"))
    main = (TS / "queries" / "highlights.scm").read_text(encoding="utf-8")
    helix = (TS / "queries" / "helix" / "highlights.scm").read_text(encoding="utf-8")
    assert helix == helix_queries.helix_text(main), "run python editors/tree-sitter-skm/scripts/helix_queries.py"
    assert "@number" not in helix_queries.helix_text(main) and "@spell" not in helix_queries.helix_text(main)
    assert (ZED / "languages" / "skm" / "highlights.scm").read_text(encoding="utf-8") == main, \
        "copy editors/tree-sitter-skm/queries/highlights.scm to editors/zed/languages/skm/"
    extension = (ZED / "extension.toml").read_text()
    assert 'path = "editors/tree-sitter-skm"' in extension and "[language_servers.skillc]" in extension


def test_the_new_syntax_fixture_is_valid_skm() -> None:
    text = (FIXTURES / "every_construct.skm").read_text(encoding="utf-8")
    assert accepted_by_skillc(text)
    for spelling in ("use tools std(", 'allow "Read", "Bash(git diff:*)"', "requires summary, status == 0",
                     'exists("report.md")', 'file("report.md") ==', "skill_dir", "workdir"):
        assert spelling in text


# ---------------------------------------------------------------- the compiled parser


def _capsule(address: int) -> object:
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(address, b"tree_sitter.Language", None)


@pytest.fixture(scope="module")
def language(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The grammar's Language: src/parser.c compiled into a shared library and loaded with py-tree-sitter."""
    try:
        import tree_sitter
    except ImportError:
        unavailable("py-tree-sitter is not installed (pip install tree-sitter, or the dev extra)")
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    compiler = shutil.which(cc.split()[0]) or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        unavailable("no C compiler to build editors/tree-sitter-skm/src/parser.c")
    out = tmp_path_factory.mktemp("tree-sitter") / "skm.so"
    r = subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-I", str(TS / "src"), str(TS / "src" / "parser.c"),
                        "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    library = ctypes.CDLL(str(out))
    entry = library.tree_sitter_skm
    entry.restype = ctypes.c_void_p
    yield tree_sitter.Language(_capsule(entry()))


def problems(node: object) -> Iterator[object]:
    """ERROR and MISSING nodes under `node`."""
    if node.is_error or node.is_missing:  # type: ignore[attr-defined]
        yield node
    for child in node.children:  # type: ignore[attr-defined]
        yield from problems(child)


def test_every_skm_file_skillc_accepts_parses_without_errors(language: object) -> None:
    import tree_sitter

    parser = tree_sitter.Parser(language)
    sources = skm_sources()
    valid = [(name, text) for name, text in sources if accepted_by_skillc(text)]
    failures = []
    for name, text in valid:
        data = text.encode("utf-8")
        found = next(problems(parser.parse(data).root_node), None)
        if found is not None:
            row, column = found.start_point
            kind = "MISSING " + found.type if found.is_missing else "ERROR"
            failures.append(f"{name}:{row + 1}:{column + 1}: {kind} at {data[found.start_byte:][:40]!r}")
    names = {name for name, _ in valid}
    # The examples, the stdlib, the checker's corpus and the new-syntax fixture are all in.
    assert "tests/editors/fixtures/every_construct.skm" in names and "stdlib/retry.skm" in names
    assert len(valid) >= 300, (len(sources), len(valid))  # 21 doc blocks and test files are fragments on purpose
    assert not failures, f"{len(failures)} of {len(valid)} files:\n" + "\n".join(failures)


def test_the_new_syntax_parses_into_its_own_nodes(language: object) -> None:
    import tree_sitter

    tree = tree_sitter.Parser(language).parse((FIXTURES / "every_construct.skm").read_bytes())
    assert not tree.root_node.has_error
    seen: set[str] = set()
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        seen.add(node.type)
        stack.extend(node.children)
    # every named node type of the grammar occurs in the fixture (the supertypes are not nodes of their own)
    named = {t["type"] for t in json.loads((TS / "src" / "node-types.json").read_text())
             if t["named"] and "subtypes" not in t}
    assert named - seen == set()
    sexp = str(tree.root_node)
    assert "(use_tools kit: (identifier) tool: (identifier)" in sexp
    assert "(allow_declaration (string (string_content)) (string (string_content))" in sexp
    assert "(requires (identifier) (comparison left: (identifier) right: (integer)) (call_expression" in sexp


def test_a_file_skillc_rejects_is_not_silently_accepted(language: object) -> None:
    import tree_sitter

    parser = tree_sitter.Parser(language)
    for broken in ("machine m { start }", "machine m { model s { -> } }", 'machine m { allow }',
                   "machine m { use tools }", "machine m { terminal t: success { requires } }"):
        assert not accepted_by_skillc(broken), broken
        assert parser.parse(broken.encode()).root_node.has_error, broken


def test_queries_compile_against_the_grammar(language: object) -> None:
    import tree_sitter

    paths = [TS / "queries" / f"{q}.scm" for q in QUERIES] + [TS / "queries" / "helix" / "highlights.scm",
                                                               ZED / "languages" / "skm" / "brackets.scm"]
    for path in paths:
        tree_sitter.Query(language, path.read_text(encoding="utf-8"))  # raises on an unknown node or field


def test_highlights_give_every_keyword_a_keyword_capture(language: object) -> None:
    """In the fixture, each keyword token is captured as a keyword (or a type or constant keyword)."""
    import tree_sitter

    source = (FIXTURES / "every_construct.skm").read_bytes()
    tree = tree_sitter.Parser(language).parse(source)
    query = tree_sitter.Query(language, (TS / "queries" / "highlights.scm").read_text(encoding="utf-8"))
    captured: dict[tuple[int, int], set[str]] = {}
    for name, nodes in tree_sitter.QueryCursor(query).captures(tree.root_node).items():
        for node in nodes:
            captured.setdefault((node.start_byte, node.end_byte), set()).add(name)
    keywords = set(keyword_terminals().values())
    seen = set()
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if not node.is_named and node.type in keywords:
            seen.add(node.type)
            names = captured.get((node.start_byte, node.end_byte), set())
            assert any(n.startswith(("keyword", "type.builtin", "boolean", "constant")) for n in names), \
                (node.type, node.start_point, names)
    assert seen >= keywords - {"true", "false", "none"}  # the constants are named nodes


# ---------------------------------------------------------------- Node.js


def test_src_grammar_json_is_what_grammar_js_says() -> None:
    """grammar.js evaluated with tree-sitter's DSL equals the committed src/grammar.json (so src/ was generated
    from this grammar.js)."""
    node = shutil.which("node")
    if node is None:
        unavailable("`node` is not on PATH: the tree-sitter grammar's freshness check needs Node.js")
    r = subprocess.run([node, str(TS / "scripts" / "dsl.js")], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "TREE_SITTER_GRAMMAR_PATH": str(TS / "grammar.js")})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == grammar_json(), "src/ is stale: regenerate it with `make tree-sitter`"
