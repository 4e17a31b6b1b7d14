"""The documents service built on its own: a store, a runtime of a fixed clock and no trace, the
capture service over them, and the erasure of texts recorded instead of run. Nothing else of
the facade is built."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memstrata.api.capture import CaptureService
from memstrata.api.documents import DocumentsService
from memstrata.api.runtime import Runtime
from memstrata.document.ops import Operation, OpKind
from memstrata.errors import ConflictError, TooLargeError
from memstrata.model import DeleteReason, Scope
from memstrata.store.sqlite import SqliteStore
from tests.conftest import FixedClock

U = Scope("u")


@pytest.fixture
def docs(tmp_path: Path) -> Iterator[tuple[DocumentsService, list[tuple[str, list[str]]]]]:
    erased: list[tuple[str, list[str]]] = []

    def erase_texts(scope: Scope, target: str, texts: Sequence[str]) -> None:
        erased.append((scope.user, list(texts)))

    with SqliteStore(tmp_path / "m.db") as store:
        runtime = Runtime(store, None, FixedClock(), None)
        yield DocumentsService(runtime, CaptureService(runtime), erase_texts), erased


def test_a_bullet_written_by_hand_cites_a_turn_captured_for_it(
    docs: tuple[DocumentsService, list[tuple[str, list[str]]]],
) -> None:
    service, _ = docs
    _, version = service.doc("food", U)
    doc, after = service.apply_doc(
        "food",
        U,
        [Operation(OpKind.ADD, section="Likes", text="喜欢龙井茶")],
        expected_version=version,
    )
    [bullet] = [b for s in doc.sections for b in s.bullets]
    assert after == version + 1 and bullet.text == "喜欢龙井茶"
    [citation] = bullet.citations
    turn = service.store.get_episode(U, citation.episode_id)
    assert turn is not None and turn.text == "喜欢龙井茶" and turn.surface == "manual"


def test_a_bullet_deleted_on_request_has_its_text_erased_and_a_stale_version_is_refused(
    docs: tuple[DocumentsService, list[tuple[str, list[str]]]],
) -> None:
    service, erased = docs
    doc, version = service.apply_doc(
        "food", U, [Operation(OpKind.ADD, section="Likes", text="likes oolong")], expected_version=0
    )
    [bullet] = [b for s in doc.sections for b in s.bullets]
    gone = Operation(OpKind.DELETE, bullet.id, reason=DeleteReason.USER_REQUEST)
    with pytest.raises(ConflictError):
        service.apply_doc("food", U, [gone], expected_version=version - 1)
    assert erased == []  # nothing was deleted, nothing erased
    service.apply_doc("food", U, [gone], expected_version=version)
    [(user, texts)] = erased
    assert user == "u" and len(texts) == 1 and "likes oolong" in texts[0]


def test_text_over_the_limit_is_refused_before_anything_is_written(
    docs: tuple[DocumentsService, list[tuple[str, list[str]]]],
) -> None:
    service, _ = docs
    with pytest.raises(TooLargeError, match="operation 1's text"):
        service.apply_doc(
            "food",
            U,
            [Operation(OpKind.ADD, section="Likes", text="x" * 10**6)],
            expected_version=0,
        )
    with pytest.raises(TooLargeError, match="the identity"):
        service.set_identity("y" * 10**6, U)
    assert service.doc("food", U)[1] == 0 and service.identity(U).text == ""
    assert list(service.store.iter_episodes(U)) == []


def test_identity_is_compare_and_swap_when_a_version_is_given(
    docs: tuple[DocumentsService, list[tuple[str, list[str]]]],
) -> None:
    service, _ = docs
    first = service.set_identity("I am Lin, a nurse in 杭州.", U)
    with pytest.raises(ConflictError):
        service.set_identity("stale", U, expected_version=first.version - 1)
    assert service.set_identity("I am Lin.", U, expected_version=first.version).text == "I am Lin."
