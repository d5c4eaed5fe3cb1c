"""Shell quoting contexts: where a piece of a `bash` command lands, as bash reads the text around it.

A command is scanned left to right by a small lexer whose state is a stack of frames: plain shell
(`cmd`: the top level, `$(…)`, `( … )`), `"…"`, `'…'`, `$'…'`, backquotes, arithmetic (`$((…))`,
`((…))`), `${…}`, a comment, a here-document body. Values the text does not show are fed as one
placeholder character each (a word character), so a value a checker trusts never changes the context;
only the constant text does. The state is finite (words and lines are cut short), which lets a taint
analysis use it as an abstract value and reach a fixed point over loops.

`quoted_context(state)` says why a value shell-quoted by `quote()` (one `'…'` word, `'` written as
`'"'"'`) would *not* be safe at that point, or None when it is: only in plain shell, as a whole
argument — not inside any quotes (in `"…"` the single quotes are literal and `$(…)` in the value runs),
not in a here-document, comment, backquotes, arithmetic or `${…}`, not right after `\\` or `$` (which
would turn the opening `'` into `\\'` or `$'`), not as a here-document delimiter, and not where the
word is the program bash runs or code something runs (`eval`, `sh -c`, `env`/`exec`/`xargs`/… wrapping a
command, `find -exec`, `source`, `ssh`'s remote command), nor a name or
arithmetic a builtin evaluates (`let`, `read`, `printf -v`, `declare -i`, `[[ … -eq … ]]` via `[[` as a
command word: an array subscript there runs `$(…)`).
"""

from __future__ import annotations

import re
from typing import Final

import attrs

#: Stand-ins for values the text does not show: a trusted value, and a value `quote()` made one word.
OPAQUE: Final = "\ue000"
QUOTED: Final = "\ue001"

_WORD_MAX = 40
_WORDS_KEPT = 6
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_RESERVED = frozenset({"!", "{", "}", "if", "then", "else", "elif", "do", "while", "until", "time", "[[", "case"})
SHELLS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
WRAPPERS: Final = frozenset({"env", "exec", "command", "builtin", "nohup", "sudo", "doas", "nice", "ionice", "time",
                             "timeout", "stdbuf", "setsid", "xargs", "unbuffer", "chroot", "watch", "strace"})
_SKIPPED = re.compile(r"-.*|[A-Za-z_][A-Za-z0-9_]*=.*|[0-9.]+[smhd]?")


@attrs.frozen
class Frame:
    """One level of the lexer's stack; which fields matter depends on `kind`."""

    kind: str  # cmd, dq, sq, ansi, bt, arith, brace, comment, heredoc, lost
    close: str = ""  # cmd: ")" inside `$(…)` or `( … )`, "" at the top level
    word: str | None = None  # the word being read (cut short), None between words
    words: tuple[str, ...] = ()  # the first words of the simple command being read
    count: int = 0  # how many words it has so far (saturates)
    last: str = ""  # its last word
    operands: bool = False  # a `--` word was read: what follows is operands, never options
    escape: bool = False  # a `\\` was just read
    dollar: bool = False  # an unescaped `$` was just read
    fresh: bool = False  # `$(` or `(` was just opened (a second `(` makes it arithmetic)
    redirect: bool = False  # the next word is a redirection's target
    op: str = ""  # the redirection operator being read (`<`, `<<`)
    delim: bool = False  # the next word is a here-document's delimiter
    strip: bool = False  # `<<-`: tabs are stripped from the body's lines
    heredocs: tuple[tuple[str, bool], ...] = ()  # cmd: pending bodies; heredoc: the ones after this one
    text: str = ""  # quotes: what they hold so far; heredoc: the current line
    depth: int = 0  # arith: open parentheses; -1 once one `)` of the closing `))` was read


State = tuple[Frame, ...]

#: The state at the start of a command, and the state of text nested too deep to follow.
START: Final[State] = (Frame("cmd"),)
LOST: Final[State] = (Frame("lost"),)
_DEPTH: Final = 8


def _cut(word: str) -> str:
    """A word cut short, keeping its start and its last character; text after a value it does not show is
    dropped (such a word names no program or delimiter exactly), which keeps the states few."""
    for i, c in enumerate(word):
        if c in (OPAQUE, QUOTED):
            return word[:i + 1]
    return word if len(word) <= _WORD_MAX else word[:_WORD_MAX - 2] + "…" + word[-1]


def _add(f: Frame, chars: str) -> Frame:
    """The frame with `chars` appended to the word being read."""
    return attrs.evolve(f, word=_cut((f.word or "") + chars), dollar=False, fresh=False, op="")


