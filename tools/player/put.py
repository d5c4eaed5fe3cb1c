"""Put a run's reply in place atomically: python3 put.py REPLY_PATH FILE [--text] (FILE must hold one JSON object;
with --text, any non-blank text: a simulated user's answer)."""

import json
import os
import sys
from pathlib import Path

text = Path(sys.argv[2]).read_text(encoding="utf-8")
if "--text" in sys.argv[3:]:
    assert text.strip(), "a blank answer"
else:
    json.loads(text)  # one JSON object, or this stops here
tmp = sys.argv[1] + ".part"
Path(tmp).write_text(text, encoding="utf-8")
os.replace(tmp, sys.argv[1])
print("written", sys.argv[1])
