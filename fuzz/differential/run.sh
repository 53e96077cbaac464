#!/usr/bin/env bash
# The `section` target checked by the markdown engines hosts use: every
# input of the committed corpus and of corpus-work/section (what a campaign
# kept), and of corpus/links and corpus-work/links, is assembled
# (examples/sections.rs) and read by cmark-gfm, C cmark, markdown-it, mistune
# and commonmark.py (check.py). With a number of seconds, a
# campaign of the `section` target (no sanitizer, both cores) runs first and
# feeds the check.
#
#   fuzz/differential/run.sh          # the kept inputs only
#   fuzz/differential/run.sh 600      # fuzz 10 minutes, then check
#
# Needs python3 with tests/renderers/requirements.txt (and nightly +
# cargo-fuzz for a campaign).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p corpus-work/section corpus-work/links
if [ "${1:-0}" -gt 0 ]; then
    cargo +nightly fuzz run -s none --release section corpus-work/section corpus/section -- \
        -fork=2 -max_total_time="$1" -timeout=10 -rss_limit_mb=4096 2>&1 | tail -3
fi
cargo run --quiet --release --example sections -- corpus/section corpus-work/section \
    corpus/links corpus-work/links \
    > corpus-work/sections.json
python3 differential/check.py < corpus-work/sections.json
