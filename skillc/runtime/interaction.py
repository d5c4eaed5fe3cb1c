"""Human-in-the-loop tools: `ask_user(question: str) -> (answer: str)`.

A skill that says "ask the user", "confirm with the user" or "wait for the
user's choice" compiles to a tool state calling `ask_user`, so the answer comes
from a person, never from a model that invents it. On a terminal the question
is printed to stderr and one line is read from the terminal; through the API a
caller passes `AskUser(answer=callable)` (or a list of prepared answers). With
no terminal and no callback the call fails (a failed operation: the run goes to
the fallback), rather than guessing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

import attrs


class NoUser(Exception):
    """Nobody can answer: no terminal and no callback."""


@attrs.define
class AskUser:
    """The `ask_user` tool: a callback, prepared answers, or the terminal."""

    answer: Callable[[str], str] | None = None
    prepared: list[str] = attrs.Factory(list)
    stdin: Any = None
    stderr: Any = None

    @classmethod
    def scripted(cls, answers: Iterable[str]) -> AskUser:
        """Answers given in advance, one per question (tests, batch runs)."""
        return cls(prepared=list(answers))

    def __call__(self, question: str = "", **_: Any) -> dict[str, str]:
        if self.answer is not None:
            return {"answer": str(self.answer(question))}
        if self.prepared:
            return {"answer": self.prepared.pop(0)}
        stdin = self.stdin or sys.stdin
        if not getattr(stdin, "isatty", lambda: False)() and self.stdin is None:
            raise NoUser("the skill asks the user, but there is no terminal to ask on (pass answers through the API)")
        out = self.stderr or sys.stderr
        out.write(f"\n[skill asks] {question}\n> ")
        out.flush()
        line = stdin.readline()
        if not line:
            raise NoUser("the user gave no answer (end of input)")
        return {"answer": line.rstrip("\n")}


__all__ = ["AskUser", "NoUser"]
