"""The field rules of Amazon States Language (those of awslabs/statelint and the ASL specification).

Each function reports problems of one object of the definition; none of them
raises or looks at the graph beyond the `States` object it is given.
"""

from __future__ import annotations

from collections.abc import Callable

from skillc.diagnostics import Diagnostic, Span, make
from skillc.frontends.importers import codes
from skillc.frontends.importers.jsonpath import INTRINSICS, PLACEHOLDER, intrinsic, parse_path
from skillc.frontends.importers.positions import Node
from skillc.ir.suggest import did_you_mean

Report = Callable[[Diagnostic], None]

TYPES = ("Pass", "Succeed", "Fail", "Task", "Choice", "Wait", "Parallel", "Map")
_EVERY = {"Type", "Comment", "QueryLanguage", "Assign"}
_IO = {"InputPath", "OutputPath"}
_FLOW = {"Next", "End"}
_RESULT = {"Parameters", "ResultPath", "ResultSelector", "Retry", "Catch", "Arguments", "Output"}
FIELDS: dict[str, set[str]] = {
    "Pass": _EVERY | _IO | _FLOW | {"Parameters", "ResultPath", "Result", "Output"},
    "Task": _EVERY | _IO | _FLOW | _RESULT | {"Resource", "TimeoutSeconds", "TimeoutSecondsPath",
                                               "HeartbeatSeconds", "HeartbeatSecondsPath", "Credentials"},
    "Choice": _EVERY | _IO | {"Choices", "Default", "Output"},
    "Wait": _EVERY | _IO | _FLOW | {"Seconds", "SecondsPath", "Timestamp", "TimestampPath", "Output"},
    "Succeed": _EVERY | _IO | {"Output"},
    "Fail": _EVERY | {"Cause", "CausePath", "Error", "ErrorPath"},
    "Parallel": _EVERY | _IO | _FLOW | _RESULT | {"Branches"},
    "Map": _EVERY | _IO | _FLOW | _RESULT | {
        "Iterator", "ItemProcessor", "ItemsPath", "Items", "ItemSelector", "MaxConcurrency", "MaxConcurrencyPath",
        "ItemReader", "ResultWriter", "ItemBatcher", "ToleratedFailurePercentage", "ToleratedFailurePercentagePath",
        "ToleratedFailureCount", "ToleratedFailureCountPath", "Label"},
}
MACHINE_FIELDS = {"StartAt", "States", "Comment", "Version", "TimeoutSeconds", "QueryLanguage"}
BRANCH_FIELDS = {"StartAt", "States", "Comment", "ProcessorConfig", "QueryLanguage"}
_RETRIER = {"ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds", "JitterStrategy",
            "Comment"}
_CATCHER = {"ErrorEquals", "Next", "ResultPath", "Comment", "Output", "Assign"}
COMPARISONS = {
    **{f"String{op}": "str" for op in ("Equals", "LessThan", "GreaterThan", "LessThanEquals", "GreaterThanEquals")},
    **{f"Numeric{op}": "float" for op in ("Equals", "LessThan", "GreaterThan", "LessThanEquals",
                                          "GreaterThanEquals")},
    **{f"Timestamp{op}": "timestamp" for op in ("Equals", "LessThan", "GreaterThan", "LessThanEquals",
                                                "GreaterThanEquals")},
    "BooleanEquals": "bool", "StringMatches": "str",
    **{test: "test" for test in ("IsNull", "IsPresent", "IsNumeric", "IsString", "IsBoolean", "IsTimestamp")},
}
COMPARISONS.update({f"{op}Path": t for op, t in list(COMPARISONS.items())
                    if not op.startswith("Is") and op != "StringMatches"})
_RULE = {"Variable", "And", "Or", "Not", "Comment", "Condition", "Next", "Assign", "Output"} | set(COMPARISONS)
_EXCLUSIVE = (("Error", "ErrorPath"), ("Cause", "CausePath"), ("TimeoutSeconds", "TimeoutSecondsPath"),
              ("HeartbeatSeconds", "HeartbeatSecondsPath"), ("Iterator", "ItemProcessor"),
              ("ItemSelector", "Parameters"), ("Seconds", "SecondsPath", "Timestamp", "TimestampPath"),
              ("End", "Next"))
