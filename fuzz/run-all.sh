#!/usr/bin/env bash
# Runs every fuzz target, one after another (never two at once), each for
# FUZZ_SECONDS seconds or FUZZ_RUNS executions, whichever comes first, and
# writes one summary line per target to fuzz/results.txt.
#
#   FUZZ_SECONDS  seconds per target            (default 1200)
#   FUZZ_RUNS     executions per target         (default 10000000)
#   FUZZ_TARGETS  targets to run, in order      (default: all, as listed below)
#   FUZZ_RSS_MB   libFuzzer -rss_limit_mb       (default 4096)
#
# New inputs go to fuzz/corpus-work/<target>/ (not committed); the committed
# seeds in fuzz/corpus/<target>/ are read, never written. Logs are in
# fuzz/logs/<target>.log, crash inputs in fuzz/artifacts/<target>/.
# Exit status: 0 when every target ended without a finding, 1 otherwise.
set -u
cd "$(dirname "$0")"

seconds=${FUZZ_SECONDS:-1200}
runs=${FUZZ_RUNS:-10000000}
targets=${FUZZ_TARGETS:-"wire section budgets template lint"}
rss=${FUZZ_RSS_MB:-4096}
results=results.txt

dict_for() {
    case "$1" in
        wire) echo dicts/wire.dict ;;
        template) echo dicts/template.dict ;;
        *) echo dicts/text.dict ;;
    esac
}

cargo +nightly fuzz build || { echo "run-all: build failed" >&2; exit 2; }
mkdir -p corpus-work logs
{
    echo "# $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')" \
        "max_total_time=${seconds}s runs=${runs} rss_limit_mb=${rss}"
} > "$results"

status=0
for t in $targets; do
    mkdir -p "corpus-work/$t"
    log="logs/$t.log"
    dict=$(dict_for "$t")
    dict_arg=()
    [ -f "$dict" ] && dict_arg=("-dict=$dict")
    echo "run-all: $t (${seconds}s or ${runs} runs)" >&2
    cargo +nightly fuzz run "$t" "corpus-work/$t" "corpus/$t" -- \
        -max_total_time="$seconds" -runs="$runs" -rss_limit_mb="$rss" -timeout=10 \
        -print_final_stats=1 "${dict_arg[@]}" >"$log" 2>&1
    rc=$?

    # libFuzzer's final stats, else its last status line.
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$last")
    [ -n "$eps" ] || eps=$(sed -n 's/.*exec\/s: \([0-9]*\).*/\1/p' <<<"$last")
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")

    if [ "$rc" -eq 0 ]; then
        result=ok
    else
        status=1
        artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        kind=$(grep -oE 'libFuzzer: (deadly signal|timeout|out-of-memory[^)]*\)?|fuzz target exited)|panicked at [^ ]*' "$log" | head -1)
        result="FAIL(${kind:-exit $rc}) ${artifact:-no artifact}"
    fi
    printf '%-9s execs=%s execs/s=%s cov=%s ft=%s result=%s\n' \
        "$t" "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$result" | tee -a "$results"
done
exit "$status"
