"""Ports: the contracts adapters implement. Protocols only; no I/O here.

Each port has one shared test suite (``tests/contract``) that every implementation passes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

from memstrata.model import (
    ApiKey,
    Change,
    Document,
    DocumentKind,
    Episode,
    EpisodeFilter,
    Erasure,
    ErasureRecord,
    Extraction,
    Fact,
    FactFilter,
    ItemEvent,
    ItemVersion,
    JsonValue,
    Scope,
    ScopeSummary,
    SessionSummary,
    Site,
    Stats,
)

#: how long an erasure waits for a data directory not seen since (see
#: :meth:`RecordStore.finish_erasure`); one away longer erases all its derived copies on return
SITE_WAIT: Final = timedelta(hours=24)
#: how far the clocks of the machines sharing a store may differ
SITE_CLOCK_MARGIN: Final = timedelta(minutes=10)


class Clock(Protocol):
    """Where time comes from; tests pass a fixed clock."""

    def now(self) -> datetime:
        """The current time, aware, in UTC."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


@runtime_checkable
class RecordStore(Protocol):
    """The record store: episodes, facts, versioned documents and item history.

    Contract (checked by ``tests/contract/test_store_contract.py``):

    * **Isolation.** Every method takes the caller's scope and applies it inside the
      store: reads return only records the scope contains (see :meth:`Scope.contains`);
      an id from another scope behaves exactly like a missing id (:class:`NotFoundError`);
      writing a record that the scope does not contain raises :class:`InvalidInputError`.
    * **Atomicity.** Each call is one transaction: a batch is stored whole or not at all.
    * **Episodes are immutable**; they can be archived or deleted, never edited.
    * **Versioned writes** (facts, documents) are compare-and-swap: the caller names the
      version it read; if the stored one differs the write raises :class:`ConflictError`
      and changes nothing. A successful write stores ``version + 1``.
    * **History.** Every create, update, supersede and delete of a fact or document adds an
      :class:`ItemVersion`. Deleting removes the content of earlier versions and leaves a
      delete entry with the reason. History is kept per scope: the same item id in two
      users' scopes has two histories, and no write or erasure in one touches the other.
    * **Erasure.** :meth:`erase` makes every store change of one deletion on request in one
      transaction and journals what is left to erase outside the store. Each data directory
      using the store (:meth:`enrol_site`) erases its own copies and says so; the entry keeps
      the erased texts until every data directory seen lately has (:meth:`finish_erasure`).
    * **Migrations** are named, recorded in the database and applied when the store opens.
    * Listings are ordered by id (creation order) and paged with ``after`` (an id).
    * **Change feed.** Every write logs the ids it wrote or deleted, per user, in the same
      transaction (:meth:`changes_since`); failed writes log nothing.
    * **API keys** are not records of a user (not scoped, not in the change feed). The store
      keeps what it is given, a digest of each key and the key's public fields, never a key;
      every process on the same store sees the same keys and revocations at once.
    """

    # lifecycle -----------------------------------------------------------------
    def close(self) -> None: ...

    def applied_migrations(self) -> list[str]: ...

    # episodes ------------------------------------------------------------------
    def add_episodes(self, scope: Scope, episodes: Sequence[Episode]) -> None: ...

    def get_episode(self, scope: Scope, episode_id: str) -> Episode: ...

    def get_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> list[Episode]:
        """The episodes among ``episode_ids`` that exist in the scope, in id order."""
        ...

    def existing_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> set[str]:
        """Those of ``episode_ids`` stored as episodes in the scope (their ids only: an
        import planning what is new reads no texts)."""
        ...

    def list_episodes(
        self,
        scope: Scope,
        filters: EpisodeFilter | None = None,
        *,
        after: str | None = None,
        limit: int = 100,
    ) -> list[Episode]: ...

    def iter_episodes(
        self, scope: Scope, filters: EpisodeFilter | None = None
    ) -> Iterator[Episode]:
        """Every matching episode in id order, read in pages."""
        ...

    def archive_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> int: ...

    def delete_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> int:
        """Delete episodes and their citations; returns how many existed."""
        ...

    # facts ---------------------------------------------------------------------
    def add_fact(self, scope: Scope, fact: Fact) -> Fact: ...

    def get_fact(self, scope: Scope, fact_id: str) -> Fact: ...

    def get_facts(self, scope: Scope, fact_ids: Sequence[str]) -> list[Fact]:
        """The facts among ``fact_ids`` that exist in the scope, in id order."""
        ...

    def update_fact(
        self, scope: Scope, fact: Fact, *, expected_version: int, op: str = "update"
    ) -> Fact:
        """Store ``fact`` (same id) if the stored version is ``expected_version``."""
        ...

    def list_facts(
        self,
        scope: Scope,
        filters: FactFilter | None = None,
        *,
        after: str | None = None,
        limit: int = 100,
    ) -> list[Fact]: ...

    def iter_facts(
        self, scope: Scope, filters: FactFilter | None = None, *, after: str | None = None
    ) -> Iterator[Fact]:
        """Every matching fact (with an id after ``after``) in id order, read in pages."""
        ...

    def delete_fact(self, scope: Scope, fact_id: str, *, reason: str) -> None: ...

    def facts_citing(self, scope: Scope, episode_ids: Sequence[str]) -> list[Fact]:
        """Facts in the scope that cite any of ``episode_ids``."""
        ...

    # documents -----------------------------------------------------------------
    def get_document(self, scope: Scope, kind: DocumentKind, key: str) -> Document | None:
        """The document stored at exactly this scope, kind and key, if any."""
        ...

    def get_document_by_id(self, scope: Scope, document_id: str) -> Document: ...

    def put_document(
        self,
        scope: Scope,
        kind: DocumentKind,
        key: str,
        content: Mapping[str, JsonValue],
        *,
        expected_version: int,
        item_events: Sequence[ItemEvent] = (),
    ) -> Document:
        """Create (``expected_version=0``) or replace a document by compare-and-swap.

        ``item_events`` (changes to the document's bullets) join the history of each item in
        the same transaction: all are stored, or none. A delete with reason ``user-request``
        erases the content of the item's earlier entries."""
        ...

    def list_documents(self, scope: Scope, kind: DocumentKind | None = None) -> list[Document]: ...

    def delete_document(self, scope: Scope, document_id: str, *, reason: str) -> None: ...

    # deletion on request -------------------------------------------------------
    def erase(self, scope: Scope, erasure: Erasure, *, dry_run: bool = False) -> ErasureRecord:
        """Apply every change of ``erasure`` (see :class:`Erasure`) in one transaction,
        together with its journal entry (not done), and return that entry. With ``dry_run``
        the same transaction is made and rolled back: the entry says what it would erase
        (ids, counts, texts), and nothing changes, the change feed and journal included.

        Ids it names must exist in ``scope`` (else :class:`NotFoundError`); a document it
        rewrites must be at the version it names (else :class:`ConflictError`); either way
        nothing changes. History writes and erasures touch only entries of the item's own
        scope: an id used in another user's scope keeps its history."""
        ...

    def settled_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> set[str]:
        """Those of ``episode_ids`` whose facts an erasure deleted on purpose (its
        ``settled``): extraction leaves them alone, so a deleted fact does not come back."""
        ...

    def erased(self, scope: Scope, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` (episodes, facts, bullets) that an erasure of the scope's user
        removed, by deletion or by cascade: an import does not bring them back."""
        ...

    def pending_erasures(self) -> list[ErasureRecord]:
        """Journal entries not yet done, oldest first (for operators; not scoped)."""
        ...

    def find_erasure(self, scope: Scope, target: str) -> ErasureRecord | None:
        """The latest journal entry for ``target`` (an item id or a scope) in the scope."""
        ...

    def enrol_site(
        self, site: str, label: str, *, swept: datetime | None = None, returning: bool = False
    ) -> bool:
        """Note that the data directory ``site`` (a stable id; ``label`` says where it is,
        for operators) uses this store now. It holds copies outside the store (raw trace
        lines, saved indexes, cached vectors), so every erasure made from now on waits for it
        (:meth:`finish_erasure`) while it is seen within the wait. ``swept``: it has applied
        every erasure made before then (so :meth:`erasures_for_site` looks no further back).
        ``returning``: it already holds copies from before now; if the store does not know it
        (retired while still in use), :meth:`erasures_for_site` gives it every entry of the
        journal it has not applied, not only those made since. Whether the store did not know
        it before. Called on open and on each sweep of the journal."""
        ...

    def erasures_for_site(self, site: str) -> list[ErasureRecord]:
        """The journal entries the data directory ``site`` has still to apply: those made
        since it was enrolled, or since the time its last complete sweep gave, less
        :data:`SITE_CLOCK_MARGIN` (for clocks that differ), and every entry not done made
        since it was enrolled (which waits for it), that it has not finished, oldest first.
        An entry done meanwhile (the site was away longer than the wait) has no texts left."""
        ...

    def sites(self) -> list[Site]:
        """Every enrolled data directory, by id (for operators)."""
        ...

    def retire_site(self, site: str) -> bool:
        """Stop waiting for the data directory ``site`` (a machine taken out of service, a
        directory deleted): it is no longer enrolled; the erasures that waited only for it are
        done at the next :meth:`finish_erasure`. Whether it was enrolled. Should it be used
        again, it enrols anew, returning (see :meth:`enrol_site`)."""
        ...

    def finish_erasure(
        self, erasure_id: str, site: str | None = None, *, wait: timedelta = SITE_WAIT
    ) -> int:
        """Record that the data directory ``site`` (if any) erased its copies of a journal
        entry; then, when every data directory enrolled before the erasure and seen within
        ``wait`` has, mark the entry done and drop the texts it kept. How many data
        directories it still waits for (0: done). An unknown id is :class:`NotFoundError`."""
        ...

    # history and counts --------------------------------------------------------
    def history(self, scope: Scope, item_id: str) -> list[ItemVersion]: ...

    def stats(self, scope: Scope) -> Stats: ...

    def generation(self, user: str) -> int:
        """The ``seq`` of the user's latest change (0 when none): it grows with every write
        that changes a record of the user, in any process, and never otherwise."""
        ...

    def changes_since(self, user: str, after: int, *, limit: int = 10_000) -> list[Change]:
        """The user's change feed after ``seq`` ``after``, oldest first. Derived indexes
        replay it to stay in step with writes made by any process."""
        ...

    def restore(
        self,
        scope: Scope,
        episodes: Sequence[Episode],
        facts: Sequence[Fact],
        documents: Sequence[Document],
    ) -> None:
        """Insert exported records exactly as they were (ids, versions, times) into a scope
        that holds none, in one transaction. Each fact and document starts its history here
        with a ``create`` entry whose reason is ``restored``."""
        ...

    def users(self) -> list[str]:
        """Every user with at least one record (for operators; not scoped)."""
        ...

    # API keys ------------------------------------------------------------------
    def add_key(self, key: ApiKey, digest: str, *, only_if_none: bool = False) -> bool:
        """Store an active ``key`` with the ``digest`` of its secret; True when stored. With
        ``only_if_none`` it is stored only if no active key exists, checked in the same
        transaction (the first start of several servers makes one key). A key id or digest
        already stored is :class:`InvalidInputError`."""
        ...

    def find_keys(self, prefix: str) -> list[tuple[ApiKey, str]]:
        """Every key (active or revoked) with this public ``prefix``, with its digest, in id
        order: the candidates a presented key is compared with."""
        ...

    def list_keys(self) -> list[ApiKey]:
        """Every key, revoked ones included, in id (creation) order."""
        ...

    def revoke_key(self, key_id: str, at: datetime) -> ApiKey:
        """Revoke a key at ``at`` (a key already revoked keeps its first time) and return it;
        :class:`NotFoundError` for an unknown id."""
        ...

    def record_counts(self) -> dict[str, int]:
        """Records of every user by kind (for operators' metrics; not scoped): ``episode``,
        ``archived_episode``, ``fact`` (current), ``superseded_fact``, and each document kind
        held (``identity``, ``profile``, ``essentials``, ``topic``...). Cheap: counts only."""
        ...


@runtime_checkable
class ErasingStore(Protocol):
    """A record store whose files can keep deleted text (a write-ahead log, free pages) and
    that can prove they do not; the facade asks after every deletion on request."""

    def residue(self, texts: Collection[str]) -> list[str]:
        """Make deleted rows unrecoverable from the files (checkpoint the log), then name each
        file still holding one of ``texts`` outside any stored row; empty when none does."""
        ...


@runtime_checkable
class LockingStore(Protocol):
    """A record store that holds named locks across every process using it
    (:mod:`memstrata.store.named_locks`): the facade holds one per user while it curates, so
    two processes never extract the same turns at once."""

    def hold(self, name: str, *, wait_s: float) -> AbstractContextManager[None]:
        """Hold the lock ``name`` for the ``with`` block, whichever process asks; wait up to
        ``wait_s`` seconds for it, then raise :class:`memstrata.errors.BusyError`. A process
        that ends (even killed) releases what it held."""
        ...


@runtime_checkable
class ImpatientStore(Protocol):
    """A record store whose writers queue for one lock (SQLite's single writer), so a write
    may wait long behind another process's: the facade's bookkeeping that can wait for a
    later turn (a data directory's enrolment and its journal notes on opening) asks it not
    to wait, and opening for reads never waits for a writer."""

    def without_waiting(self) -> AbstractContextManager[None]:
        """Writes this thread begins inside the ``with`` block raise
        :class:`memstrata.errors.BusyError` at once when another writer holds the store,
        instead of waiting for it; reads are unaffected."""
        ...


@runtime_checkable
class SizingStore(Protocol):
    """A record store that can say how much text a scope holds without reading it out;
    the facade reads the records for a store that cannot."""

    def text_bytes(self, scope: Scope) -> dict[str, int]:
        """UTF-8 bytes of the scope's stored text by kind: ``episode`` (turn texts, archived
        ones too), ``fact`` (fact texts), and each document kind held (its JSON content as
        stored, ``json.dumps(content, ensure_ascii=False)``)."""
        ...


@runtime_checkable
class SummarizingStore(Protocol):
    """A record store that can summarise a user's scopes and a scope's sessions in place
    (aggregates), so browsing does not read every turn; the facade reads the records for a
    store that cannot. Both answer in no set order."""

    def scope_summaries(self, user: str) -> list[ScopeSummary]:
        """One summary per thread and agent of ``user`` holding any record."""
        ...

    def session_summaries(self, scope: Scope) -> list[SessionSummary]:
        """One summary per session of the scope's turns."""
        ...


class TraceSink(Protocol):
    """The raw trace: an append-only log of capture events (deletion on request excepted).

    ``append`` never raises into the caller and never interleaves lines written
    concurrently (threads or processes); it reports failures through logging.
    """

    def append(self, surface: str, events: Sequence[Mapping[str, JsonValue]]) -> bool:
        """Append events; True when every line was written."""
        ...

    def redact(self, ids: Collection[str], reason: str, texts: Collection[str] = ()) -> int:
        """Erase the events of the items ``ids`` (deletion on request), leaving tombstones
        that keep only time, surface, id and ``reason``; the number erased. ``texts`` are the
        items' texts, erased too from damaged lines where no event can be read. Unlike
        ``append``, raises :class:`OSError` when it cannot: a deletion must not leave a copy
        silently."""
        ...

    def residue(self, ids: Collection[str], texts: Collection[str] = ()) -> list[str]:
        """Where a copy of the items ``ids`` or of ``texts`` is still left (one entry per
        place, naming the file); empty once :meth:`redact` has erased them all."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns text into dense vectors.

    Contract (checked by ``tests/contract/test_embedder_contract.py``):

    * ``name`` identifies the model and its settings: equal names give equal vectors, so it is
      the cache key together with the text's hash.
    * ``embed_documents`` returns a float32 array of shape ``(len(texts), dim)``; an empty
      input gives shape ``(0, dim)``. ``embed_query`` returns shape ``(dim,)``. Queries and
      documents may be encoded differently (e5 prefixes), but live in one space.
    * Every vector is L2-normalised, so a dot product is the cosine.
    * Deterministic: the same text gives the same vector, alone or in a batch.
    * English and Chinese (and mixed) text are accepted; empty strings are accepted.
    * Provider failures raise :class:`memstrata.errors.EmbeddingError`.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]: ...

    def embed_query(self, text: str) -> NDArray[np.float32]: ...


@runtime_checkable
class ForgettingEmbedder(Embedder, Protocol):
    """An :class:`Embedder` that keeps derived copies (a cache) and can drop those of
    ``texts``: deleting a record forgets the vectors computed from it."""

    def forget(self, texts: Sequence[str]) -> None: ...


@runtime_checkable
class CachingEmbedder(Embedder, Protocol):
    """An :class:`Embedder` that keeps the vectors it computed and can hand back those it
    has without running its model: an index fills what is cached at once and leaves only the
    rest to a background indexer."""

    def cached_documents(
        self, texts: Sequence[str]
    ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """Vectors of ``texts`` as :meth:`embed_documents` would give them, for those already
        computed, and which rows were found (rows not found are zero)."""
        ...


QueryKind = Literal["question", "dialogue"]
"""What a search query is: a plain question (or keywords), or a dialogue (``Name: utterance``
lines, the conversation so far). An embedder may encode the two differently."""

QUERY_KINDS: tuple[QueryKind, ...] = ("question", "dialogue")


@runtime_checkable
class QueryBatchEmbedder(Embedder, Protocol):
    """An :class:`Embedder` that encodes several queries in one call and may encode them by
    their kind (a blend of models weights its models per kind). Optional: callers go through
    :func:`memstrata.embed.base.embed_queries`, which falls back to ``embed_query``.

    ``embed_queries(texts, kind)`` returns shape ``(len(texts), dim)``, unit rows, and for
    kind ``"question"`` the same vectors as ``embed_query``.
    """

    def embed_queries(self, texts: Sequence[str], kind: QueryKind) -> NDArray[np.float32]: ...


ChatMessage = Mapping[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": ...}``."""


@runtime_checkable
class LLM(Protocol):
    """A chat model that answers with one JSON object.

    Contract (checked by ``tests/unit/test_llm.py`` against a local fake server):

    * :meth:`complete_json` sends the messages and returns the parsed JSON object of the reply.
    * A reply that is not a JSON object raises :class:`memstrata.errors.LLMReplyError` (callers
      retry once, then record a failed step); transport and provider failures raise
      :class:`memstrata.errors.LLMError`. Nothing else escapes.
    * ``name`` identifies the model for run metadata; it never contains a secret.
    """

    @property
    def name(self) -> str: ...

    def complete_json(
        self, messages: Sequence[ChatMessage], *, temperature: float = 0.0
    ) -> dict[str, JsonValue]: ...


@runtime_checkable
class Extractor(Protocol):
    """Turns episodes into candidate facts.

    Contract: ``extract`` never raises for bad model output or odd text; it returns what it
    could extract and lists its failures. Every candidate cites at least one of the episodes
    it was given (by id). It does no I/O other than its model calls and writes nothing.
    """

    @property
    def name(self) -> str: ...

    def extract(self, episodes: Sequence[Episode]) -> Extraction: ...
