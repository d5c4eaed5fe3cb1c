"""Synthetic machines for the benchmarks: chains of model, judge and tool states with guarded
branches and counted loops, so every construct of the language appears at scale."""

from __future__ import annotations


def synthetic_machine(n_states: int) -> str:
    """A well-formed machine of about `n_states` states."""
    out = [
        "machine synthetic {",
        '  doc "Generated for benchmarks."',
        "  tool bash(command: str) -> (stdout: str, exit_code: int)",
        "  input task: str",
        "  var note: str",
        "  var verdict: enum { good, bad, unsure }",
        "  var status: int",
        "  counter retries max 3",
        "  start s0",
        "",
    ]
    body = max(n_states - 2, 1)
    for i in range(body):
        nxt = f"s{i + 1}" if i + 1 < body else "done"
        kind = ("model", "judge", "tool")[i % 3]
        if kind == "model":
            out += [
                f"  model s{i} {{",
                "    reads task",
                "    writes note",
                f'    prompt """\n      Step {i}: work on the task and write a short note.\n      Keep it brief.\n      """',
                f"    -> {nxt}",
                "  }",
            ]
        elif kind == "judge":
            back = f"s{max(i - 1, 0)}"
            out += [
                f"  judge s{i} {{",
                "    reads note",
                "    writes verdict",
                '    prompt "Is the note good?"',
                f"    when verdict == bad and retries < 3 -> {back} {{ retries += 1 }}",
                f"    when verdict in {{unsure}} and len(note) > 10 -> {nxt}",
                f"    -> {nxt}",
                "  }",
            ]
        else:
            out += [
                f"  tool s{i} {{",
                "    reads note",
                '    call bash(command: "echo " ++ quote(note))',
                "    writes status = exit_code",
                "    when status != 0 -> fallback",
                f"    -> {nxt}",
                "  }",
            ]
        out.append("")
    out += [
        "  terminal done: success { requires note }",
        "  fallback",
        '  rule required s0 "Always start with the first step."',
        "}",
    ]
    return "\n".join(out) + "\n"