def _end_word(f: Frame) -> Frame:
    """The frame after the word being read is complete."""
    f = attrs.evolve(f, dollar=False, fresh=False, op="" if f.word is not None else f.op)
    if f.word is None:
        return f
    word = f.word
    f = attrs.evolve(f, word=None)
    if f.delim:
        delim = word.replace("\\", "")
        return attrs.evolve(f, delim=False, redirect=False, heredocs=(*f.heredocs, (delim, f.strip))[:4], strip=False)
    if f.redirect:
        return attrs.evolve(f, redirect=False)
    if f.count == 0 and (_ASSIGNMENT.match(word) or word in _RESERVED):
        return f
    words = (*f.words, word)[:_WORDS_KEPT]
    return attrs.evolve(f, words=words, count=min(f.count + 1, _WORDS_KEPT + 1), last=word,
                        operands=f.operands or (word == "--" and f.count > 0))


def _new_command(f: Frame) -> Frame:
    """The frame at the start of the next simple command."""
    return attrs.evolve(_end_word(f), words=(), count=0, last="", redirect=False, delim=False, op="", operands=False)


def _push(state: State, top: Frame, frame: Frame) -> State:
    """`frame` opened above `top`."""
    return (*state[:-1], top, frame)


def _pop(state: State, held: str = "") -> State:
    """The top frame closed; what it held joins the word being read below it."""
    rest = state[:-1]
    if not rest:
        return START
    below = rest[-1]
    if below.kind == "cmd":
        below = _add(below, held or OPAQUE)
    elif below.kind in ("dq", "heredoc"):
        below = attrs.evolve(below, text=_cut(below.text + (held or OPAQUE)), dollar=False)
    return (*rest[:-1], below)


def _cmd(state: State, f: Frame, c: str) -> State:
    """One character in plain shell."""
    if f.escape:
        f = attrs.evolve(f, escape=False)
        return (*state[:-1], f) if c == "\n" else (*state[:-1], _add(f, c))
    if f.fresh and c == "(":
        return (*state[:-1], Frame("arith"))
    if f.dollar and c in "({'\"":
        top = attrs.evolve(f, dollar=False)
        kind = {"(": "cmd", "{": "brace", "'": "ansi", '"': "dq"}[c]
        return _push(state, top, Frame(kind, close=")" if c == "(" else "", fresh=c == "("))
    if f.op.startswith("<<") and c == "-" and f.word is None:
        return (*state[:-1], attrs.evolve(f, strip=True, op=""))
    if c in " \t":
        return (*state[:-1], _end_word(f))
    if c == "\n":
        f = _new_command(f)
        if f.heredocs:
            (delim, strip), *more = f.heredocs
            return _push(state, attrs.evolve(f, heredocs=()), Frame("heredoc", close=delim, strip=strip,
                                                                    heredocs=tuple(more)))
        return (*state[:-1], f)
    if c == "#" and f.word is None:
        return _push(state, f, Frame("comment"))
    if c == "&" and f.word is None and f.op[-1:] in ("<", ">"):
        return (*state[:-1], attrs.evolve(f, redirect=True, op=f.op + c))
    if c in ";&|":
        return (*state[:-1], _new_command(f))
    if c in "<>":
        if f.word is not None and f.word.isdigit():
            f = attrs.evolve(f, word=None)
        op = f.op + c if f.word is None else c
        f = attrs.evolve(_end_word(f), redirect=True, op=op)
        if op == "<<":
            f = attrs.evolve(f, delim=True, redirect=False)
        elif op == "<<<":
            f = attrs.evolve(f, delim=False, redirect=True)
        return (*state[:-1], f)
    if c == "(":
        return _push(state, f, Frame("cmd", close=")", fresh=True))
    if c == ")":
        return _pop(state) if f.close == ")" else (*state[:-1], _end_word(f))
    if c in "'\"`":
        kind = {"'": "sq", '"': "dq", "`": "bt"}[c]
        return _push(state, attrs.evolve(f, op=""), Frame(kind))
    if c == "\\":
        return (*state[:-1], attrs.evolve(f, escape=True, word=f.word if f.word is not None else "", dollar=False))
    if c == "$":
        return (*state[:-1], attrs.evolve(_add(f, c), dollar=True))
    return (*state[:-1], _add(f, c))