REFERENCE_FIELDS = ("ResultPath", "TimeoutSecondsPath", "HeartbeatSecondsPath", "SecondsPath", "TimestampPath",
                    "MaxConcurrencyPath", "ToleratedFailurePercentagePath", "ToleratedFailureCountPath")
INTRINSIC_FIELDS = ("ErrorPath", "CausePath")  # a reference path or an intrinsic function


def unknown_fields(obj: Node, allowed: set[str], what: str, report: Report) -> None:
    """SKM603 for every key of `obj` outside `allowed`."""
    for key, span, _ in obj.pairs:
        if key not in allowed:
            hint = did_you_mean(key, sorted(allowed))
            report(make(codes.MISPLACED_FIELD, f"{what} has no field `{key}`", span, label="not allowed here",
                        hint=hint or "remove it"))


def duplicate_keys(node: Node, report: Report) -> None:
    """SKM607 for a key repeated in any object of the document."""
    if node.is_map:
        seen: dict[str, Span] = {}
        for key, span, value in node.pairs:
            if key in seen:
                report(make(codes.DUPLICATE_ASL_NAME, f"the key `{key}` appears twice in this object", span,
                            label="repeated",
                            notes=[f"first at line {seen[key].start_pos[0]}; JSON parsers keep only the last"]))
            else:
                seen[key] = span
            duplicate_keys(value, report)
    for item in node.items:
        duplicate_keys(item, report)


def _int(node: Node | None) -> bool:
    return node is not None and isinstance(node.value, int) and not isinstance(node.value, bool)


def _number(node: Node | None) -> bool:
    return node is not None and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def check_value(state: Node, key: str, kind: str, report: Report, minimum: float | None = None) -> None:
    """SKM605 when `state[key]` exists but is not of `kind` (string, bool, int, number, object) or below `minimum`."""
    v = state.get(key)
    if v is None:
        return
    ok = {"string": v.text is not None, "bool": isinstance(v.value, bool) and v.kind == "scalar",
          "int": _int(v), "number": _number(v), "object": v.is_map, "array": v.is_seq}[kind]
    if not ok:
        placeholder = kind != "string" and v.text is not None and PLACEHOLDER.fullmatch(v.text.strip()) is not None
        report(make(codes.BAD_FIELD_VALUE, f"`{key}` must be {'an' if kind[0] in 'aeio' else 'a'} {kind}", v.span,
                    label=f"not {'an' if kind[0] in 'aeio' else 'a'} {kind}",
                    hint="`${…}` is a template placeholder: substitute it first, as DefinitionSubstitutions does"
                    if placeholder else None))
    elif minimum is not None and isinstance(v.value, (int, float)) and v.value < minimum:
        report(make(codes.BAD_FIELD_VALUE, f"`{key}` is {v.value}; the allowed minimum is {minimum:g}", v.span,
                    label="too small"))


def exclusive(state: Node, report: Report) -> None:
    """SKM610 for alternatives given together."""
    for group in _EXCLUSIVE:
        present = [k for k in group if state.get(k) is not None]
        end = state.get("End")
        if group == ("End", "Next") and (end is None or end.value is not True):
            continue
        if len(present) > 1:
            report(make(codes.EXCLUSIVE_FIELDS, f"a state may have only one of {', '.join(f'`{k}`' for k in group)}",
                        state.key_span(present[1]), label="second alternative",
                        notes=[f"`{present[0]}` is given too"]))


def check_path_field(state: Node, key: str, report: Report, *, reference: bool, nullable: bool = True,
                     intrinsics: bool = False) -> None:
    """SKM609 for a malformed path in `state[key]`; SKM605 for a null where none is allowed."""
    v = state.get(key)
    if v is None:
        return
    if v.kind == "scalar" and v.value is None:
        if not nullable:
            report(make(codes.BAD_FIELD_VALUE, f"`{key}` must not be null", v.span, label="null"))
        return
    if intrinsics and v.text is not None and intrinsic(v.text)[0] is not None:
        name = intrinsic(v.text)[0]
        if name not in INTRINSICS:
            report(make(codes.INVALID_PATH, f"`{key}` calls an unknown intrinsic `States.{name}`", v.span,
                        label="unknown function"))
        return
    problem = path_problem(v, reference=reference)
    if problem:
        report(make(codes.INVALID_PATH, f"`{key}` is not a {'reference path' if reference else 'JSONPath'}: {problem}",
                    v.span, label="bad path"))


