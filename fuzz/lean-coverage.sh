#!/usr/bin/env bash
# RUSTC_WRAPPER for a leaner fuzz build: coverage instrumentation (and the
# comparison tracing that comes with it) only for this repository's crates
# and the targets, not for dependencies (regex, serde_json, tiktoken, ICU,
# pulldown-cmark, minijinja...). libFuzzer's per-execution work grows with
# the coverage features an execution touches, and most of them were in
# dependencies. The oracles are the same; what changes is what guides the
# mutations. Used by campaign.sh when CAMPAIGN_LEAN=1:
#
#   RUSTC_WRAPPER=$PWD/lean-coverage.sh CARGO_TARGET_DIR=target-lean \
#       cargo +nightly fuzz build -s none --release
rustc=$1
shift
name=
prev=
for a in "$@"; do
    [ "$prev" = --crate-name ] && name=$a
    prev=$a
done
case "$name" in
    mcp_preamble | mcp_preamble_fuzz | wire | section | budgets | template | lint | links \
        | serve_host | serve_upstream | serve_names | wrap_relay | "")
        exec "$rustc" "$@" ;;
esac
args=()
for a in "$@"; do
    case "$a" in
        -Cpasses=sancov-module | -Cllvm-args=-sanitizer-coverage-*) ;;
        *) args+=("$a") ;;
    esac
done
exec "$rustc" "${args[@]}"
