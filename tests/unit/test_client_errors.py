"""The HTTP API's error answers read back as the classes of the exception tree, with the
server's message and what its details say; anything else as RemoteError."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from memstrata.client import RemoteMemory, error_of
from memstrata.errors import (
    BusyError,
    ConflictError,
    DamagedStoreError,
    ForbiddenError,
    ImportFormatError,
    InvalidInputError,
    LLMUnavailableError,
    MemstrataError,
    NotFoundError,
    RemoteError,
    StoreError,
    TooLargeError,
    UnauthenticatedError,
)

URL = "http://memory.example:8765"


def _answer(status: int, body: Any, headers: dict[str, str] | None = None) -> MemstrataError:
    if isinstance(body, str):
        return error_of(httpx2.Response(status, text=body, headers=headers), URL)
    return error_of(httpx2.Response(status, json=body, headers=headers), URL)


@pytest.mark.parametrize(
    ("status", "name", "cls"),
    [
        (422, "InvalidInputError", InvalidInputError),
        (422, "ImportFormatError", ImportFormatError),
        (404, "NotFoundError", NotFoundError),
        (409, "BusyError", BusyError),
        (401, "UnauthenticatedError", UnauthenticatedError),
        (403, "ForbiddenError", ForbiddenError),
        (503, "StoreError", StoreError),
        (503, "DamagedStoreError", DamagedStoreError),
    ],
)
def test_a_named_class_of_the_tree_is_raised_as_itself(
    status: int, name: str, cls: type[MemstrataError]
) -> None:
    exc = _answer(status, {"error": name, "message": "what went wrong: 出错了"})
    assert type(exc) is cls and str(exc) == "what went wrong: 出错了"


def test_a_conflict_carries_its_versions() -> None:
    details = [{"type": "conflict", "item_id": "tea", "expected_version": 3, "current_version": 4}]
    message = str(ConflictError("tea", 3, 4))
    exc = _answer(409, {"error": "ConflictError", "message": message, "details": details})
    assert isinstance(exc, ConflictError) and str(exc) == message
    assert (exc.item_id, exc.expected, exc.actual) == ("tea", 3, 4)
    deleted = [{**details[0], "current_version": None}]
    exc = _answer(409, {"error": "ConflictError", "message": "gone", "details": deleted})
    assert isinstance(exc, ConflictError) and exc.actual is None


def test_too_large_carries_its_limit_and_size() -> None:
    details = [{"type": "too-large", "limit": 100_000, "size": 100_001}]
    exc = _answer(413, {"error": "TooLargeError", "message": "too long", "details": details})
    assert isinstance(exc, TooLargeError) and (exc.limit, exc.size) == (100_000, 100_001)
    bare = _answer(413, {"error": "TooLargeError", "message": "too long"})  # limit unknown
    assert isinstance(bare, TooLargeError) and (bare.limit, bare.size) == (0, 0)


def test_a_model_that_is_unavailable_says_when_to_retry() -> None:
    exc = _answer(
        500, {"error": "LLMUnavailableError", "message": "rate limited"}, {"Retry-After": "7"}
    )
    assert isinstance(exc, LLMUnavailableError) and exc.retry_after_s == 7.0


@pytest.mark.parametrize(
    ("status", "cls"),
    [(422, InvalidInputError), (404, NotFoundError), (403, ForbiddenError), (503, StoreError)],
)
def test_a_class_the_tree_does_not_name_is_its_statuss_class(
    status: int, cls: type[MemstrataError]
) -> None:
    exc = _answer(status, {"error": "OperationError", "message": "operation 1 rejected"})
    assert type(exc) is cls and str(exc) == "operation 1 rejected"


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, {"error": "InternalError", "message": "internal error; the server log has details"}),
        (405, {"error": "MethodNotAllowedError", "message": "Method Not Allowed"}),
        (408, {"error": "RequestTimeoutError", "message": "too slow"}),
        (500, {"error": "MemstrataError", "message": "something"}),
        (502, "<html>Bad Gateway</html>"),
        (418, {"unexpected": True}),
    ],
)
def test_anything_else_is_a_remote_error_naming_the_server(status: int, body: Any) -> None:
    exc = _answer(status, body)
    assert type(exc) is RemoteError and exc.status == status
    assert URL in str(exc)
    if isinstance(body, dict) and "error" in body:
        assert exc.error == body["error"] and body["message"] in str(exc)


def test_a_name_is_looked_up_in_the_tree_only() -> None:
    exc = _answer(422, {"error": "__class__", "message": "x"})
    assert type(exc) is InvalidInputError
    exc = _answer(422, {"error": "Exception", "message": "x"})
    assert type(exc) is InvalidInputError


@pytest.mark.parametrize(
    "url", ["memory.example:8765", "ftp://memory.example", "http://", "", "http:///v1"]
)
def test_a_url_that_is_not_http_is_refused(url: str) -> None:
    with pytest.raises(InvalidInputError, match="http:// or https://"):
        RemoteMemory(url)


def test_the_url_is_shown_without_credentials_and_the_key_never(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "ms_" + "k" * 43
    memory = RemoteMemory("https://bob:hunter2@memory.example:8443/api/?token=x#f", key)
    try:
        assert memory.url == "https://memory.example:8443/api/"
        assert "hunter2" not in repr(memory) and key not in repr(memory)
    finally:
        memory.close()
    with pytest.raises(InvalidInputError) as refused:
        RemoteMemory(URL, "ms_bad\nkey")
    assert "ms_bad" not in str(refused.value)
    for timeout in (0, -1, True):
        with pytest.raises(InvalidInputError, match="timeout"):
            RemoteMemory(URL, timeout=timeout)
