"""The output contract is *the* JSON Schema sent to the model: skillc accepts exactly what `jsonschema` accepts
under the schema of the request (plus, for merge patches, that the merged value is whole), and stores
numbers as their declared type. SKILLC_CONTRACT_EXAMPLES raises the number of generated cases."""

from __future__ import annotations

import os

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.ir import types as T
from skillc.ir.machine import Machine, State, Variable
from skillc.runtime.prompts import build_request
from skillc.runtime.values import apply_outputs, is_structured, merge_patch

EXAMPLES = int(os.environ.get("SKILLC_CONTRACT_EXAMPLES", "300"))
FIELDS = ("a", "b", "c")
LABELS = ("yes", "no")

scalars = st.sampled_from([T.StrT(), T.IntT(), T.FloatT(), T.BoolT(), T.EnumT(LABELS)])


def _extend(inner: st.SearchStrategy) -> st.SearchStrategy:
    record = st.lists(st.tuples(st.sampled_from(FIELDS), inner), min_size=1, max_size=3,
                      unique_by=lambda f: f[0]).map(lambda fs: T.RecordT("R", tuple(fs)))
    return st.one_of(inner.map(T.ListT), inner.map(T.MapT), record, inner.map(T.OptionalT))


types = st.recursive(scalars, _extend, max_leaves=4)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, 3.0, -2.0, 1e20]),
              st.sampled_from(["", "x", *LABELS])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from([*FIELDS, "zz"]), inner, max_size=3)),
    max_leaves=6)


def machine_writing(t: T.Type) -> tuple[Machine, State]:
    """A machine with one model state that writes `x: t` and `n: int`."""
    state = State("s", "model", writes=("x", "n"), prompt="p")
    variables = {"x": Variable("x", t, "var"), "n": Variable("n", T.IntT(), "var")}
    machine = Machine("m", None, None, {}, {}, variables, "s", {"s": state}, ())
    return machine, state


def _int_typed(value, t: T.Type) -> bool:
    """Stored values carry their declared number type: ints as int, floats as float."""
    base = T.strip_optional(t)
    if value is None:
        return True
    if isinstance(base, T.IntT):
        return type(value) is int
    if isinstance(base, T.FloatT):
        return type(value) is float
    if isinstance(base, T.ListT):
        return all(_int_typed(v, base.item) for v in value)
    if isinstance(base, T.MapT):
        return all(_int_typed(v, base.value) for v in value.values())
    if isinstance(base, T.RecordT):
        return all(_int_typed(v, base.field(k)) for k, v in value.items())
    return True


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(t=types, x=json_values, n=json_values, keys=st.sampled_from(["both", "missing", "extra"]))
def test_skillc_accepts_exactly_what_the_sent_schema_accepts(t: T.Type, x, n, keys: str) -> None:
    machine, state = machine_writing(t)
    sent = build_request(machine, state, {}).schema
    output = {"x": x, "n": n} if keys == "both" else {"x": x} if keys == "missing" else {"x": x, "n": n, "q": 1}
    by_schema = jsonschema.Draft202012Validator(sent).is_valid(output)
    if by_schema and is_structured(t) and isinstance(x, dict):
        # A merge patch must also leave the value whole (a new record needs its required fields).
        by_schema = jsonschema.Draft202012Validator(T.json_schema(t)).is_valid(merge_patch(None, x))
    env, errors = apply_outputs(machine, state, {}, output)
    assert (errors == []) == by_schema, (T.show(t), output, errors)
    if not errors:
        assert _int_typed(env["x"], t) and type(env["n"]) is int


def test_an_integral_float_is_an_integer() -> None:
    """`{"type": "integer"}` accepts 3.0, so skillc does too, and stores 3 (it used to reject it)."""
    machine, state = machine_writing(T.ListT(T.IntT()))
    env, errors = apply_outputs(machine, state, {}, {"x": [1, 2.0], "n": 3.0})
    assert errors == [] and env["x"] == [1, 2] and type(env["n"]) is int and type(env["x"][1]) is int
    env, errors = apply_outputs(machine, state, {}, {"x": [1], "n": 3.5})
    assert errors == ["n must be an integer"]


def test_nested_patches_are_described_as_patches() -> None:
    """A map of records is patched record by record, and the schema sent says so."""
    shelf = T.RecordT("Shelf", (("sku", T.StrT()), ("quantity", T.IntT())))
    machine, state = machine_writing(T.MapT(shelf))
    before = {"x": {"A1": {"sku": "s", "quantity": 1}}}
    env, errors = apply_outputs(machine, state, before, {"x": {"A1": {"quantity": 2}}, "n": 0})
    assert errors == [] and env["x"] == {"A1": {"sku": "s", "quantity": 2}}
    sent = build_request(machine, state, before).schema
    assert jsonschema.Draft202012Validator(sent).is_valid({"x": {"A1": {"quantity": 2}}, "n": 0})
    _, errors = apply_outputs(machine, state, before, {"x": {"A1": {"quantity": "lots"}}, "n": 0})
    assert errors == ["x['A1'].quantity must be an integer"]
    _, errors = apply_outputs(machine, state, {}, {"x": {"B2": {"quantity": 1}}, "n": 0})
    assert errors == ["x['B2'] is missing field `sku`"]


def test_nan_is_not_json() -> None:
    machine, state = machine_writing(T.FloatT())
    _, errors = apply_outputs(machine, state, {}, {"x": float("nan"), "n": 1})
    assert errors and "not a JSON number" in errors[0]


FINDING = T.RecordT("Finding", (("title", T.StrT()), ("severity", T.StrT()),
                                ("confidence", T.EnumT(("high", "medium"), "Confidence")),
                                ("to_verify", T.OptionalT(T.StrT()))))


def test_every_problem_of_a_record_is_told_at_once() -> None:
    """Three fields missing are three problems in one reply, not one a retry (a model once spent its three tries
    learning a record's fields one by one)."""
    machine, state = machine_writing(T.ListT(FINDING))
    _, errors = apply_outputs(machine, state, {}, {"x": [{"confidence": "low", "to_verify": ["a"]}], "n": 0})
    assert errors == ["x[0] is missing field `title`", "x[0] is missing field `severity`",
                      "x[0].confidence must be one of high, medium (got 'low')", "x[0].to_verify must be a string"]


def test_the_contract_spells_out_the_records_and_enums_it_holds() -> None:
    """A state sees only its own request, so `list[Finding]` comes with Finding's keys and Confidence's labels."""
    machine, state = machine_writing(T.ListT(FINDING))
    text = build_request(machine, state, {}).messages[1]["content"]
    assert text.endswith("- `x`: list[Finding]\n- `n`: int\nWhere:\n"
                         "- `Finding` is an object with exactly these keys: `title`: str; `severity`: str; "
                         "`confidence`: Confidence; `to_verify`: str? (may be null)\n"
                         "- `Confidence` is exactly one of \"high\", \"medium\"")
    plain, plain_state = machine_writing(T.IntT())
    assert "Where:" not in build_request(plain, plain_state, {}).messages[1]["content"]
