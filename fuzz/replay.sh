#!/usr/bin/env bash
# Replays every fuzz target over its committed corpus only (fuzz/corpus/<target>/,
# `-runs=0`: each input runs once, nothing is mutated): a regression check
# for CI. Without a nightly toolchain or cargo-fuzz it builds nothing and
# exits 0 with a message.
set -u
cd "$(dirname "$0")"

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz replay skipped: no nightly toolchain (rustup toolchain install nightly)"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz replay skipped: cargo-fuzz is not installed (cargo install cargo-fuzz)"
    exit 0
fi

status=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in $(cargo +nightly fuzz list); do
    if [ ! -d "corpus/$t" ]; then
        echo "fuzz replay: $t has no committed corpus"
        continue
    fi
    mkdir -p "$scratch/$t"
    # The scratch directory comes first so that libFuzzer writes nothing into corpus/.
    if cargo +nightly fuzz run "$t" "$scratch/$t" "corpus/$t" -- \
        -runs=0 -rss_limit_mb=4096 -timeout=10 >"$scratch/$t.log" 2>&1; then
        echo "fuzz replay: $t ok ($(ls "corpus/$t" | wc -l) inputs)"
    else
        status=1
        echo "fuzz replay: $t FAILED"
        tail -n 60 "$scratch/$t.log"
    fi
done
exit "$status"
