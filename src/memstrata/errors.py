"""The one exception tree of memstrata.

Every error memstrata raises on purpose derives from :class:`MemstrataError`;
vendor and driver errors are translated at the boundary with ``raise ... from exc``.
Front-ends (CLI, HTTP, MCP) map this tree to exit codes and status codes in one table
each::

    MemstrataError
     ├── ConfigError           bad settings or an unusable data directory
     ├── InvalidInputError     input the caller can fix (bad turn, unknown option, bad id)
     │    ├── ImportFormatError   a file that does not match its declared format
     │    └── TooLargeError       input over a configured size limit (a turn, a request, a page)
     ├── NotFoundError         no such item in this scope (other scopes are invisible)
     ├── ConflictError         a compare-and-swap write against a stale version
     ├── BusyError             a resource is held by another run
     ├── UnauthenticatedError  no API key, or one that is unknown or revoked
     ├── ForbiddenError        the key's role or tenant does not allow the request
     ├── EmbeddingError        an embedding provider failed or is not installed
     ├── LLMError              a chat model could not be reached or failed
     │    ├── LLMReplyError       it answered, but not with the JSON asked for
     │    ├── LLMUnavailableError it answered 429 or 5xx (retried with backoff first)
     │    ├── LLMTimeoutError     it did not answer in time
     │    └── LLMBudgetError      the run's token budget is spent: no more calls
     ├── UpstreamError         the server the memory proxy forwards to cannot be reached
     ├── RemoteError           a memory server (``memstrata.connect``) cannot be reached,
     │                         or answers an error the tree has no class for
     └── StoreError            the record store failed (I/O, driver, corruption)
          ├── MigrationError      a schema migration could not be applied
          ├── DamagedStoreError   the database file is damaged; writes are refused
          └── SnapshotError       a saved search index cannot be used (never reaches a
                                  caller: the index is rebuilt from the records)
"""

from __future__ import annotations


class MemstrataError(Exception):
    """Root of every error memstrata raises on purpose."""


class ConfigError(MemstrataError):
    """Settings are invalid or the data directory cannot be used."""


class InvalidInputError(MemstrataError):
    """The caller passed something memstrata cannot accept; nothing was written."""


class ImportFormatError(InvalidInputError):
    """An import file does not match its format.

    ``source`` names the file and ``line`` (1-based) or ``where`` the place, when known.
    """

    def __init__(
        self, message: str, *, source: str = "", line: int | None = None, where: str = ""
    ) -> None:
        place = source
        if line is not None:
            place = f"{place}:{line}" if place else f"line {line}"
        if where:
            place = f"{place} ({where})" if place else where
        super().__init__(f"{place}: {message}" if place else message)
        self.source = source
        self.line = line
        self.where = where


class TooLargeError(InvalidInputError):
    """Input is over a configured size limit; nothing was written.

    ``limit`` is the limit and ``size`` the size found, in the unit the message names.
    """

    def __init__(self, message: str, *, limit: int, size: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.size = size


class NotFoundError(MemstrataError):
    """The item does not exist in the caller's scope."""


class ConflictError(MemstrataError):
    """A versioned write was based on a stale version.

    ``expected`` is the version the writer read, ``actual`` the one stored now.
    """

    def __init__(self, item_id: str, expected: int, actual: int | None) -> None:
        now = "deleted" if actual is None else f"at version {actual}"
        super().__init__(
            f"{item_id} changed since version {expected} (now {now}); re-read and retry"
        )
        self.item_id = item_id
        self.expected = expected
        self.actual = actual


class BusyError(MemstrataError):
    """Another run holds the resource (for example one consolidation per layer and key)."""


class UnauthenticatedError(MemstrataError):
    """The request carries no API key, or one that is malformed, unknown or revoked."""


class ForbiddenError(MemstrataError):
    """The caller is known but may not do this: its key's role is too low, or the user asked
    for is outside the key's tenant (or, serving without keys, the request is not local)."""


class EmbeddingError(MemstrataError):
    """An embedding provider failed, returned malformed vectors or is not installed."""


class LLMError(MemstrataError):
    """A chat model could not be reached, refused, or failed."""


class LLMReplyError(LLMError):
    """The model answered, but not with the structured JSON it was asked for."""


class LLMUnavailableError(LLMError):
    """The provider answered 429 (rate limited) or 5xx: worth retrying after a while.
    ``retry_after_s`` is what its ``Retry-After`` header asked for (None: not said)."""

    def __init__(self, message: str, *, status: int, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


class LLMTimeoutError(LLMError):
    """The model did not answer within the configured timeout."""


class LLMBudgetError(LLMError):
    """The run's token budget is spent: the model is not called again in this run."""


class UpstreamError(MemstrataError):
    """The OpenAI-compatible server the memory proxy forwards to cannot be reached, or the
    connection to it broke before it answered (HTTP 502)."""


class RemoteError(MemstrataError):
    """A memory server reached through :func:`memstrata.connect` could not be reached, did not
    answer in time, or answered what the tree has no class for (a 500 ``InternalError``, a
    405, a 408, an answer that is not the API's). ``status`` is the HTTP status (None: no
    answer) and ``error`` the class the server named, if any. The message names the server's
    URL, never the API key."""

    def __init__(
        self, message: str, *, status: int | None = None, error: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = error


class StoreError(MemstrataError):
    """The record store failed."""


class MigrationError(StoreError):
    """A schema migration could not be applied; the database was left as it was."""


class DamagedStoreError(StoreError):
    """The database file is damaged (corrupt pages, not a database); every write is refused
    until it is repaired (``memstrata doctor --repair``) or restored from the raw trace."""


class SnapshotError(StoreError):
    """A saved search index (``<data dir>/index``) is damaged, of another format, or made
    with another embedder or ranking; it is set aside and the index rebuilt from the records,
    so a caller never sees this error."""