def path_problem(v: Node, *, reference: bool) -> str | None:
    """Why a node is not a (reference) path, or None."""
    if v.text is None:
        return "it is not a string"
    path, why = parse_path(v.text)
    if path is None:
        return why
    if reference and not path.is_reference:
        return "it may select several nodes (wildcard, filter, slice or `..`)"
    return None


def payload_paths(node: Node, field: str, report: Report) -> list[tuple[str, Node]]:
    """The paths read by the `.$` fields of a payload template; SKM609 for values that are neither path nor intrinsic."""  # noqa: E501
    found: list[tuple[str, Node]] = []
    if node.is_map:
        for key, _, value in node.pairs:
            if not key.endswith(".$"):
                found += payload_paths(value, field, report)
                continue
            name, args = intrinsic(value.text) if value.text is not None else (None, [])
            if name is not None:
                if name not in INTRINSICS:
                    report(make(codes.INVALID_PATH, f"`{key}` of {field} calls an unknown intrinsic `States.{name}`",
                                value.span, label="unknown function",
                                hint=did_you_mean(name, sorted(INTRINSICS)) or "see the ASL intrinsic functions"))
                found += [(a, value) for a in args]
                continue
            problem = path_problem(value, reference=False)
            if problem:
                report(make(codes.INVALID_PATH,
                            f"`{key}` of {field} is not a JSONPath or intrinsic function expression: {problem}",
                            value.span, label="bad path"))
            elif value.text is not None:  # always, when there is no problem
                found.append((value.text, value))
    for item in node.items:
        found += payload_paths(item, field, report)
    return found


def check_error_list(holder: Node, index: int, field: str, last: bool, report: Report) -> list[str]:
    """Checks `ErrorEquals` of one retrier or catcher; returns its error names."""
    ee = holder.get("ErrorEquals")
    if ee is None:
        report(make(codes.MISSING_FIELD, f"{field}[{index}] has no `ErrorEquals`", holder.span,
                    label="needs `ErrorEquals`"))
        return []
    names = [i.text for i in ee.items if i.text is not None]
    if not ee.is_seq or not ee.items or len(names) != len(ee.items):
        report(make(codes.BAD_FIELD_VALUE, f"`ErrorEquals` of {field}[{index}] must be a non-empty list of strings",
                    ee.span, label="non-empty list of strings required"))
    if "States.ALL" in names and (not last or len(names) != 1):
        report(make(codes.STATES_ALL_NOT_LAST,
                    f"{field}[{index}]: `States.ALL` can only appear in the last element, and by itself",
                    ee.span, label="States.ALL here"))
    return names


def _handler(node: Node, index: int, field: str, fields: set[str], last: bool, report: Report) -> list[str] | None:
    """The rules every retrier and catcher follows (an object, known fields, its `ErrorEquals`): its error names,
    or None when it is not an object."""
    if not node.is_map:
        report(make(codes.BAD_FIELD_VALUE, f"{field}[{index}] must be an object", node.span, label="not an object"))
        return None
    unknown_fields(node, fields, f"{field}[{index}]", report)
    return check_error_list(node, index, field, last, report)


def check_retrier(r: Node, index: int, last: bool, report: Report) -> list[str]:
    """The field rules of one retrier."""
    names = _handler(r, index, "Retry", _RETRIER, last, report)
    if names is None:
        return []
    check_value(r, "IntervalSeconds", "int", report, 1)
    check_value(r, "MaxAttempts", "int", report, 0)
    check_value(r, "BackoffRate", "number", report, 1)
    check_value(r, "MaxDelaySeconds", "int", report, 1)
    j = r.get("JitterStrategy")
    if j is not None and j.value not in ("FULL", "NONE"):
        report(make(codes.BAD_FIELD_VALUE, "`JitterStrategy` is not one of the allowed values FULL, NONE", j.span,
                    label="FULL or NONE"))
    m = r.get("MaxAttempts")
    if m is not None and _int(m) and isinstance(m.value, int) and m.value >= 99999999:
        report(make(codes.BAD_FIELD_VALUE, "`MaxAttempts` must be less than 99999999", m.span, label="too large"))
    return names


