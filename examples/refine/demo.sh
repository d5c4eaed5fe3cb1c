#!/usr/bin/env bash
# The refine demonstration, end to end: five real native runs of livemath (scripted replies in native/),
# then `skillc refine` of the machine that lacks the read-back, then the picture of what changed.
#
#   examples/refine/demo.sh OUT_DIR        (OUT_DIR must not exist; SKILLC defaults to skillc on PATH)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: demo.sh OUT_DIR}"
skillc="${SKILLC:-skillc}"
[ ! -e "$out" ] || { echo "demo.sh: $out exists" >&2; exit 2; }
mkdir -p "$out/livemath" "$out/refine" "$out/runs"
cp "$here/../livemath/SKILL.md" "$out/livemath/"
cp "$here/livemath-partial.skm" "$out/refine/before.skm"
cp "$here/livemath-partial.skm" "$out/refine/livemath-partial.skm"
i=0
for name in full-B newline-B write-fails full-D no-readback; do
  mkdir -p "$out/runs/$name"
  "$skillc" run "$out/refine/before.skm" --mode native --executor "scripted:$here/native/$name.json" \
    --input "question=Question $i: which option?" --input 'options=["1", "2", "3", "4", "5"]' \
    --workdir "$out/runs/$name" --trace "$out/runs/$name.jsonl" --journal "$out/runs.sqlite" >/dev/null || true
  i=$((i + 1))
done
status=0
"$skillc" refine "$out/refine/livemath-partial.skm" "$out"/runs/{full-B,newline-B,write-fails,full-D,no-readback}.jsonl \
  || status=$?
"$skillc" dot --diff "$out/refine/before.skm" "$out/refine/livemath-partial.skm" -o "$out/refine/diff.dot"
echo "refine exit $status; picture: $out/refine/diff.dot (skillc dot --diff … -o diff.svg for SVG)" >&2
