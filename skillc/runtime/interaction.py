"""Human-in-the-loop tools: `ask_user(question: str, options: list[str]?) -> (answer: str)`.

A skill that says "ask the user", "confirm with the user" or "wait for the
user's choice" compiles to a tool state calling `ask_user`, so the answer comes
from a person, never from a model that invents it. Where the answer comes from,
in this order: a callback (`AskUser(answer=callable)`, the API's
`RunConfig(answer=…)`), answers given in advance (`prepared`: the API's
`RunConfig(answers=[…])`, a bench task's `answers`), the terminal (the question
on stderr, one line read back). With `options` (a menu) the answer must be one
of them. When none of these can answer, the call raises `NeedsUser`: the
interpreter then persists a journaled run as *waiting* (an interrupt: `skillc
run` exits 6 and `--resume RUN --answer TEXT` continues it once), and without a
journal the call fails as a tool failure whose message begins "needs a user" —
never a guess.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TextIO

import attrs

from skillc.runtime.tools import ToolError

#: Who answered an `ask_user` call, as a step records it (`Step.answered_by`).
USER, CALLBACK, PREPARED = "user", "callback", "prepared"


class Question(str):
    """The question as a callback gets it: a `str`, with the menu as `options` (None: a free answer)."""

    options: tuple[str, ...] | None

    def __new__(cls, text: str, options: Sequence[str] | None = None) -> Question:
        q = super().__new__(cls, text)
        q.options = tuple(options) if options is not None else None
        return q


class NeedsUser(ToolError):
    """Nobody can answer: no callback, no prepared answer left, no terminal. `question` and `options` say what
    was asked (a journaled run waits with them)."""

    def __init__(self, question: str, options: Sequence[str] | None = None, why: str = "") -> None:
        self.question = question
        self.options = tuple(options) if options is not None else None
        detail = why or "nobody can answer it here (no terminal, no answer callback, no prepared answer)"
        super().__init__(f"needs a user: the skill asks {question!r}, and {detail}")


#: The former name of `NeedsUser`.
NoUser = NeedsUser


def menu_problem(answer: str, options: Sequence[str] | None) -> str | None:
    """Why `answer` does not answer a menu (None: it does, or there is no menu)."""
    if options is None or answer in options:
        return None
    return f"the answer {answer!r} is not one of the options (" + ", ".join(repr(o) for o in options) + ")"


@attrs.define
class AskUser:
    """The `ask_user` tool: a callback, prepared answers, or the terminal (`terminal=False`: never the terminal).

    `last_source` is who answered the last call (`user`, `callback`, `prepared`; None before any or after a
    failed one): the interpreter records it on the step.
    """

    answer: Callable[[str], str] | None = None
    prepared: list[str] = attrs.Factory(list)
    stdin: TextIO | None = None
    stderr: TextIO | None = None
    terminal: bool = True
    last_source: str | None = attrs.field(default=None, init=False)

    @classmethod
    def scripted(cls, answers: Iterable[str]) -> AskUser:
        """Answers given in advance, one per question (tests, batch runs)."""
        return cls(prepared=list(answers))

    @classmethod
    def nobody(cls) -> AskUser:
        """An `ask_user` that never answers (a bench task without `answers`): every call needs a user."""
        return cls(terminal=False)

    def __call__(self, question: str = "", options: Sequence[str] | None = None, **_: object) -> dict[str, str]:
        self.last_source = None
        menu = tuple(str(o) for o in options) if options else None
        if self.answer is not None:
            return self._checked(str(self.answer(Question(question, menu))), menu, CALLBACK)
        if self.prepared:
            return self._checked(str(self.prepared.pop(0)), menu, PREPARED)
        stdin = self.stdin or sys.stdin
        if not self.terminal or (self.stdin is None and not getattr(stdin, "isatty", lambda: False)()):
            raise NeedsUser(question, menu)
        out = self.stderr or sys.stderr
        while True:
            out.write(f"\n[skill asks] {question}\n" + (f"  (one of: {', '.join(menu)})\n" if menu else "") + "> ")
            out.flush()
            line = stdin.readline()
            if not line:
                raise NeedsUser(question, menu, "the user gave no answer (end of input)")
            reply = line.rstrip("\n")
            problem = menu_problem(reply, menu)
            if problem is None:
                self.last_source = USER
                return {"answer": reply}
            out.write(f"{problem}\n")

    def _checked(self, reply: str, menu: tuple[str, ...] | None, source: str) -> dict[str, str]:
        problem = menu_problem(reply, menu)
        if problem is not None:
            raise ToolError(problem)
        self.last_source = source
        return {"answer": reply}


__all__ = ["CALLBACK", "PREPARED", "USER", "AskUser", "NeedsUser", "NoUser", "Question", "menu_problem"]
