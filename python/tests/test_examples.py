"""Every example runs (against the repository's test servers, no network, no keys)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted(p for p in (Path(__file__).resolve().parents[1] / "examples").glob("*.py") if not p.name.startswith("_"))


def test_there_are_three() -> None:
    assert [p.stem for p in EXAMPLES] == ["openai_agents", "pydantic_ai_agent", "session_loop"]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(example: Path, node_servers: Path) -> None:
    out = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "pay_invoice" in out.stdout
