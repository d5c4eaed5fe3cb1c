"""Random ASL-shaped documents: the importer and checker never raise, and report only their own codes."""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.frontends.importers.conftest import check_text

NAMES = st.sampled_from(["A", "B", "C", "Done", "fallback", "1st", "x y"])
KEYS = st.sampled_from(["Type", "Next", "End", "Default", "Choices", "Variable", "StringEquals", "NumericLessThan",
                        "BooleanEquals", "IsPresent", "And", "Or", "Not", "Retry", "Catch", "ErrorEquals",
                        "MaxAttempts", "ResultPath", "InputPath", "Parameters", "Branches", "ItemProcessor",
                        "Resource", "Seconds", "StartAt", "States", "Condition", "Comment"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.floats(allow_nan=False, allow_infinity=False),
                    NAMES, st.sampled_from(["Pass", "Task", "Choice", "Wait", "Succeed", "Fail", "Map", "Parallel",
                                            "$", "$.a", "$.a.b", "$.a[0]", "$..x", "$.", "States.ALL",
                                            "States.Format('{}', $.a)", "States.Nope()"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(KEYS, inner, max_size=4)), max_leaves=12)
STATE = st.fixed_dictionaries({"Type": st.sampled_from(["Pass", "Task", "Choice", "Wait", "Succeed", "Fail",
                                                        "Map", "Parallel", "Nope"])},
                              optional={k: VALUES for k in ("Next", "End", "Choices", "Retry", "Catch", "Default",
                                                            "ResultPath", "Branches", "ItemProcessor", "Resource")})
DEFINITION = st.fixed_dictionaries({"StartAt": NAMES, "States": st.dictionaries(NAMES, STATE, min_size=1, max_size=5)})


@settings(max_examples=int(os.environ.get("SKILLC_IMPORTER_EXAMPLES", "120")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(DEFINITION)
def test_random_definitions_never_raise(definition) -> None:
    found = check_text(json.dumps(definition, indent=1))
    bad = [d for d in found.diagnostics if str(d.code) in ("SKM900",) or not str(d.code).startswith(("SKM6", "SKM2"))]
    assert not bad, [(str(d.code), d.message) for d in bad]
    assert all(d.span is not None for d in found.diagnostics if str(d.code).startswith("SKM6"))
