"""`skillc build`: a markdown skill (a file, a folder with SKILL.md, or standard input) compiled into a checked
machine, by the offline compiler or, when a model is configured, the LLM compiler. `skillc.api.build` is `build`
here; the command line renders its `BuildOutcome`.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO

import attrs

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics import internal_error, unique
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, Severity, make
from skillc.diagnostics.files import same_file
from skillc.diagnostics.flags import seconds_problem
from skillc.frontends.markdown import BuildResult, Options, source_name
from skillc.frontends.markdown import build as build_skill
from skillc.frontends.markdown.frontdoor import resolve_model


@attrs.define
class BuildOutcome(HasDiagnostics):
    """`skillc build`: the front end's result, the machine's text as written (None when nothing may be
    written), where it goes (None: standard output), and `usage` when the output could not be used."""

    result: BuildResult | None
    text: str | None
    output: Path | None
    diagnostics: list[Diagnostic]
    usage: bool = False
    model: str | None = None  # the model the LLM compiler drafted with; None: the offline compiler
    model_origin: str = ""  # where the model was set: --model, SKILLC_MODEL or config ("" for none)


def build(skill: str, *, output: str | None = None, model: str | None = None, base_url: str | None = None,
          rounds: int = 3, tools: Iterable[str] = (), max_revisions: int = 2, max_repeats: int = 3,
          max_bytes: int = 1 << 20, verbose: bool = False, stdin: IO[bytes] | None = None,
          stdin_filename: str | None = None, strict: bool = False, max_tokens: int | None = None,
          section_tokens: int | None = None, model_timeout_s: float | None = None) -> BuildOutcome:
    """Compile a markdown skill (a file, a folder with SKILL.md, or `-` for `stdin`) into a checked machine.

    The LLM compiler runs whenever a model is configured: `model`, else `SKILLC_MODEL`, else `model` in the
    project's `[tool.skillc]` (`"offline"` forces the offline compiler); `max_tokens`, `section_tokens` and
    `model_timeout_s` (seconds one request may take) are its budgets (see
    `skillc.frontends.markdown.llm.LLMOptions`).
    """
    problem = seconds_problem("--model-timeout", model_timeout_s)
    if problem is not None:
        return BuildOutcome(None, None, None, [make(diagnostics_codes.IO_ERROR, problem)], usage=True)

    model, origin = resolve_model(model, Path(skill) if skill != "-" else None)
    budgets = {k: v for k, v in (("max_tokens", max_tokens), ("section_tokens", section_tokens),
                                 ("timeout_s", model_timeout_s)) if v is not None}

    options = Options(tools=frozenset(tools), max_revisions=max_revisions, max_repeats=max_repeats, strict=strict)
    if skill == "-":
        with tempfile.TemporaryDirectory(prefix="skillc-stdin-") as tmp:
            path = Path(tmp) / Path(stdin_filename or "SKILL.md").name
            path.write_bytes(stdin.read(max_bytes + 1) if stdin is not None else b"")
            return attrs.evolve(_build(path, output or "-", model, base_url, rounds, options, max_bytes, verbose,
                                       stdin_filename or "SKILL.md", budgets), model=model, model_origin=origin)
    path = Path(skill)
    if path.is_dir() and (path / "SKILL.md").is_file():
        path = path / "SKILL.md"
    return attrs.evolve(_build(path, output, model, base_url, rounds, options, max_bytes, verbose, None, budgets),
                        model=model, model_origin=origin)


def _build(path: Path, output: str | None, model: str | None, base_url: str | None, rounds: int, options: Options,
           max_bytes: int, verbose: bool, stdin_as: str | None,
           budgets: dict[str, float] | None = None) -> BuildOutcome:
    """`build` once the skill document is a file."""
    out = None if output == "-" else Path(output) if output else path.with_suffix(".skm")
    if out is not None and same_file(out, path):
        return BuildOutcome(None, None, out,
                            [make(diagnostics_codes.IO_ERROR,
                                  f"refusing to overwrite the skill document {path} with the machine")],
                            usage=True)
    if out is not None and not out.parent.is_dir():
        return BuildOutcome(None, None, out,
                            [make(diagnostics_codes.IO_ERROR, f"no such folder for the output: {out.parent}")],
                            usage=True)
    try:
        llm = None
        if model is not None and budgets:
            # deferred: an offline build never loads the LLM compiler
            from skillc.frontends.markdown.llm import LLMOptions

            llm = LLMOptions(**budgets)  # type: ignore[arg-type]  # token budgets (int) and the timeout (float)
        result = build_skill(path, output=out, options=options, model=model, base_url=base_url, rounds=rounds,
                             max_bytes=max_bytes, llm=llm)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return BuildOutcome(None, None, out, [internal_error(exc, f"building {path}")])
    diagnostics = unique(result.diagnostics)
    if stdin_as is not None:  # messages name the document stdin stood for, not its temporary copy
        for span in (s for d in diagnostics for s in (d.span, *(x.span for x in d.secondary)) if s is not None):
            if span.source.path == str(path):
                span.source.path = stdin_as
    if not verbose:  # the same policy in every format: the build's own notes (SKM3xx), others only with -v
        diagnostics = [d for d in diagnostics if d.severity is not Severity.NOTE or str(d.code).startswith("SKM3")]
    text = result.text if result.ok else None
    if text is not None and stdin_as is not None:  # the machine names the document stdin stood for
        text = text.replace(f'"{source_name(path, out)}"', json.dumps(stdin_as))
    return BuildOutcome(result, text, out, diagnostics)
