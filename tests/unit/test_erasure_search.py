"""The byte forms of a text and the search for many of them at once (memstrata.erasure)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from memstrata import erasure
from memstrata.erasure import Needles, text_forms


def test_text_forms_cover_utf8_and_both_json_escapes() -> None:
    forms = text_forms(['我说 "hi"\n', "plain"])
    assert '我说 "hi"\n'.encode() in forms
    assert '我说 \\"hi\\"\\n'.encode() in forms
    assert json.dumps('我说 "hi"\n')[1:-1].encode() in forms  # \\u6211...
    assert forms.count(b"plain") == 1  # the same form once
    assert text_forms([""]) == []


def _naive(data: bytes, needles: list[bytes]) -> set[tuple[int, bytes]]:
    found = set()
    for needle in set(needles):
        at = data.find(needle)
        while at >= 0:
            found.add((at, needle))
            at = data.find(needle, at + 1)
    return found


@pytest.mark.parametrize("count", [3, 300])
def test_needles_find_every_occurrence_as_a_plain_search_does(count: int) -> None:
    rng = random.Random(count)
    alphabet = "abc de的是我"
    text = "".join(rng.choice(alphabet) for _ in range(20_000)).encode("utf-8")
    needles = []
    for _ in range(count):
        start = rng.randrange(len(text) - 60)
        needles.append(text[start : start + rng.randint(1, 40)])  # found at least once
    needles.append(b"not there at all, not anywhere")
    assert set(Needles(needles).find(text)) == _naive(text, needles)


def test_a_needle_across_two_chunks_of_a_file_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(erasure, "_CHUNK", 64)
    needles = [f"needle number {i} is long enough".encode() for i in range(20)]
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 50 + needles[7] + b"y" * 300 + needles[19][:-1])
    assert Needles(needles).in_file(path) == [needles[7]]
    assert Needles(needles).in_file(tmp_path / "missing") == []


def test_every_occurrence_in_a_file_is_found_once_at_its_offset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(erasure, "_CHUNK", 64)  # many chunks, and needles across them
    rng = random.Random(3)
    data = "".join(rng.choice("ab 的是") for _ in range(3000)).encode("utf-8")
    needles = [data[at : at + rng.randint(4, 40)] for at in rng.sample(range(len(data) - 40), 30)]
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    found = list(Needles(needles).find_in_file(path))
    assert len(found) == len(set(found))  # none twice, though the chunks overlap
    assert set(found) == _naive(data, needles)
    assert list(Needles(needles).find_in_file(tmp_path / "missing")) == []


def test_needles_sharing_their_first_bytes_are_each_found_at_their_own_length() -> None:
    # the views of a dialogue's turns all start alike ("Ann: I love ...")
    needles = [f"Ann: I love hiking number {i}, said quietly".encode() for i in range(500)]
    needles += [b"Ann: I love hiking number 7", b"Ann: I love hiki", b"Ann: I l"]
    data = b"\n".join([needles[7], needles[499] + b" and more", b"Ann: I love hikes"])
    assert set(Needles(needles).find(data)) == _naive(data, needles)
    assert {n for _, n in Needles(needles).find(data)} == {
        needles[7],
        needles[499],
        b"Ann: I love hiking number 7",
        b"Ann: I love hiki",
        b"Ann: I l",
    }
