#!/usr/bin/env bash
# The Python package's checks, run by .ci/run after `cargo test --all-features`
# (which builds the CLI the parity tests compare with):
#   1. a virtual environment of its own with requirements-ci.txt from PyPI;
#   2. the release wheel (`maturin build --release`), built once, installed
#      into that environment; pytest against the installed wheel (parity with
#      the CLI on the corpus, tiktoken, errors, live servers, examples) and
#      mypy --strict over the package, its tests and the examples;
#   3. the same wheel installed into a fresh virtual environment with nothing
#      else (no index), on the oldest Python at hand (3.9 when there is one:
#      the wheel is abi3-py39), and used there.
# One build of the extension: a debug `maturin develop` before the release
# build cost about 45 s of CI and tested a build that is never shipped.
# `python/ci.sh deps` does 1, `python/ci.sh build` 1 and the wheel, `python/ci.sh test` the rest;
# `python/ci.sh dev` builds a debug wheel instead (a quicker local run; .ci/release
# and scripts/dist build the release wheel); no argument: all.
set -euo pipefail
phase="${1:-all}"
cd "$(dirname "$0")"
root="$(cd .. && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
work="$target/python-ci"
venv="$work/venv"
python="${PYTHON:-python3}"

step() { echo "ci(python): $1 ($SECONDS s)"; }

if [ "$phase" != test ]; then
# `python/ci.sh deps` does this step alone (.ci/run: early, beside clippy, so
# that it does not wait at the lowest priority behind the Rust tests); a later
# build skips it while requirements-ci.txt is what was installed.
if ! cmp -s requirements-ci.txt "$venv/.requirements-ci.txt"; then
    step "virtual environment"
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements-ci.txt
    cp requirements-ci.txt "$venv/.requirements-ci.txt"
fi
[ "$phase" = deps ] && exit 0

if [ "$phase" = dev ]; then
    # A quicker local build: debug, this machine's glibc, in the target dir of
    # the Rust tests, whose dependencies it reuses. The release wheel is below.
    step "maturin build (debug)"
    rm -rf "$work/wheels" "$work/fresh"
    PATH="$venv/bin:$PATH" "$venv/bin/maturin" build --quiet --profile dev --auditwheel skip \
        --compatibility linux --out "$work/wheels"
    exit 0
fi
step "maturin build --release (manylinux2014)"
rm -rf "$work/wheels" "$work/fresh"
# Linked by zig (ziglang and cargo-zigbuild, in the venv; scripts/zigcc-glibc2.17)
# against glibc 2.17's symbols: the wheel is tagged manylinux2014 and installs on
# RHEL 7/8, Ubuntu 18.04/20.04 and Amazon Linux 2 (linked against this machine's
# glibc it was manylinux_2_34). It is the wheel scripts/dist ships; the Node
# module and the instruction guard are built with the same target and linker,
# reusing the library's build (maturin --zig would link through a wrapper at a
# path of its own, and cargo would build the library again for them).
PATH="$venv/bin:$PATH" CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$root/scripts/zigcc-glibc2.17" \
    "$venv/bin/maturin" build --release --quiet --target x86_64-unknown-linux-gnu --compatibility manylinux2014 \
    --out "$work/wheels"
fi
[ "$phase" = build ] && exit 0
wheel=$(ls "$work"/wheels/mcp_preamble-*-abi3-*.whl)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$wheel"

# mypy beside pytest: pytest mostly waits on servers and the CLI, mypy
# computes (about 35 s of CI after pytest's 90). Its output is printed after
# pytest's, and a failure of either fails the step.
step "pytest (the installed wheel), mypy beside it"
"$venv/bin/mypy" mcp_preamble examples tests benches >"$work/mypy.log" 2>&1 &
mypy=$!
# Missing tools (the CLI, node, tiktoken's vocabulary) fail instead of skipping.
# The pytest script (not `python -m`, which puts this folder first on sys.path)
# with --import-mode=append: `import mcp_preamble` finds the installed wheel,
# not the source folder beside the tests (tests/conftest.py checks it).
pytest_rc=0
MCP_PREAMBLE_REQUIRE_PYTHON=1 MCP_PREAMBLE_REQUIRE_INSTALLED=1 \
    "$venv/bin/pytest" -q --import-mode=append tests || pytest_rc=$?
mypy_rc=0
wait "$mypy" || mypy_rc=$?
step "mypy (exit $mypy_rc)"
cat "$work/mypy.log"
[ "$pytest_rc" = 0 ] && [ "$mypy_rc" = 0 ] || exit 1
# The oldest Python from 3.9 on that runs (pyenv's shims exist for versions not selected).
oldest="$python"
for v in 3.9 3.10 3.11 3.12 3.13; do
    if "python$v" -c "" 2>/dev/null; then
        oldest="python$v"
        break
    fi
    if command -v pyenv >/dev/null && prefix="$(pyenv prefix "$(pyenv latest "$v" 2>/dev/null)" 2>/dev/null)"; then
        oldest="$prefix/bin/python$v"
        break
    fi
done
step "fresh virtual environment ($("$oldest" --version))"
"$oldest" -m venv "$work/fresh"
"$work/fresh/bin/python" -m pip install --quiet --disable-pip-version-check --no-index "$wheel"
(cd / && "$work/fresh/bin/python" - "$root/tests/corpus/seed-invoice-server.json" <<'PY')
import importlib.metadata as md
import sys

import mcp_preamble as mp

installed = sorted(d.metadata["Name"].lower() for d in md.distributions())
assert installed in (["mcp-preamble", "pip"], ["mcp-preamble", "pip", "setuptools"]), installed
server = mp.Server.from_capture(sys.argv[1], alias="billing")
assembly = mp.Assembler(budget=64).assemble([server])
assert "### billing" in assembly.text and assembly.servers[0].tokens <= 64
try:
    mp.Assembler(template="nope")
except mp.McpPreambleError as e:
    assert e.kind == "unknown_template"
print(f"ci(python): wheel {mp.__version__} works on Python {sys.version.split()[0]}: {assembly!r}")
PY
step "done"
