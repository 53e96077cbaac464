"""One contract for bad input in both packages: the Assembler's options, their
types and the error each bad value raises come from one settings model,
tests/data/assembler-options.json, which node/test/options.test.mjs reads too."""

from __future__ import annotations

import inspect
import json
from typing import Any, Dict, List, Tuple

import pytest

import mcp_preamble as mp

from .conftest import ROOT

MODEL: Dict[str, Any] = json.loads((ROOT / "tests" / "data" / "assembler-options.json").read_text())


def cases(group: str) -> List[Tuple[str, Any, str]]:
    """(keyword, value, detail) for each option and each value of its type's ``group``."""
    out = []
    for option in MODEL["options"]:
        for bad in MODEL["types"][option["type"]][group]:
            out.append((option["py"], bad["value"], bad["detail"].replace("{key}", option["key"])))
    return out


def test_the_assembler_takes_exactly_the_options_of_the_model() -> None:
    keywords = [p for p in inspect.signature(mp.Assembler.__init__).parameters if p != "self"]
    assert sorted(keywords) == sorted(o["py"] for o in MODEL["options"])


@pytest.mark.parametrize(("keyword", "value", "detail"), cases("bad"))
def test_a_value_of_the_wrong_type_raises_invalid_type_error(keyword: str, value: Any, detail: str) -> None:
    with pytest.raises(mp.InvalidTypeError) as e:
        mp.Assembler(**{keyword: value})
    assert isinstance(e.value, mp.InvalidConfigError) and isinstance(e.value, TypeError)
    assert e.value.kind == "invalid_config"
    assert e.value.detail == detail
    assert str(e.value) == f"invalid configuration: {detail}"


@pytest.mark.parametrize(("keyword", "value", "detail"), cases("refused"))
def test_a_value_of_the_right_type_out_of_range_raises_invalid_config_error(keyword: str, value: Any, detail: str) -> None:
    with pytest.raises(mp.InvalidConfigError) as e:
        mp.Assembler(**{keyword: value})
    assert not isinstance(e.value, TypeError)
    assert e.value.detail == detail


@pytest.mark.parametrize("option", [o for o in MODEL["options"] if MODEL["types"][o["type"]]["good"] is not None], ids=lambda o: o["py"])
def test_a_good_value_is_taken(option: Dict[str, Any]) -> None:
    good = MODEL["types"][option["type"]]["good"]
    assert option["py"] in repr(mp.Assembler(**{option["py"]: good}))


def test_a_tuple_and_a_generator_of_aliases_are_lists_of_strings() -> None:
    assert "deferred=['a', 'b']" in repr(mp.Assembler(deferred=("a", "b")))
    assert "deferred=['a', 'b']" in repr(mp.Assembler(deferred=(a for a in "ab")))
