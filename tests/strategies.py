"""Hypothesis strategies for `.skm` ASTs (any tree the printer must round-trip)."""

from __future__ import annotations

from hypothesis import strategies as st

from skillc.syntax import nodes as n
from skillc.syntax.grammar import keyword_terminals

KEYWORDS = set(keyword_terminals().values())

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(lambda s: s not in KEYWORDS)
qualnames = st.lists(names, min_size=1, max_size=3).map(".".join)
texts = st.text(max_size=40)
comment_texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
                        max_size=30).map(lambda s: ("#" + s).rstrip())


def _comments():
    """Leading comments: blank-line markers ("") never first and never doubled."""
    return st.lists(st.one_of(comment_texts, st.just("")), max_size=3).map(_normalise_leading)


def _normalise_leading(items: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for c in items:
        if c == "" and (not out or out[-1] == ""):
            continue
        out.append(c)
    return tuple(out)


@st.composite
def _stmt(draw, cls, *args, block: bool = False, **kw):
    extra = {"leading": draw(_comments()), "trailing": draw(st.none() | comment_texts)}
    if block:
        extra["end_comments"] = tuple(draw(st.lists(comment_texts, max_size=2)))
        extra["header"] = draw(st.none() | comment_texts)
    return cls(*args, **kw, **extra)


# ---------------------------------------------------------------- expressions

_leaf = st.one_of(
    names.map(n.Name),
    st.integers(min_value=0, max_value=10**12).map(n.IntLit),
    st.floats(min_value=0, max_value=1e30, allow_nan=False, allow_infinity=False).map(n.FloatLit),
    texts.map(n.StrLit),
    st.booleans().map(n.BoolLit),
    st.just(n.NoneLit()),
)

_BINOPS = ["or", "and", "==", "!=", "<", "<=", ">", ">=", "+", "-", "++", "*", "/", "%", "in"]


def _extend(children):
    return st.one_of(
        st.builds(n.BinOp, st.sampled_from(_BINOPS), children, children),
        st.builds(n.BinOp, st.just("in"), children, st.lists(children, max_size=3).map(lambda xs: n.SetLit(tuple(xs)))),
        st.builds(n.Not, children),
        st.builds(n.Neg, children),
        st.builds(n.Field, children, names),
        st.builds(n.Index, children, children),
        st.builds(n.CallExpr, names, st.lists(children, max_size=3).map(tuple)),
        st.builds(n.ListLit, st.lists(children, max_size=3).map(tuple)),
        st.builds(n.SetLit, st.lists(children, max_size=2).map(tuple)),
    )


exprs = st.recursive(_leaf, _extend, max_leaves=12)

# ---------------------------------------------------------------- types

types = st.recursive(
    st.one_of(names.map(n.NamedType), st.lists(names, min_size=1, max_size=4).map(lambda ls: n.EnumType(tuple(ls)))),
    lambda inner: st.one_of(
        inner.map(n.ListType),
        st.builds(n.MapType, inner, inner),
        inner.filter(lambda t: not isinstance(t, n.OptionalType)).map(n.OptionalType),
    ),
    max_leaves=4,
)

# ---------------------------------------------------------------- statements

params = st.lists(st.builds(n.Param, names, types), max_size=3).map(tuple)
provenance = st.builds(n.Provenance, texts, st.integers(0, 10**6), st.none() | st.integers(0, 10**6))


def _state_item():
    return st.one_of(
        st.lists(qualnames, min_size=1, max_size=3).flatmap(lambda ns: _stmt(n.Reads, tuple(ns))),
        st.lists(st.builds(n.WriteItem, qualnames, st.none() | names), min_size=1, max_size=3)
        .flatmap(lambda ws: _stmt(n.Writes, tuple(ws))),
        texts.flatmap(lambda t: _stmt(n.Prompt, t)),
        st.tuples(names, st.lists(st.builds(n.Arg, names, exprs), max_size=3))
        .flatmap(lambda x: _stmt(n.Call, x[0], tuple(x[1]))),
        texts.flatmap(lambda t: _stmt(n.Doc, t)),
        provenance.flatmap(lambda p: _stmt(n.From, p)),
        st.tuples(st.none() | exprs, qualnames, st.lists(st.builds(n.Assign, qualnames,
                                                                   st.sampled_from(["=", "+=", "-="]), exprs),
                                                         max_size=2))
        .flatmap(lambda x: _stmt(n.Edge, x[0], x[1], tuple(x[2]))),
    )


def _terminal_item():
    return st.one_of(
        # evidence: (dotted) names, given as text, and predicates
        st.lists(qualnames | exprs, min_size=1, max_size=3).flatmap(lambda ns: _stmt(n.Requires, tuple(ns))),
        texts.flatmap(lambda t: _stmt(n.Doc, t)),
        provenance.flatmap(lambda p: _stmt(n.From, p)),
    )


def _rule():
    kind = st.sampled_from(["required", "order", "forbid"])
    return kind.flatmap(lambda k: st.tuples(
        st.lists(qualnames, min_size=2 if k == "order" else 1, max_size=2 if k == "order" else 1).map(tuple),
        texts, st.none() | provenance,
    ).flatmap(lambda x: _stmt(n.Rule, k, x[0], x[1], x[2])))


def _body_item():
    bindings = st.lists(st.builds(n.Binding, names, qualnames), max_size=3).map(tuple)
    return st.one_of(
        texts.flatmap(lambda t: _stmt(n.Doc, t)),
        texts.flatmap(lambda t: _stmt(n.SourceDecl, t)),
        st.tuples(names, params, params).flatmap(lambda x: _stmt(n.ToolDecl, *x)),
        _record(),
        st.tuples(names, st.lists(names, min_size=1, max_size=4)).flatmap(
            lambda x: _stmt(n.EnumDecl, x[0], tuple(x[1]))),
        st.tuples(st.sampled_from(["input", "var"]), names, types, st.none() | exprs)
        .flatmap(lambda x: _stmt(n.VarDecl, *x)),
        st.tuples(names, st.integers(0, 10**6)).flatmap(lambda x: _stmt(n.CounterDecl, *x)),
        qualnames.flatmap(lambda q: _stmt(n.Start, q)),
        st.tuples(st.sampled_from(["model", "judge", "tool"]), names, st.lists(_state_item(), max_size=5))
        .flatmap(lambda x: _stmt(n.State, x[0], x[1], tuple(x[2]), block=True)),
        st.tuples(names, names, st.lists(_terminal_item(), max_size=3))
        .flatmap(lambda x: _stmt(n.Terminal, x[0], x[1], tuple(x[2]), block=True)),
        st.lists(_terminal_item(), max_size=2).flatmap(lambda xs: _stmt(n.Fallback, tuple(xs), block=True)),
        _rule(),
        st.tuples(names | st.just("tools"), names, bindings,
                  st.lists(st.builds(n.Binding, names, qualnames), max_size=2).map(tuple))
        .flatmap(lambda x: _stmt(n.Use, *x)),
        st.tuples(names, st.lists(names, max_size=3)).flatmap(lambda x: _stmt(n.UseTools, x[0], tuple(x[1]))),
        st.lists(texts, min_size=1, max_size=3).flatmap(lambda es: _stmt(n.Allow, tuple(es))),
    )


def _record():
    fields = st.lists(st.tuples(names, types).flatmap(lambda x: _stmt(n.FieldDecl, *x)), max_size=3)
    return st.tuples(names, fields).flatmap(lambda x: _stmt(n.RecordDecl, x[0], tuple(x[1]), block=True))


def _module_item():
    body = st.lists(_body_item(), max_size=6).map(tuple)
    return st.one_of(
        texts.flatmap(lambda t: _stmt(n.Import, t)),
        _record(),
        st.tuples(names, st.lists(names, min_size=1, max_size=4)).flatmap(
            lambda x: _stmt(n.EnumDecl, x[0], tuple(x[1]))),
        st.tuples(names, body).flatmap(lambda x: _stmt(n.Machine, x[0], x[1], block=True)),
        st.tuples(names, params, st.lists(names, max_size=3).map(tuple), body)
        .flatmap(lambda x: _stmt(n.Fragment, *x, block=True)),
    )


modules = st.tuples(st.lists(_module_item(), max_size=3), st.lists(comment_texts, max_size=2)).map(
    lambda x: n.Module(tuple(x[0]), end_comments=tuple(x[1]))
)