def _quoted(state: State, f: Frame, c: str) -> State:
    """One character inside `"…"`, `'…'`, `$'…'`, backquotes, `${…}`, arithmetic or a comment."""
    if f.kind == "sq":
        return _pop(state, f.text) if c == "'" else (*state[:-1], attrs.evolve(f, text=_cut(f.text + c)))
    if f.kind == "comment":
        return _step(_pop_comment(state), c) if c == "\n" else state
    if f.escape:
        return (*state[:-1], attrs.evolve(f, escape=False, text=_cut(f.text + c)))
    if f.kind == "arith":
        if f.depth >= _DEPTH:
            return state  # too deep to follow: it never closes (so nothing after it counts as safe)
        if c == "(":
            return (*state[:-1], attrs.evolve(f, depth=max(f.depth, 0) + 1))
        if c == ")":
            if f.depth > 0:
                return (*state[:-1], attrs.evolve(f, depth=f.depth - 1))
            return _pop(state) if f.depth < 0 else (*state[:-1], attrs.evolve(f, depth=-1))
        return state
    if c == "\\" and f.kind in ("dq", "ansi", "bt"):
        return (*state[:-1], attrs.evolve(f, escape=True))
    if f.kind == "dq":
        if c == '"':
            return _pop(state, f.text)
        if f.dollar and c in "({":
            top = attrs.evolve(f, dollar=False)
            return _push(state, top, Frame("cmd", close=")", fresh=True) if c == "(" else Frame("brace"))
        if c == "`":
            return _push(state, attrs.evolve(f, dollar=False), Frame("bt"))
        return (*state[:-1], attrs.evolve(f, text=_cut(f.text + c), dollar=c == "$"))
    closer = {"ansi": "'", "bt": "`", "brace": "}"}[f.kind]
    return _pop(state, f.text) if c == closer else (*state[:-1], attrs.evolve(f, text=_cut(f.text + c)))


def _pop_comment(state: State) -> State:
    """The state once a comment ends (the newline is then read by the frame below)."""
    return state[:-1] or START


def _heredoc(state: State, f: Frame, c: str) -> State:
    """One character of a here-document's body; a line equal to the delimiter ends it."""
    if c != "\n":
        return (*state[:-1], attrs.evolve(f, text=f.text + c if len(f.text) <= len(f.close) else f.text))
    line = f.text.lstrip("\t") if f.strip else f.text
    if line != f.close:
        return (*state[:-1], attrs.evolve(f, text=""))
    rest = state[:-1] or START
    if f.heredocs:
        (delim, strip), *more = f.heredocs
        return (*rest, Frame("heredoc", close=delim, strip=strip, heredocs=tuple(more)))
    return rest


def _step(state: State, c: str) -> State:
    """The state after one more character."""
    f = state[-1]
    if f.kind == "lost":
        return state
    if f.kind == "cmd":
        return _cmd(state, f, c)
    if f.kind == "heredoc":
        return _heredoc(state, f, c)
    return _quoted(state, f, c)


def feed(state: State, text: str) -> State:
    """The state after `text`; nesting deeper than 8 frames is not followed (`lost`: no value is safe after it)."""
    for c in text:
        state = _step(state, c)
        if len(state) > _DEPTH:
            return LOST
    return state


_CONTEXTS: Final = {
    "dq": "inside double quotes", "sq": "inside single quotes", "ansi": "inside `$'…'`", "bt": "inside backquotes",
    "arith": "inside arithmetic", "brace": "inside `${…}`", "comment": "in a comment",
    "heredoc": "in a here-document",
    "lost": "inside shell syntax nested too deep to follow",
}


def _base(word: str) -> str:
    """A program word without its folder."""
    return word.rsplit("/", 1)[-1]


_DECLARE: Final = frozenset({"declare", "typeset", "local", "export", "readonly"})
_NAMES: Final = frozenset({"read", "unset", "mapfile", "readarray"})
_TAKES_ARGUMENT: Final = frozenset({"-F", "-v", "-f", "-p", "-d", "-t", "-u", "-n", "-N", "-i", "-l", "-o"})


def _first_operand(words: tuple[str, ...], position: int) -> bool:
    """Whether the word at `position` is the first that is not an option (or an option's argument)."""
    skip = False
    for w in words[1:position]:
        if skip:
            skip = False
        elif w.startswith("-"):
            skip = w in _TAKES_ARGUMENT
        else:
            return False
    return True


