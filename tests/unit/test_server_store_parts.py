"""The parts of the server stores that need no server: transient retries, the connection pool,
and the placeholder rewrite."""

from __future__ import annotations

import threading

import pytest

from memstrata import retry
from memstrata.errors import BusyError
from memstrata.store.server.pool import ConnectionPool
from memstrata.store.sql.dialect import to_format_style


class Refused(Exception):
    pass


def test_a_transient_failure_is_retried_until_it_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(retry, "wait", waits.append)
    calls = iter([Refused(), Refused(), "done"])

    def attempt() -> str:
        result = next(calls)
        if isinstance(result, Exception):
            raise result
        return result

    assert retry.retry_transient(attempt, lambda e: isinstance(e, Refused)) == "done"
    assert len(waits) == 2 and waits[1] <= 2 * retry._FIRST_DELAY_S


def test_other_errors_and_the_deadline_end_the_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "wait", lambda s: None)
    ticks = iter(range(100))
    monkeypatch.setattr(retry, "now", lambda: float(next(ticks)))
    tries: list[int] = []

    def refused() -> None:
        tries.append(1)
        raise Refused()

    with pytest.raises(Refused):
        retry.retry_transient(refused, lambda e: isinstance(e, Refused), deadline_s=3)
    assert 2 <= len(tries) <= 4
    with pytest.raises(KeyError):
        retry.retry_transient(lambda: {}["x"], lambda e: isinstance(e, Refused))


class Conn:
    made = 0

    def __init__(self) -> None:
        Conn.made += 1
        self.closed = False


def _pool(size: int = 2, timeout_s: float = 0.05) -> ConnectionPool:
    Conn.made = 0
    return ConnectionPool(
        Conn,
        size=size,
        timeout_s=timeout_s,
        alive=lambda c: not c.closed,
        broken=lambda e: isinstance(e, Refused),
        close=lambda c: setattr(c, "closed", True),
    )


def test_the_pool_reuses_a_connection_and_drops_a_broken_one() -> None:
    pool = _pool()
    with pool.connection() as first:
        pass
    with pool.connection() as again:
        assert again is first
    with pytest.raises(Refused), pool.connection() as broken:
        raise Refused()
    assert broken.closed
    with pool.connection() as fresh:
        assert fresh is not first and Conn.made == 2
    with pytest.raises(ValueError, match="not a connection"), pool.connection() as kept:
        raise ValueError("not a connection problem")
    with pool.connection() as same:
        assert same is kept and not same.closed
    pool.close()
    assert same.closed


def test_a_borrower_waits_for_a_free_connection_then_is_told_the_pool_is_busy() -> None:
    pool = _pool(size=1)
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with pool.connection():
            held.set()
            release.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait(5)
    with pytest.raises(BusyError, match="busy"), pool.connection():
        pass
    release.set()
    thread.join()
    with pool.connection():
        pass


def test_placeholders_are_rewritten_and_percent_signs_kept() -> None:
    assert to_format_style("SELECT a FROM t WHERE b = ? AND c LIKE '5%'") == (
        "SELECT a FROM t WHERE b = %s AND c LIKE '5%%'"
    )
