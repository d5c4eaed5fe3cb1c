"""MkDocs hooks of the documentation site (mkdocs.yml), so that the pages stay the ones GitHub shows.

- The home page is the README and the changelog page is CHANGELOG.md, taken from the repository's root when
  the site is built (no copies in docs/).
- A link is resolved from where its file lies in the repository. A target inside docs/ becomes a link to that
  page or file of the site (and MkDocs then checks it, anchors included); a file or folder elsewhere in the
  repository becomes a link to it on GitHub (`repo_url`); a target that does not exist is a warning, which
  fails `mkdocs build --strict`.

Code blocks are left alone.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.hooks.skillc")

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: Site pages taken from files outside docs/: site path → repository path.
PAGES = {"index.md": "README.md", "changelog.md": "CHANGELOG.md"}

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_LINK = re.compile(r"(!?\[(?:[^\[\]]|\[[^\]]*\])*\])\(([^()\s]+)((?:\s+\"[^\"]*\")?)\)")


def on_files(files: Files, config: Any) -> Files:
    """Add the pages that live outside docs/."""
    for uri, source in PAGES.items():
        files.append(File.generated(config, uri, abs_src_path=str(ROOT / source)))
    return files


def _rewrite(target: str, source: Path, page_dir: Path, repo_url: str, where: str) -> str:
    """The link target as the site needs it."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "/")):
        return target
    path, _, anchor = target.partition("#")
    anchor = f"#{anchor}" if anchor else ""
    resolved = (source.parent / path).resolve()
    if not resolved.exists():
        log.warning("%s: the link to %r names a file that does not exist (%s)", where, target,
                    os.path.relpath(resolved, ROOT))
        return target
    inside_docs = DOCS in resolved.parents or resolved == DOCS
    if inside_docs and (resolved.is_file() or (resolved / "index.md").is_file() or (resolved / "README.md").is_file()):
        return Path(os.path.relpath(resolved, page_dir)).as_posix() + anchor
    relative = resolved.relative_to(ROOT).as_posix()
    if ROOT not in resolved.parents:
        log.warning("%s: the link to %r leaves the repository", where, target)
        return target
    kind = "tree" if resolved.is_dir() else "blob"
    return f"{repo_url.rstrip('/')}/{kind}/main/{relative}{anchor}"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Resolve the page's relative links from the file the page came from."""
    uri = page.file.src_uri
    source = ROOT / PAGES[uri] if uri in PAGES else DOCS / uri
    page_dir = (DOCS / uri).parent
    repo_url = config.get("repo_url") or ""
    where = os.path.relpath(source, ROOT)

    def links(text: str) -> str:
        return _LINK.sub(lambda m: f"{m.group(1)}({_rewrite(m.group(2), source, page_dir, repo_url, where)}"
                                   f"{m.group(3)})", text)

    out, last = [], 0
    for fence in _FENCE.finditer(markdown):
        out += [links(markdown[last:fence.start()]), fence.group(0)]
        last = fence.end()
    out.append(links(markdown[last:]))
    return "".join(out)
