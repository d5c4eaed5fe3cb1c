"""Importers: graphs written for other systems (AWS Step Functions, LangGraph) checked by skillc.

Each importer translates its source into the `.skm` AST with spans into the
original file, then lowers and checks it like any machine; see README.md.
"""
