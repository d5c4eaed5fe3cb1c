"""The JSON value types: `Value` (anything `json.loads` gives), `Object` (a JSON object) and `Env` (a run's
variables, name → value).

A leaf with no imports, so every stage that handles JSON-ish data (the runtime, the distiller, bench, export,
serve, otel) can name what it holds without loading anything.

`Value` is `Any` on purpose: a precise recursive union (`None | bool | int | float | str | list[Value] |
dict[str, Value]`) would make every read of a nested field an `isinstance` ladder, and the values are checked
where they enter (`values.check_value`, the record readers, the trace format's validators). The alias says what
the value is; `Any` elsewhere in these trees means something that is not JSON (a foreign SDK's object).
"""

from __future__ import annotations

from typing import Any, TypeAlias

#: A JSON value: null, a boolean, a number, a string, a list or an object of values.
Value: TypeAlias = Any
#: A JSON object: names and their values.
Object: TypeAlias = dict[str, Value]
#: A run's variables: each variable's name and its value.
Env: TypeAlias = dict[str, Value]