def check_catcher(c: Node, index: int, last: bool, report: Report) -> list[str]:
    """The field rules of one catcher (its `Next` target is checked with the other transitions)."""
    names = _handler(c, index, "Catch", _CATCHER, last, report)
    if names is None:
        return []
    if c.get("Next") is None:
        report(make(codes.MISSING_FIELD, f"Catch[{index}] has no `Next`", c.span, label="needs `Next`"))
    check_value(c, "Next", "string", report)
    check_path_field(c, "ResultPath", report, reference=True)
    return names


def check_rule(rule: Node, where: str, nested: bool, report: Report) -> None:
    """The field rules of a choice rule and its nested rules."""
    if not rule.is_map:
        report(make(codes.BAD_FIELD_VALUE, f"{where} must be an object", rule.span, label="not an object"))
        return
    unknown_fields(rule, _RULE - ({"Next"} if nested else set()), where, report)
    if not nested and rule.get("Next") is None:
        report(make(codes.MISSING_FIELD, f"{where} has no `Next`", rule.span, label="needs `Next`"))
    check_value(rule, "Next", "string", report)
    ops = [k for k in rule.keys() if k in COMPARISONS]  # noqa: SIM118 - positions.Node has keys() but no __iter__
    bools = [k for k in rule.keys() if k in ("And", "Or", "Not")]  # noqa: SIM118 - positions.Node has keys() but no __iter__
    if rule.get("Condition") is not None:
        return
    if rule.get("Variable") is not None:
        check_path_field(rule, "Variable", report, reference=True, nullable=False)
        if bools:
            report(make(codes.MISPLACED_FIELD, f"a comparison cannot also have `{bools[0]}`", rule.key_span(bools[0]),
                        label="not allowed in a comparison"))
        if len(ops) != 1:
            report(make(codes.MISSING_FIELD if not ops else codes.EXCLUSIVE_FIELDS,
                        f"{where} needs exactly one comparison operator" + (f", not {len(ops)}" if ops else ""),
                        rule.key_span("Variable"), label="comparison",
                        hint="add one of StringEquals, NumericLessThan, BooleanEquals, IsPresent, …"))
        for op in ops:
            _check_operand(rule, op, report)
        return
    if len(bools) != 1:
        report(make(codes.MISSING_FIELD, f"{where} is neither a comparison (`Variable`) nor one of `And`, `Or`, `Not`",
                    rule.span, label="empty rule"))
        return
    inner = rule.at(bools[0])
    if bools[0] == "Not":
        check_rule(inner, f"{where}.Not", True, report)
    elif not inner.is_seq or not inner.items:
        report(make(codes.BAD_FIELD_VALUE, f"`{bools[0]}` must be a non-empty list of rules", inner.span,
                    label="not a list"))
    else:
        for i, sub in enumerate(inner.items):
            check_rule(sub, f"{where}.{bools[0]}[{i}]", True, report)


def _check_operand(rule: Node, op: str, report: Report) -> None:
    v = rule.at(op)
    kind = COMPARISONS[op]
    if op.endswith("Path"):
        problem = path_problem(v, reference=True)
        if problem:
            report(make(codes.INVALID_PATH, f"`{op}` is not a reference path: {problem}", v.span, label="bad path"))
        return
    ok = {"str": v.text is not None, "timestamp": v.text is not None, "float": _number(v),
          "bool": isinstance(v.value, bool), "test": isinstance(v.value, bool)}[kind]
    if not ok:
        want = {"str": "a string", "timestamp": "a timestamp string", "float": "a number"}.get(kind, "a Boolean")
        report(make(codes.BAD_FIELD_VALUE, f"`{op}` compares with {want}", v.span, label=f"not {want}"))
