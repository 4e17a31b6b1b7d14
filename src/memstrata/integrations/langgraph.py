"""A LangGraph ``BaseStore`` backed by memstrata: ``MemstrataStore(memory)``.

Needs ``langgraph`` (``pip install memstrata[langgraph]``); nothing else in memstrata imports
this module.

**Namespaces and scopes.** The label at position ``user_at`` (default 0) of a namespace is the
memstrata user, the label after it (if any) the user's thread::

    ("alice",)                     -> Scope("alice")
    ("alice", "memories")          -> Scope("alice", thread="memories")
    ("alice", "t1", "prefs")       -> Scope("alice", thread="t1"), the rest kept with the item
    ("memories", "alice")          -> with user_at=1: Scope("alice")

The whole namespace is kept with each item, so namespaces round-trip exactly, and isolation
between users is memstrata's own (a search in one user's namespaces never reads another's).
Labels must also be valid scope parts (1-128 characters, no slashes or control characters).

**Items.** Each item is one episode of surface ``langgraph`` in its scope, in a session of its
own (``lg:`` and a digest of namespace and key). The value is kept as JSON in the episode's
metadata and comes back exactly; the episode's text, which memstrata indexes and searches
(lexical and dense) and curation reads, is the text at the item's index fields (``index`` of
the put, else the store's ``index_fields``, else every string in the value). A put with
``index=False`` keeps the value but is left out of searches with a query. Episodes are
verbatim, so a put over an existing key stores a new episode and then deletes the old one
(reason ``superseded``, with the copies memstrata derived from it); a delete deletes it
(reason ``user-request``).

**Batches** follow LangGraph's in-memory store: reads (get, search, list) see the store as it
was before the batch, then the batch's writes apply, the last write of a key winning. Searches
with a ``query`` use memstrata's hybrid search (its scores are the fused scores; at most
1,000 hits per scope are considered); without one, items come most recently updated first,
read from every item under the prefix (about 0.3 ms an item). ``filter`` matches values as
LangGraph does (equality, nested mappings, ``$eq $ne $gt $gte $lt $lte``). ``abatch`` runs
``batch`` in a worker thread. TTLs are not supported.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from memstrata.api import Memory
from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.model import DeleteReason, Episode, EpisodeFilter, Role, Scope, SearchFilter

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        get_text_at_path,
        tokenize_path,
    )
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "memstrata.integrations.langgraph needs langgraph: pip install 'memstrata[langgraph]'"
    ) from exc

#: the surface of the episodes that hold LangGraph items
SURFACE: Final = "langgraph"
#: the key under which an episode's metadata holds the item
META: Final = "langgraph"
#: episodes read per page when a scope is walked
PAGE: Final = 1000
#: the most hits one memstrata search is asked for
MAX_HITS: Final = 1000


@dataclass(frozen=True, slots=True)
class _Stored:
    """An item as memstrata holds it: its episode and what the metadata says."""

    episode: Episode
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    indexed: bool

    def item(self) -> Item:
        return Item(
            value=self.value,
            key=self.key,
            namespace=self.namespace,
            created_at=self.created_at,
            updated_at=self.episode.time,
        )

    def search_item(self, score: float | None = None) -> SearchItem:
        return SearchItem(
            namespace=self.namespace,
            key=self.key,
            value=self.value,
            created_at=self.created_at,
            updated_at=self.episode.time,
            score=score,
        )


def session_of(namespace: tuple[str, ...], key: str) -> str:
    """The session id of the episode that holds ``key`` in ``namespace``."""
    digest = hashlib.sha256(json.dumps([list(namespace), key]).encode("utf-8")).hexdigest()
    return f"lg:{digest[:40]}"


class MemstrataStore(BaseStore):
    """LangGraph's long-term memory store, kept in a memstrata :class:`Memory`.

    ``user_at`` is the position of the user's label in a namespace; ``index_fields`` the
    JSON paths (LangGraph's syntax: ``"text"``, ``"a.b"``, ``"items[*].name"``) whose text is
    searched, by default every string in the value.
    """

    supports_ttl = False

    def __init__(
        self, memory: Memory, *, user_at: int = 0, index_fields: Sequence[str] | None = None
    ) -> None:
        if isinstance(user_at, bool) or not isinstance(user_at, int) or user_at < 0:
            raise InvalidInputError(f"user_at is a position in a namespace, not {user_at!r}")
        self.memory = memory
        self.user_at = user_at
        self.index_fields = list(index_fields) if index_fields is not None else None

    # --- BaseStore -------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results: list[Result] = []
        writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                self._check_put(op)
                writes[(tuple(op.namespace), op.key)] = op
                results.append(None)
            else:
                raise InvalidInputError(f"unknown store operation {type(op).__name__}")
        for op in writes.values():
            self._put(op)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    # --- namespaces and scopes -------------------------------------------------------------

    def _scope(self, namespace: Sequence[str]) -> Scope:
        """The scope of a namespace long enough to name its user (and maybe its thread)."""
        at = self.user_at
        try:
            if len(namespace) > at + 1:
                return Scope(namespace[at], namespace[at + 1])
            return Scope(namespace[at])
        except InvalidInputError as exc:
            raise InvalidNamespaceError(f"namespace {tuple(namespace)}: {exc}") from None

    def _check_namespace(self, namespace: tuple[str, ...]) -> None:
        if len(namespace) <= self.user_at:
            raise InvalidNamespaceError(
                f"namespace {namespace} has no label at position {self.user_at} to name its "
                "memstrata user"
            )
        self._scope(namespace)

    def _scopes(self, prefix: Sequence[str]) -> list[Scope]:
        """The scopes that hold every namespace starting with ``prefix``."""
        if len(prefix) > self.user_at:
            try:
                return [self._scope(prefix)]
            except InvalidNamespaceError:
                return []  # no item can live under a label no scope takes
        return [Scope(user) for user in self._users()]

    def _users(self) -> Iterator[str]:
        """Every user the memory holds, a page at a time."""
        after: str | None = None
        while True:
            page = self.memory.users(after=after, limit=PAGE)
            yield from (summary.user for summary in page)
            if len(page) < PAGE:
                return
            after = page[-1].user

    # --- reading ---------------------------------------------------------------------------

    def _stored(self, episode: Episode) -> _Stored | None:
        meta = episode.metadata.get(META)
        if not isinstance(meta, Mapping):
            return None
        namespace, key, value = meta.get("namespace"), meta.get("key"), meta.get("value")
        if not (isinstance(namespace, list) and isinstance(key, str) and isinstance(value, dict)):
            return None
        created = meta.get("created_at")
        return _Stored(
            episode=episode,
            namespace=tuple(str(label) for label in namespace),
            key=key,
            value=value,
            created_at=datetime.fromisoformat(created)
            if isinstance(created, str)
            else episode.time,
            indexed=meta.get("indexed") is not False,
        )

    def _episodes(self, scope: Scope, session: str | None = None) -> Iterator[Episode]:
        """Every LangGraph episode of ``scope`` (of one session), in id order."""
        wanted = EpisodeFilter(surface=SURFACE, session_id=session)
        after: str | None = None
        while True:
            page = self.memory.list(
                scope, "episode", limit=PAGE, after=after, episode_filter=wanted
            )
            for record in page:
                if isinstance(record, Episode):
                    yield record
            if len(page) < PAGE:
                return
            after = page[-1].id

    def _find(self, namespace: tuple[str, ...], key: str) -> list[_Stored]:
        """The episodes holding ``key`` in ``namespace``, newest last (one, but for a put
        that stopped between storing the new one and deleting the old)."""
        found = []
        for episode in self._episodes(self._scope(namespace), session_of(namespace, key)):
            stored = self._stored(episode)
            if stored is not None and stored.namespace == namespace and stored.key == key:
                found.append(stored)
        return found

    def _get(self, op: GetOp) -> Item | None:
        namespace = tuple(op.namespace)
        self._check_namespace(namespace)
        found = self._find(namespace, op.key)
        return found[-1].item() if found else None

    def _items(self, prefix: tuple[str, ...]) -> Iterator[_Stored]:
        for scope in self._scopes(prefix):
            latest: dict[tuple[tuple[str, ...], str], _Stored] = {}
            for episode in self._episodes(scope):
                stored = self._stored(episode)
                if stored is not None and stored.namespace[: len(prefix)] == prefix:
                    latest[(stored.namespace, stored.key)] = stored
            yield from latest.values()

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        if op.query and op.query.strip():
            return self._query_search(op, prefix)
        wanted = [s for s in self._items(prefix) if not op.filter or _matches(s.value, op.filter)]
        wanted.sort(key=lambda s: (s.episode.time, s.episode.id), reverse=True)
        return [s.search_item() for s in wanted[op.offset : op.offset + op.limit]]

    def _query_search(self, op: SearchOp, prefix: tuple[str, ...]) -> list[SearchItem]:
        """Memstrata's hybrid search in each scope under ``prefix``, asked for more hits
        while the prefix and the filter leave too few."""
        query, wanted = str(op.query), op.offset + op.limit
        scored: dict[tuple[tuple[str, ...], str], tuple[float, _Stored]] = {}
        for scope in self._scopes(prefix):
            k = min(MAX_HITS, max(50, 4 * wanted))
            while True:
                hits = self.memory.search(query, scope, k=k, filters=SearchFilter(surface=SURFACE))
                found = [
                    (hit.score, stored)
                    for hit in hits
                    if (stored := self._hit(hit.id, hit.scope)) is not None
                    and stored.indexed
                    and stored.namespace[: len(prefix)] == prefix
                    and (not op.filter or _matches(stored.value, op.filter))
                ]
                if len(found) >= wanted or len(hits) < k or k >= MAX_HITS:
                    break
                k = min(MAX_HITS, 4 * k)
            for score, stored in found:  # one item per key: the newest episode of it
                key = (stored.namespace, stored.key)
                if key not in scored or scored[key][1].episode.id < stored.episode.id:
                    scored[key] = (score, stored)
        ranked = sorted(scored.values(), key=lambda pair: pair[0], reverse=True)
        return [s.search_item(score) for score, s in ranked[op.offset : op.offset + op.limit]]

    def _hit(self, episode_id: str, scope: Scope) -> _Stored | None:
        try:
            record = self.memory.get(episode_id, scope)
        except NotFoundError:  # deleted since the index saw it
            return None
        return self._stored(record) if isinstance(record, Episode) else None

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefix: tuple[str, ...] = ()
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix" and "*" not in condition.path:
                prefix = tuple(condition.path)
        found = {
            s.namespace
            for s in self._items(prefix)
            if all(_namespace_matches(c, s.namespace) for c in op.match_conditions or ())
        }
        if op.max_depth is not None:
            found = {ns[: op.max_depth] for ns in found}
        return sorted(found)[op.offset : op.offset + op.limit]

    # --- writing ---------------------------------------------------------------------------

    def _check_put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        if not namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        for label in namespace:
            if not isinstance(label, str) or not label or "." in label:
                raise InvalidNamespaceError(
                    f"namespace labels are non-empty strings without periods: {namespace}"
                )
        if namespace[0] == "langgraph":
            raise InvalidNamespaceError(
                f'Root label for namespace cannot be "langgraph": {namespace}'
            )
        self._check_namespace(namespace)
        if not isinstance(op.key, str):
            raise InvalidInputError(f"a key is a string, not {type(op.key).__name__}")
        if op.value is not None:
            if not isinstance(op.value, dict):
                raise InvalidInputError(f"a value is a dict, not {type(op.value).__name__}")
            try:
                json.dumps(op.value, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(f"the value of {op.key!r} is not JSON: {exc}") from None
            # every put of a batch is checked before any is stored
            self.memory.check_size(
                self._text(op.key, op.value, op.index), f"the text of {op.key!r}"
            )

    def _put(self, op: PutOp) -> None:
        namespace = tuple(op.namespace)
        scope = self._scope(namespace)
        old = self._find(namespace, op.key)
        if op.value is not None:
            created = old[0].created_at if old else self.memory.clock.now()
            value = json.loads(json.dumps(op.value))  # a copy that owes nothing to the caller
            self.memory.remember(
                {
                    "text": self._text(op.key, value, op.index),
                    "role": Role.OTHER.value,
                    "speaker": "langgraph",
                    "metadata": {
                        META: {
                            "namespace": list(namespace),
                            "key": op.key,
                            "value": value,
                            "created_at": created.isoformat(),
                            "indexed": op.index is not False,
                        }
                    },
                },
                scope,
                surface=SURFACE,
                session_id=session_of(namespace, op.key),
            )
        reason = DeleteReason.USER_REQUEST if op.value is None else DeleteReason.SUPERSEDED
        for stored in old:
            with contextlib.suppress(NotFoundError):  # deleted meanwhile by another writer
                self.memory.delete(stored.episode.id, stored.episode.scope, reason=reason)

    def _text(self, key: str, value: dict[str, Any], index: Any) -> str:
        """The text memstrata indexes for a value."""
        paths = self.index_fields if index is None else index
        if index is False:
            texts: list[str] = []
        elif paths is None:
            texts = list(_strings(value))
        else:
            texts = [t for path in paths for t in get_text_at_path(value, tokenize_path(path))]
        text = "\n".join(t for t in texts if t.strip())
        return text or f"{key}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}"


def _strings(value: object) -> Iterator[str]:
    """Every string in a JSON value, depth first (keys of mappings left out)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    labels = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    if condition.match_type not in ("prefix", "suffix"):
        raise InvalidInputError(f"unknown namespace match type {condition.match_type!r}")
    if not path:
        return True
    return all(p == "*" or p == label for p, label in zip(path, labels, strict=True))


def _matches(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return all(_compare(value.get(key), expected) for key, expected in wanted.items())


def _compare(actual: Any, expected: Any) -> bool:
    """LangGraph's filter semantics: equality, nested mappings, lists element by element,
    and the operators ``$eq $ne $gt $gte $lt $lte``."""
    if isinstance(expected, Mapping):
        if any(str(k).startswith("$") for k in expected):
            return all(_operator(actual, str(k), v) for k, v in expected.items())
        if not isinstance(actual, Mapping):
            return False
        return all(_compare(actual.get(k), v) for k, v in expected.items())
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected)
            and all(_compare(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


def _operator(actual: Any, name: str, operand: Any) -> bool:
    if name == "$eq":
        return bool(actual == operand)
    if name == "$ne":
        return bool(actual != operand)
    if name not in ("$gt", "$gte", "$lt", "$lte"):
        raise InvalidInputError(f"unknown filter operator {name!r}")
    try:
        left, right = float(actual), float(operand)
    except (TypeError, ValueError):
        return False
    return {
        "$gt": left > right,
        "$gte": left >= right,
        "$lt": left < right,
        "$lte": left <= right,
    }[name]
