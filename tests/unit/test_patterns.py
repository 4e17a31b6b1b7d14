"""The patterns schemas state are the checks the code makes: a scope part, an id, a key."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstrata.document.service import KEY_PATTERN, kind_for
from memstrata.errors import InvalidInputError
from memstrata.ids import ID_PATTERN, kind_of, new_id
from memstrata.model import SCOPE_PART_PATTERN, Scope

SPACES = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
parts = st.text(
    st.sampled_from([*"ab/\\ \t\x00\x1f\x7f中", *SPACES[:12], "\u3000", "\u2028"]), max_size=6
) | st.text(max_size=140)


def _scope_accepts(value: str) -> bool:
    try:
        Scope(value)
    except InvalidInputError:
        return False
    return True


@given(parts)
def test_the_scope_part_pattern_is_the_scope_check(value: str) -> None:
    if "\ud800" <= value[:1] <= "\udfff" or any("\ud800" <= c <= "\udfff" for c in value):
        return  # lone surrogates are refused by the Unicode check, not the pattern
    matches = re.fullmatch(SCOPE_PART_PATTERN.removesuffix("$"), value) is not None
    assert matches == _scope_accepts(value), repr(value)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("alice", True),
        ("a" * 128, True),
        ("a" * 129, False),
        ("a b", True),
        (" a", False),
        ("a\u3000", False),
        ("a/b", False),
        ("x", True),
        ("", False),
        ("\u00a0", False),
    ],
)
def test_scope_parts_at_the_edges(value: str, ok: bool) -> None:
    assert (re.fullmatch(SCOPE_PART_PATTERN.removesuffix("$"), value) is not None) == ok
    assert _scope_accepts(value) == ok


def test_ids_and_keys_match_their_patterns() -> None:
    for prefix in ("ep", "fa", "doc", "m", "run"):
        item_id = new_id(prefix)
        assert re.match(ID_PATTERN, item_id) and kind_of(item_id)
    assert not re.match(ID_PATTERN, "ep_123")
    for key in ("essentials", "hiking", "徒步", "a.b-c"):
        assert re.match(KEY_PATTERN, key)
        kind_for(key)
    for key in ("", "-x", "a/b", "x" * 101):
        assert not re.match(KEY_PATTERN, key)
        with pytest.raises(InvalidInputError):
            kind_for(key)
