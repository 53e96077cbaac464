#!/usr/bin/env bash
# Rebuilds bastioncorpus.jsonl from bastioncorpus 0.6.0 (PyPI, MIT): its English
# rows, labelled by act (override by id; the rest none, or obfuscated).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pip download --quiet --no-deps --dest "$work" bastioncorpus==0.6.0
python3 - "$work"/bastioncorpus-0.6.0-py3-none-any.whl "$here/bastioncorpus.jsonl" <<'PY'
import json, sys, zipfile
override = set("""di-001 di-002 io-001 io-002 jb-001 jb-002 dl-001 ind-canary-001 ind-exfil-tool-002
ab-002 ab-005 ab-006 ab-013 ab-014 ab-015 ab-016 ab-017 ab-018 ab-019 ab-020 ab-021 ab-022 ab-026 ab-027
ab-028 ab-029 ab-030 ab-032 ab-033 hp-001 hp-002 hp-004 hp-005 hp-008 cot-001 cot-002 cot-003 cmp-001
ind-legal-001""".split())
with zipfile.ZipFile(sys.argv[1]) as z:
    lines = z.read("bastioncorpus/corpus/injections.jsonl").decode().splitlines()
out = []
for r in map(json.loads, lines):
    if r["lang"] != "en":
        continue
    if r["label"] == "benign":
        label = "none"
    elif r["id"] in override:
        label = "override"
    elif r["category"] == "obfuscation":
        label = "obfuscated"
    else:
        label = "none"
    out.append({"id": r["id"], "label": label, "category": r["category"], "text": r["text"]})
with open(sys.argv[2], "w") as f:
    f.writelines(json.dumps(o, ensure_ascii=False) + "\n" for o in out)
PY
