"""`Severity` and the `Code` value: the leaf that the code tables and the diagnostic record both import.

It imports nothing from skillc, so a stage's code table (``codes.py``) can be loaded
without the stage itself, and ``diagnostic.py`` needs no registry to build a finding.
"""

from __future__ import annotations

import enum
from typing import Final

import attrs


class Severity(enum.IntEnum):
    """How serious a finding is; ordered so that max() picks the worst."""

    NOTE = 0
    WARNING = 1
    ERROR = 2

    def __str__(self) -> str:
        return self.name.lower()


E: Final = Severity.ERROR
W: Final = Severity.WARNING
N: Final = Severity.NOTE

_STAGES: Final = {"0": "syntax", "1": "names and types", "3": "markdown front end", "4": "distiller",
                  "5": "runtime", "6": "importer", "7": "bench", "8": "refine", "9": "tool"}
#: Stages that share a hundred with another: SKM84x–SKM85x are `skillc evolve`'s, SKM86x `skillc conform`'s, SKM87x
#: `skillc export`'s, SKM88x the OpenTelemetry export's, SKM89x MCP's (`skillc serve`, MCP tools);
#: the rest of SKM8xx refine's.
_SUBSTAGES: Final = {"84": "evolve", "85": "evolve", "86": "conform", "87": "export", "88": "telemetry", "89": "mcp"}


@attrs.frozen(repr=False)
class Code:
    """One diagnostic code: its number, slug, default severity, documentation and examples.

    A diagnostic carries its `Code` itself (`Diagnostic.code`), not the string: compare with the constants of
    the code tables (`d.code == codes.UNDEFINED_VARIABLE`), print with `str(code)`. It never equals a string.
    """

    code: str
    slug: str
    severity: Severity
    summary: str
    explanation: str
    bad: str
    good: str
    hint: str | None = None
    runnable: bool = True  # False: the example needs bytes or several files; tested on its own
    lang: str = "skm"  # the language of the examples, for the generated docs

    def __str__(self) -> str:
        """The code as printed (`SKM103`): output formats, f-strings and messages show this."""
        return self.code

    def __repr__(self) -> str:
        """Short, for a diagnostic's repr: the number and slug name the rest."""
        return f"Code({self.code!r}, {self.slug!r})"

    @property
    def stage(self) -> str:
        """The pipeline stage that reports it."""
        return _SUBSTAGES.get(self.code[3:5]) or _STAGES.get(self.code[3], "check")
