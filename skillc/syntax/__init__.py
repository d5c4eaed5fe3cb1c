"""Stage 1: text → AST. Parser, comment attachment, canonical printer."""

from skillc.syntax.parser import decode_source, parse, parse_source, read_source

__all__ = ["decode_source", "parse", "parse_source", "read_source"]
