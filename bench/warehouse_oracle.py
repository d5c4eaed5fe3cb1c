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

from env import apply_event

from skillc.runtime.executors.base import BaseExecutor, Response

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


# ---------------------------------------------------------------- the native agent

KINDS = ("receive", "pick", "move", "count")
READ = "awk -v n={n} 'NR == n {{ print; found = 1; exit }} END {{ exit found ? 0 : 3 }}' {path}"
INIT = """# init
import json
r, p = {records!r}, {state!r}
s = json.load(open(r)) if r else {{}}
bad = [k for k, v in s.items() if set(v) != {{"sku", "quantity", "location", "last_event"}}]
assert not bad, bad
json.dump({{"shelves": s, "discrepancies": {{}}, "skipped": {{}}, "processed": 0}}, open(p, "w"))
print(len(s), "shelves")
"""
LOOKUP = """# lookup {n}
import json
shelves = json.load(open({state!r}))["shelves"]
print(json.dumps({{k: shelves[k] for k in {names!r} if k in shelves}}))
"""
SAVE = """# {what} {n}
import json, os
p = {state!r}
s = json.load(open(p))
s["shelves"].update(json.loads({shelves!r}))
s["discrepancies"].update(json.loads({discrepancies!r}))
s["skipped"].update(json.loads({skipped!r}))
s["processed"] = {n}
json.dump(s, open(p + ".tmp", "w"))
os.replace(p + ".tmp", p)
print("saved", {n})
"""


def _pairs(messages) -> list[tuple[dict, dict]]:
    """The last two (action, observation) pairs of a native transcript, oldest first."""
    pairs = []
    for i in range(len(messages) - 1, 2, -1):
        if messages[i - 1]["role"] == "assistant" and messages[i]["content"].startswith("Observation:\n"):
            pairs.append((json.loads(messages[i - 1]["content"]),
                          json.loads(messages[i]["content"].removeprefix("Observation:\n"))))
            if len(pairs) == 2:
                break
    return pairs[::-1]


def _python(code: str) -> dict:
    return {"action": "python", "args": {"code": code}}


class NativeWarehouseOracle(BaseExecutor):
    """A perfect native agent: reads the transcript (its own last tool calls and their observations) and replies
    the next correct tool call of the skill's procedure, one event at a time: read the line (bash), look up the
    shelves it names (python), apply it and save state.json (python); then the totals (python) and `finish`.

    It never loads all shelves into the conversation (that would cost every later prompt ~20k tokens), so the
    native figure is a lower bound for an agent that follows SKILL.md; it does not call `load_state`.
    """

    name = "oracle-native"

    def complete(self, request) -> Response:
        messages = request.messages
        inputs = json.loads(messages[1]["content"].removeprefix("Inputs:\n"))
        return Response(json.dumps(self.next_action(inputs, _pairs(messages))), model="oracle")

    def next_action(self, inputs: dict, pairs: list[tuple[dict, dict]]) -> dict:
        """The next correct reply, from the inputs and the last two tool calls with their observations."""
        state = inputs["state_path"]
        if not pairs:
            return _python(INIT.format(records=inputs["records_path"], state=state))
        action, observation = pairs[-1]
        code = action["args"].get("code", "")
        if action["action"] == "bash":
            n = int(action["args"]["command"].split("-v n=")[1].split()[0])
            return self._after_read(inputs, n, observation)
        if code.startswith("# totals"):
            return {"action": "finish", "outcome": "success",
                    "evidence": {"report": "Totals:\n" + observation["stdout"]}}
        if code.startswith("# lookup"):
            _read, seen = pairs[-2]
            return self._apply(state, int(code.split()[2]), json.loads(seen["stdout"]),
                               json.loads(observation["stdout"]))
        n = 0 if code.startswith("# init") else int(code.split()[2])
        return {"action": "bash", "args": {"command": READ.format(n=n + 1, path=inputs["events_path"])}}

    @staticmethod
    def _after_read(inputs: dict, n: int, observation: dict) -> dict:
        """After reading line n: the totals at the end of the log, a skip, or the look-up of its shelves."""
        state = inputs["state_path"]
        if observation["exit_code"] == 3:
            return _python("# totals\n" + TOTALS.format(path=state))
        try:
            event = json.loads(observation["stdout"])
            ok = isinstance(event, dict) and event.get("kind") in KINDS
        except ValueError:
            ok = False
        if not ok:
            return _python(SAVE.format(what="skip", n=n, state=state, shelves="{}", discrepancies="{}",
                                       skipped=json.dumps({str(n): "unparsable line or unknown event type"})))
        names = [x for x in (event["shelf"], event.get("to_shelf")) if x]
        return _python(LOOKUP.format(n=n, state=state, names=names))

    @staticmethod
    def _apply(state: str, n: int, event: dict, touched: dict) -> dict:
        """Apply the event to the shelves it names (as the machine's apply_event state would) and save them."""
        shelves = copy.deepcopy(touched)
        discrepancies: dict = {}
        apply_event(shelves, discrepancies, event)
        changed = {k: v for k, v in shelves.items() if v != touched.get(k)}
        return _python(SAVE.format(what="apply", n=n, state=state, shelves=json.dumps(changed),
                                   discrepancies=json.dumps(discrepancies), skipped="{}"))
