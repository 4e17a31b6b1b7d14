"""The agent verbs: one written protocol, two implementations.

:class:`AgentMemory` is what an agent needs of a memory: capture turns (``remember``), find
them again (``search``), be served what matters (``context`` for a message, ``wake_up`` at a
session's start, ``recall`` for a topic), forget on request (``forget``), file and read facts
(``add_fact``, ``facts``, ``get``, ``list``) and edit curated documents (``doc``,
``apply_doc``). :class:`memstrata.Memory` implements it in process;
:class:`memstrata.client.RemoteMemory` (``memstrata.connect(url, key)``) over the HTTP API,
decoding every answer into the same types and every error into the same exception classes.
So an application written against ``AgentMemory`` moves from embedded to server by changing
the line that opens its memory; one behaviour suite (``tests/contract/test_agent_contract.py``)
runs against both.

The parameters are those both sides honour. ``Memory`` takes a few more (``fall_back_to_user``,
``dry_run``, a fact's ``valid_from``, the record filters of ``list``), which a remote memory
does not offer; a server's budgets are 80 to 100,000 tokens (50 for ``context``).

Every verb takes the scope it acts in, a :class:`~memstrata.model.Scope` or a user id. A
scope never sees another user's records: another user's id is :class:`NotFoundError`, in
process and over HTTP alike (and a user outside an API key's users is
:class:`ForbiddenError`, over HTTP).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Self

from memstrata.model import Category, Granularity

if TYPE_CHECKING:
    from memstrata.api import Memory
    from memstrata.api.browse import FactView, Validity
    from memstrata.api.common import DeleteReport, ListKind, Record, ScopeLike, TurnLike
    from memstrata.context import Context
    from memstrata.document.format import Document as CuratedDocument
    from memstrata.document.ops import Operation
    from memstrata.layers import Recall, WakeUp
    from memstrata.model import Episode, Fact, SearchFilter, SearchHits, When

#: the verbs of :class:`AgentMemory`, in the order it lists them
VERBS: tuple[str, ...] = (
    "remember",
    "search",
    "context",
    "wake_up",
    "recall",
    "forget",
    "add_fact",
    "facts",
    "get",
    "doc",
    "apply_doc",
    "list",
)


class AgentMemory(Protocol):
    """A memory an agent talks to, in process (:class:`memstrata.Memory`) or over HTTP
    (:func:`memstrata.connect`). Every method raises the errors of :mod:`memstrata.errors`:
    :class:`InvalidInputError` for input it cannot take (:class:`TooLargeError` over a size
    limit), :class:`NotFoundError` for what the scope does not hold, :class:`ConflictError`
    for a stale compare-and-swap."""

    def remember(
        self,
        turns: TurnLike | Iterable[TurnLike],
        scope: ScopeLike,
        *,
        surface: str = "chat",
        session_id: str | None = None,
    ) -> list[Episode]:
        """Store turns verbatim, as one batch: text, a :class:`Turn` or a mapping of its
        fields (``text``, ``speaker``, ``role``, ``time``, ``session_id``, ``metadata``), or a
        list of them. The stored episodes, in order."""
        ...

    def search(
        self,
        query: str,
        scope: ScopeLike,
        *,
        k: int = 10,
        granularity: Granularity | str = Granularity.TURN,
        filters: SearchFilter | None = None,
        rerank: bool = False,
        wait: bool | None = None,
    ) -> SearchHits:
        """The best ``k`` (1 to 1000) hits of a hybrid search of turns, sessions, facts or
        topics, best first, with their score components. Records still waiting for their
        vectors are ranked by their words (``partial``, ``pending``) unless ``wait``; None:
        the memory's own default (in process, wait unless a background indexer runs; a
        server runs one)."""
        ...

    def context(self, query: str, scope: ScopeLike, *, budget: int = 1000) -> Context:
        """The ``<memory>`` block for ``query`` within ``budget`` tokens (``.text``), and why
        each item is in or was cut (``.explain()``)."""
        ...

    def wake_up(self, scope: ScopeLike, *, budget: int = 800) -> WakeUp:
        """The ``<memory>`` block to start a session with: the identity, the safety facts,
        the profile, the essentials and the most important current facts."""
        ...

    def recall(self, topic: str, scope: ScopeLike, *, budget: int = 1200) -> Recall:
        """What memory holds about a topic: its documents (by name, else by meaning) and
        facts."""
        ...

    def forget(self, item_id: str, scope: ScopeLike) -> DeleteReport:
        """Forget an episode, fact or document on request, with everything derived from it,
        in every copy. An id already forgotten, or never held, is :class:`NotFoundError`."""
        ...

    def add_fact(
        self,
        text: str,
        scope: ScopeLike,
        *,
        category: Category | str = Category.OTHER,
        confidence: float = 1.0,
        importance: float = 0.5,
        topic: str | None = None,
        sources: Sequence[str] = (),
        when: When | Mapping[str, Any] | None = None,
        slot: str | None = None,
        value: str | None = None,
    ) -> Fact:
        """File a fact citing the turns ``sources`` (none: its own words are stored as a
        turn and cited). ``when`` is the time it speaks of, ``slot`` and ``value`` the state
        it sets; a fact of the same subject and slot with another value is superseded."""
        ...

    def facts(
        self,
        scope: ScopeLike,
        *,
        category: str | None = None,
        topic: str | None = None,
        valid: Validity = "current",
        after: str | None = None,
        limit: int = 100,
        slot: str | None = None,
        slot_kind: str | None = None,
    ) -> list[FactView]:
        """Up to ``limit`` (1 to 10,000) of the scope's facts in id order after the fact id
        ``after``, keeping to a category, topic, validity (``current``, ``superseded``,
        ``all``), slot or kind of slot; each with the text of the fact that superseded it."""
        ...

    def get(self, item_id: str, scope: ScopeLike) -> Record:
        """The episode, fact or document with this id, if the scope holds it."""
        ...

    def doc(self, key: str, scope: ScopeLike) -> tuple[CuratedDocument, int]:
        """A curated document (``essentials`` or a topic's key) and its version (an empty
        document at version 0 when there is none yet)."""
        ...

    def apply_doc(
        self, key: str, scope: ScopeLike, ops: Sequence[Operation], *, expected_version: int
    ) -> tuple[CuratedDocument, int]:
        """Apply a batch of edits atomically against ``expected_version`` (compare-and-swap:
        a stale version is :class:`ConflictError` and writes nothing); the document as stored
        and its new version."""
        ...

    def close(self) -> None:
        """Release what the memory holds (the store, or the connections to the server)."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc_info: object) -> None: ...

    # last: a method named ``list`` would shadow the type in the annotations after it
    def list(
        self,
        scope: ScopeLike,
        kind: ListKind = "episode",
        *,
        limit: int = 100,
        after: str | None = None,
    ) -> Sequence[Record]:
        """Up to ``limit`` (1 to 10,000) of the scope's records of one kind (``episode``,
        ``fact``, ``document``) in id order, after the id ``after``."""
        ...


if TYPE_CHECKING:  # checked by mypy: the facade is an AgentMemory

    def _embedded(memory: Memory) -> AgentMemory:
        return memory
