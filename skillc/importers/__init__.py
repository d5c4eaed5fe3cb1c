"""Importers: graphs written for other systems (AWS Step Functions, LangGraph) checked by skillc.

Each importer translates its source into the `.skm` AST with spans into the
original file, then lowers and checks it like any machine; see README.md.
"""

from skillc.importers import codes as _codes  # noqa: F401  (registers the SKM6xx codes)
