#!/usr/bin/env bash
# One campaign per target, one target at a time: CAMPAIGN_RUNS executions
# (default 1,000,000) or CAMPAIGN_SECONDS (default 3600), whichever comes
# first, without ASan (`cargo fuzz build -s none --release`), libFuzzer's
# fork mode on both cores, at the lowest priority (the machine is shared).
# The binaries are run directly (what `cargo +nightly fuzz run -s none
# --release <target> corpus-work/<target> corpus/<target> -- <flags>` runs)
# so that no cargo process holds the build lock meanwhile.
# One line per target goes to campaign.txt: executions, seconds, execs/s,
# and ok or the failure with its artifact.
#
#   CAMPAIGN_TARGETS   targets, in order   (default: template wire lint section budgets)
#   CAMPAIGN_JOBS      -fork               (default 2)
#   CAMPAIGN_MODE      fork (default): libFuzzer's -fork=JOBS; workers:
#                      JOBS independent processes (-seed=1..JOBS, each
#                      RUNS/JOBS executions) sharing the work corpus
#   CAMPAIGN_NICE      niceness of the fuzzer (default 19)
#   CAMPAIGN_LEAN      1: coverage only for this repository's crates
#                      (lean-coverage.sh), built in <target dir>/lean
set -u
cd "$(dirname "$0")"
runs=${CAMPAIGN_RUNS:-1000000}
seconds=${CAMPAIGN_SECONDS:-3600}
jobs=${CAMPAIGN_JOBS:-2}
mode=${CAMPAIGN_MODE:-fork}
targets=${CAMPAIGN_TARGETS:-"template wire lint section budgets"}
base=${CARGO_TARGET_DIR:-target}
if [ "${CAMPAIGN_LEAN:-0}" = 1 ]; then
    export RUSTC_WRAPPER=$PWD/lean-coverage.sh CARGO_TARGET_DIR=$base/lean
fi
bin=${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release
# Only the targets of this campaign: each binary links the whole library.
for t in $targets; do
    cargo +nightly fuzz build -s none --release "$t" || { echo "campaign: build of $t failed" >&2; exit 2; }
done
mkdir -p corpus-work logs
# The commit the binaries were built from (HEAD may move during a campaign).
commit=$(git rev-parse --short HEAD)
status=0
for t in $targets; do
    case "$t" in wire) dict=dicts/wire.dict ;; template) dict=dicts/template.dict ;; *) dict=dicts/text.dict ;; esac
    mkdir -p "corpus-work/$t" "artifacts/$t"
    log="logs/campaign-$t.log"
    start=$(date +%s)
    if [ "$mode" = workers ]; then
        # Independent long-lived processes sharing corpus-work/<target>
        # (each reloads what the others add): no restart per job, so no
        # repeated start-up and seed replay as in fork mode.
        pids=()
        for i in $(seq 1 "$jobs"); do
            cmd=(nice -n "${CAMPAIGN_NICE:-19}" "$bin/$t" -artifact_prefix="artifacts/$t/" -seed="$i"
                 -runs=$(( (runs + jobs - 1) / jobs )) -max_total_time="$seconds" -timeout=10
                 -rss_limit_mb=4096 -dict="$dict" -reload=30 "corpus-work/$t" "corpus/$t")
            echo "campaign: ${cmd[*]}" | tee "$log.$i" >&2
            "${cmd[@]}" >>"$log.$i" 2>&1 &
            pids+=($!)
        done
        rc=0
        for p in "${pids[@]}"; do wait "$p" || rc=$?; done
        cat "$log".[0-9]* > "$log"
        execs=0
        for i in $(seq 1 "$jobs"); do
            n=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log.$i" | tail -1)
            [ -n "$n" ] || n=$(grep -E '^#[0-9]+' "$log.$i" | tail -1 | sed 's/^#\([0-9]*\).*/\1/')
            execs=$(( execs + ${n:-0} ))
        done
        crashes=$(grep -c -E '^==[0-9]+== ERROR|^SUMMARY|panicked at' "$log")
        crashes="crash-lines:$crashes"
    else
        cmd=(nice -n "${CAMPAIGN_NICE:-19}" "$bin/$t" -artifact_prefix="artifacts/$t/" -fork="$jobs" -runs="$runs"
             -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -dict="$dict"
             "corpus-work/$t" "corpus/$t")
        echo "campaign: ${cmd[*]}" | tee "$log" >&2
        "${cmd[@]}" >>"$log" 2>&1
        rc=$?
        execs=$(sed -n 's/^INFO: fuzzed for \([0-9]*\) iterations.*/\1/p' "$log" | tail -1)
        [ -n "$execs" ] || execs=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed 's/^#\([0-9]*\).*/\1/')
        crashes=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.*oom\/timeout\/crash: \([0-9/]*\).*/\1/p')
    fi
    secs=$(( $(date +%s) - start ))
    if [ "$rc" -eq 0 ]; then result=ok; else status=1; result="FAIL rc=$rc $(grep -o 'Test unit written to .*' "$log" | tail -1)"; fi
    printf '%s %-9s lean=%s mode=%s commit=%s execs=%s seconds=%s execs/s=%s oom/timeout/crash=%s result=%s\n' \
        "$(date -u +%FT%H:%MZ)" "$t" "${CAMPAIGN_LEAN:-0}" "$mode" "$commit" "${execs:-?}" "$secs" \
        "$(( ${execs:-0} / (secs > 0 ? secs : 1) ))" "${crashes:-?}" "$result" | tee -a campaign.txt
done
exit "$status"
