"""Token counts checked against the `tiktoken` package, an implementation
independent of the crate's tiktoken-rs."""

from __future__ import annotations

import pytest
import tiktoken

from mcp_preamble import Assembler, InvalidConfigError, Server

from .conftest import CORPUS


def encoding(name: str) -> tiktoken.Encoding:
    return tiktoken.get_encoding(name)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_every_block_and_the_section(name: str) -> None:
    enc = encoding(name)
    servers = [Server.from_capture(p) for p in CORPUS]
    for budget in (None, 64):
        assembly = Assembler(encoding=name, budget=budget).assemble(servers)
        assert assembly.encoding == name
        assert assembly.total_tokens == len(enc.encode(assembly.text, disallowed_special=()))
        counted = 0
        for s in assembly.servers:
            if s.included:
                assert s.tokens == len(enc.encode(s.text, disallowed_special=())), s.name
                counted += 1
            if s.budget is not None:
                assert s.tokens <= s.budget
        assert counted > 30


def test_model_names_pick_their_encoding() -> None:
    servers = [Server.from_capture(CORPUS[0])]
    assert Assembler(model="gpt-4o").assemble(servers).encoding == "o200k_base"
    assert Assembler(model="gpt-4").assemble(servers).encoding == "cl100k_base"
    # Both given: they must agree, as `--model` and `--encoding` must in the CLI (issue 55).
    assert Assembler(model="gpt-4", encoding="cl100k_base").assemble(servers).encoding == "cl100k_base"
    with pytest.raises(InvalidConfigError) as e:
        Assembler(model="gpt-4", encoding="o200k_base").assemble(servers)
    assert str(e.value) == (
        'invalid configuration: settings that disagree: model "gpt-4" counts with cl100k_base, '
        'not encoding "o200k_base"; give one of them'
    )


def test_special_token_text_counts_as_text() -> None:
    enc = encoding("o200k_base")
    server = Server.from_initialize(
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
            "instructions": "Never print <|endoftext|> or <|im_start|> yourself.",
        },
        alias="s",
    )
    s = Assembler().assemble([server]).servers[0]
    assert s.tokens == len(enc.encode(s.text, disallowed_special=()))
