"""Print one request file of the model stand-in: python3 show.py REQUEST.json [FROM]

Prints messages FROM.. (0-based; default 0 = all) with their roles, and the request's max_tokens."""

import json
import sys
from pathlib import Path

req = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
start = int(sys.argv[2]) if len(sys.argv) > 2 else 0
msgs = req["messages"]
print(f"[{len(msgs)} messages; max_tokens {req.get('max_tokens')}]")
for i, m in enumerate(msgs[start:], start):
    print(f"\n===== message {i} ({m['role']}) =====\n{m['content']}")
