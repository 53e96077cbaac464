"""What the package shares and what it does not hold up: one tokenizer file is
read once for every assembler of the process (the crate's loader counts the
reads), assembly runs in parallel threads, and a capture given as a FIFO is
read once."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import List

import pytest

import mcp_preamble as mp
from mcp_preamble import _native

from .conftest import CORPUS


def test_one_tokenizer_file_ten_assemblers_read_once(llama3_tokenizer: Path, tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    shutil.copyfile(llama3_tokenizer, path)
    assert _native.tokenizer_file_reads(str(path)) == 0
    servers = [mp.Server.from_capture(CORPUS[0])]
    assemblers = [mp.Assembler(model="llama-3.1", tokenizer=path, budget=64) for _ in range(10)]
    assert _native.tokenizer_file_reads(str(path)) == 1
    texts = {a.assemble(servers).text for a in assemblers}
    assert len(texts) == 1
    # The same file under another name of it: still the one read.
    mp.Assembler(model="llama-3.1", tokenizer=tmp_path / "." / "tokenizer.json")
    assert _native.tokenizer_file_reads(str(path)) == 1
    # A file that changed is read again (once).
    path.write_bytes(path.read_bytes() + b"\n")
    mp.Assembler(model="llama-3.1", tokenizer=path)
    mp.Assembler(model="llama-3.1", tokenizer=path)
    assert _native.tokenizer_file_reads(str(path)) == 2


def test_threads_assemble_at_once() -> None:
    """The GIL is released while the crate assembles: eight threads, each
    with its own assembly, all finish with the bytes one thread makes (the
    speed-up is measured by benches/threads.py, not here)."""
    servers = [mp.Server.from_capture(p) for p in CORPUS]
    assembler = mp.Assembler(budget=96)
    expected = assembler.assemble(servers).text
    results: List[str] = []
    errors: List[BaseException] = []

    def run() -> None:
        try:
            results.append(assembler.assemble(servers).text)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and results == [expected] * 8


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_capture_given_as_a_fifo_is_read_once(tmp_path: Path) -> None:
    fifo = tmp_path / "capture.json"
    os.mkfifo(fifo)
    text = CORPUS[0].read_bytes()

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(text)

    read: List[mp.Server] = []
    # Daemon threads: a second open of the FIFO would wait for a writer forever.
    writer = threading.Thread(target=write, daemon=True)
    reader = threading.Thread(target=lambda: read.append(mp.Server.from_capture(fifo, alias="billing")), daemon=True)
    writer.start()
    reader.start()
    reader.join(timeout=30)
    assert not reader.is_alive(), "from_capture is still waiting on the FIFO"
    assert read[0].alias == "billing" and read[0] == mp.Server.from_capture(CORPUS[0], alias="billing")
