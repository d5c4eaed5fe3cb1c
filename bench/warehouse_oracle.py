"""A scripted oracle for the warehouse machine: answers each state correctly from what the state sees.

It reads only the request (the state's instructions and declared inputs), like
a perfect model would, so machine-mode prompts and the run are exactly those of
a correct run.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "warehouse"))

from env import apply_event  # noqa: E402

from skillc.runtime.executors.base import BaseExecutor, Response  # noqa: E402

TOTALS = """import json
s = json.load(open({path!r}))
shelves = s["shelves"]
print("units", sum(v["quantity"] for v in shelves.values()))
print("empty", sum(1 for v in shelves.values() if v["quantity"] == 0))
print("discrepancies", len(s["discrepancies"]))
"""


def inputs_of(request) -> dict:
    text = request.messages[1]["content"]
    m = re.search(r"Inputs:\n(\{.*\})\n\nOutput contract", text, re.S)
    return json.loads(m.group(1)) if m else {}


class WarehouseOracle(BaseExecutor):
    name = "oracle"

    def complete(self, request) -> Response:
        i = inputs_of(request)
        if request.state == "parse_event":
            ev = json.loads(i["event_line"])
            out = {"event": ev, "skip_reason": "", "skipped": {}}
        elif request.state == "apply_event":
            touched = copy.deepcopy(i["touched"])
            discrepancies: dict = {}
            effect = apply_event(touched, discrepancies, i["event"])
            changed = {k: v for k, v in touched.items() if v != i["touched"].get(k)}
            out = {"shelves": changed, "discrepancies": discrepancies, "effect": effect}
        elif request.state == "write_totals_code":
            out = {"totals_code": TOTALS.format(path=i["state_path"])}
        elif request.state == "write_report":
            out = {"report": "Totals:\n" + i["totals"]}
        else:
            raise AssertionError(f"the oracle does not know state {request.state}")
        return Response(json.dumps(out), model="oracle")
