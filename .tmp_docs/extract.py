import re, sys, pathlib, subprocess
text = pathlib.Path("docs/language.md").read_text()
blocks = re.findall(r"^```skm\n(.*?)^```", text, re.S | re.M)
out = pathlib.Path(".tmp_docs/blocks"); out.mkdir(exist_ok=True)
for f in out.glob("*.skm"): f.unlink()
bad = 0
for i, b in enumerate(blocks):
    p = out / f"b{i:02d}.skm"; p.write_text(b)
    r = subprocess.run([".venv/bin/skillc", "check", "--format", "concise", str(p)], capture_output=True, text=True)
    fm = subprocess.run([".venv/bin/skillc", "fmt", "--check", str(p)], capture_output=True, text=True)
    print(i, b.splitlines()[0] if b.strip() else "", "rc", r.returncode, "fmt", fm.returncode, r.stdout.strip())
    bad += r.returncode != 0
print("blocks", len(blocks), "bad", bad)