def _builtin_role(first: str, words: tuple[str, ...], position: int, last: str, current: str | None) -> str | None:
    """`ssh`'s remote command (a shell runs it) and the builtins that evaluate a variable name or arithmetic (an
    array subscript there runs `$(…)`). Other languages' code (`python3 -c`, an `awk` program) is not shell: a
    value passed there whole runs as that language's code on purpose, as a whole command a model wrote does."""
    if first == "ssh" and not _first_operand(words, position):
        return "as code the remote shell of `ssh` runs"
    if first == "let":
        return "as arithmetic `let` evaluates"
    if first in _NAMES and not (first == "read" and last in _TAKES_ARGUMENT):
        return f"as a variable name `{first}` evaluates"
    if first in _DECLARE:
        typed = any(w.startswith("-") and set(w[1:]) & set("iaA") for w in words[1:position])
        if typed or current is None or not _ASSIGNMENT.match(current):
            return f"as a name or value `{first}` evaluates"
    if (first, last) in (("printf", "-v"), ("test", "-v"), ("[", "-v"), ("test", "-R"), ("[", "-R"), ("wait", "-p")):
        return f"as a variable name `{first} {last}` evaluates"
    return None


def _role(words: tuple[str, ...], position: int, last: str, current: str | None = None) -> str | None:
    """Why the word at `position` of a simple command is a program or code, or None for an argument."""
    if position == 0:
        return "as the program the command runs"
    if not words:
        return None
    first = _base(words[0])
    if first == "eval":
        return "as code `eval` runs"
    if first in ("source", ".") and position == 1:
        return "as the script `source` runs"
    if first == "find" and last in ("-exec", "-execdir", "-ok", "-okdir"):
        return "as the program `find -exec` runs"
    if first in SHELLS:
        for i, w in enumerate(words[1:position], start=1):
            if words[i - 1] in ("-o", "+o") or w.startswith("--"):
                continue
            if not w.startswith(("-", "+")):
                return None  # the script; what follows is its arguments
            if "c" in w and w.startswith("-"):
                return "as code `" + first + " -c` runs" if position == i + 1 else None
        return "as the script `" + first + "` runs"
    if first in WRAPPERS:
        for k, w in enumerate(words[1:position], start=1):
            if not _SKIPPED.fullmatch(w):
                return _role(words[k:], position - k, last, current)
        return "as the program `" + first + "` runs"
    return _builtin_role(first, words, position, last, current)


#: Compound commands whose words are the shell's own: `for NAME in WORDS`, `select`, `case WORD in`.
_LISTS: Final = frozenset({"for", "select", "case"})
#: Programs that read an option only in their first word: `printf FORMAT ARGS…` (what follows the format is data)
#: and bash's `echo` (options only before its first other word, no GNU-style permutation).
_FIRST_WORD_OPTIONS: Final = frozenset({"printf", "echo"})


def option_slot(state: State) -> str | None:
    """Where a value that begins a word here is read as an option when it starts with `-` (a phrase), or None:
    an operand of a simple command, after its program's name, before any `--`, not right after an option (whose
    value it would be)."""
    f = state[-1]
    if f.kind != "cmd" or f.word is not None or f.escape or f.dollar or f.delim or f.redirect or f.operands:
        return None
    if f.count == 0 or not f.words or f.count > len(f.words) + 1:
        return None  # the program itself, or a command too long to follow
    if f.last.startswith("-") and f.last != "-":
        return None  # the value of the option before it (`-m MSG`), as far as the words tell
    first = _base(f.words[0])
    if first in _LISTS:
        return None  # `for t in WORDS`, `case WORD in`: words of the shell's own syntax, no program reads them
    if first in _FIRST_WORD_OPTIONS and f.count >= 2:
        return None
    if first in WRAPPERS or first in SHELLS or first == "eval":
        return None  # the program or code it runs: SKM511's, not an option
    return f"as an operand of `{first}`"


def quoted_context(state: State, *, path: bool = False) -> str | None:
    """Where a `quote()`d value would not be safe (a phrase), or None when it stands as a whole argument.

    `path`: the value is a trusted path (a place), which may also name the program or script to run."""
    f = state[-1]
    if f.kind != "cmd":
        return _CONTEXTS.get(f.kind, "inside shell syntax")
    if f.escape:
        return "right after `\\`"
    if f.dollar:
        return "right after `$`"
    if f.delim:
        return "as a here-document's delimiter"
    if f.redirect:
        return None
    if path or (f.word is not None and f.count == 0 and _ASSIGNMENT.match(f.word)):
        return None
    position = f.count
    if position > len(f.words):  # a long command: the words kept do not reach this one
        return _role(f.words, len(f.words) + 1, f.last) if f.words and _base(f.words[0]) == "eval" else None
    return _role(f.words, position, f.last, f.word)
