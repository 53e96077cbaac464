"""Eight threads assembling eight sets against one thread assembling them in
turn: the GIL is released while the crate assembles, so the threads run at
once on as many cores as there are. A benchmark, not a test: it prints the
times and the speed-up; run it on a quiet machine.

    python benches/threads.py [rounds]

Each set is the whole corpus under its own assembler (a budget of its own,
so no set reuses another's counts): cold assemblies, as a host's first
section of each session is.
"""

from __future__ import annotations

import functools
import glob
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Callable, List

import mcp_preamble as mp

ROOT = Path(__file__).resolve().parents[2]
SETS = 8


def servers() -> List[mp.Server]:
    return [mp.Server.from_capture(p) for p in sorted(glob.glob(str(ROOT / "tests" / "corpus" / "*.json")))]


def jobs(corpus: List[mp.Server]) -> List[Callable[[], object]]:
    assemblers = [mp.Assembler(budget=64 + 8 * i) for i in range(SETS)]
    return [functools.partial(a.assemble, corpus) for a in assemblers]


def sequential(corpus: List[mp.Server]) -> float:
    work = jobs(corpus)
    start = time.perf_counter()
    for job in work:
        job()
    return time.perf_counter() - start


def threaded(corpus: List[mp.Server]) -> float:
    work = jobs(corpus)
    threads = [threading.Thread(target=job) for job in work]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    corpus = servers()
    sequential(corpus)  # warm: pages in the library and tiktoken's tables
    seq = statistics.median(sequential(corpus) for _ in range(rounds))
    par = statistics.median(threaded(corpus) for _ in range(rounds))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{SETS} sets of {len(corpus)} servers, median of {rounds} rounds, {cores} cores")
    print(f"one thread in turn: {seq * 1000:.1f} ms")
    print(f"{SETS} threads:        {par * 1000:.1f} ms ({seq / par:.2f}x)")


if __name__ == "__main__":
    main()
