"""The documentation site (mkdocs.yml): `mkdocs build --strict` passes, so no page links to a file, page or anchor
that does not exist; every page of docs/ is in the navigation; the home page is the README, the API page is
generated from the docstrings, and search has an index. The build takes about 6 s (`make docs` runs it too)."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

DOCS = ROOT / "docs"


def nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [p for value in node.values() for p in nav_pages(value)]
    if isinstance(node, list):
        return [p for value in node for p in nav_pages(value)]
    return []


def config() -> dict:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    return yaml.safe_load(re.sub(r"!!python/\S+", "", text))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    started = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    took = time.monotonic() - started
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WARNING" not in r.stderr, r.stderr
    assert took < 120, f"mkdocs build took {took:.0f} s"
    return out


def test_every_docs_page_is_in_the_navigation() -> None:
    cfg = config()
    assert cfg["strict"] is True and cfg["theme"]["name"] == "material"
    listed = set(nav_pages(cfg["nav"]))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.glob("*.md")}
    assert pages - listed == set(), "add the page to mkdocs.yml's nav"
    assert {"index.md", "changelog.md", "api.md", "diagnostics.md", "editors.md"} <= listed
    # broken links and anchors are warnings, and strict makes a warning fail the build
    assert cfg["validation"]["links"] == {"not_found": "warn", "absolute_links": "warn", "unrecognized_links": "warn",
                                          "anchors": "warn"}


def test_the_site_builds_strictly(site: Path) -> None:
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "skillc compiles agent skills into checked" in home
    # README links into docs/ become site pages; links elsewhere in the repository go to it on GitHub
    assert 'href="language/"' in home and 'href="https://github.com/skillc/skillc/blob/main/bench/README.md"' in home
    assert (site / "diagnostics" / "index.html").is_file() and (site / "changelog" / "index.html").is_file()
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("skillc.api.check_files", "skillc.api.RunConfig", "skillc.api.bench", "skillc.diagnostics.Diagnostic"):
        assert f'id="{name}"' in api, name
    search = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert len(search["docs"]) > 200 and any(d["location"].startswith("diagnostics/#skm") for d in search["docs"])
    assert (site / "experiments" / "livemath-local" / "report.html").is_file()


def test_a_broken_link_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """The hook resolves links from where their file lies; a target that does not exist is a warning (and strict
    turns warnings into a failed build)."""
    sys.path.insert(0, str(DOCS))
    try:
        import hooks
    finally:
        sys.path.remove(str(DOCS))
    repo = "https://github.com/skillc/skillc"
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.skillc"):
        assert hooks._rewrite("docs/ci.md#pre-commit", ROOT / "README.md", DOCS, repo, "README.md") == \
            "ci.md#pre-commit"
        assert hooks._rewrite("../grammar/skm.lark", DOCS / "language.md", DOCS, repo, "docs/language.md") == \
            f"{repo}/blob/main/grammar/skm.lark"
        assert hooks._rewrite("../editors/zed", DOCS / "editors.md", DOCS, repo, "docs/editors.md") == \
            f"{repo}/tree/main/editors/zed"
        assert not caplog.records
        assert hooks._rewrite("nope.md", DOCS / "ci.md", DOCS, repo, "docs/ci.md") == "nope.md"
    assert [r.levelname for r in caplog.records] == ["WARNING"] and "does not exist" in caplog.records[0].getMessage()
