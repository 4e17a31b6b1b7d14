"""Ranking in one user's index (:class:`~memstrata.index.scope_index.UserIndex`, which keeps
it current): the mask of a scope and its filters, the candidates worth scoring in a large scope,
the lexical and dense scores fused into one, the bonuses of a speaker or a date the query
names, and the best hits, turn by turn, bullet by bullet, or grouped in sessions and topic
documents; and the score a text outside the index would have as one more entry.

A :class:`Ranker` is a view of one index, made for a search and holding nothing of its own:
``Ranker(index).search(query, scope, k=10, granularity=..., filters=...)``. Every search reads
the index under its shared lock, so it ranks the index as it was before or after a concurrent
write, never in the middle of one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Final

import numpy as np
from numpy.typing import NDArray

from memstrata.errors import InvalidInputError
from memstrata.index.catalog import KIND_BULLET, KIND_EPISODE, KIND_FACT
from memstrata.index.config import RankingConfig
from memstrata.index.dates import date_query
from memstrata.index.query import Query
from memstrata.index.scope_index import UserIndex, epoch
from memstrata.index.tokenize import tokenize
from memstrata.index.vectors import ExactVectorIndex
from memstrata.model import (
    Granularity,
    Layer,
    Scope,
    SearchFilter,
    SearchHit,
    SearchHits,
)

_KINDS: Final = {
    Granularity.TURN: KIND_EPISODE,
    Granularity.SESSION: KIND_EPISODE,
    Granularity.FACT: KIND_FACT,
    Granularity.TOPIC: KIND_BULLET,
}


@dataclass(frozen=True, slots=True)
class Ranker:
    """Searches and scores in ``index``."""

    index: UserIndex

    def mask(
        self, scope: Scope, granularity: Granularity, filters: SearchFilter
    ) -> NDArray[np.bool_]:
        """The slots of ``granularity``'s kind in ``scope`` (its thread and agent, if given)
        that ``filters`` let through."""
        c = self.index.catalog
        n = c.capacity
        kind = _KINDS[granularity]
        if filters.layer is not None and (filters.layer == Layer.ARCHIVE) == (kind == KIND_BULLET):
            raise InvalidInputError(
                f"layer {filters.layer.value} is not searched at granularity {granularity.value}:"
                " turns, sessions and facts are the L3 archive; L1 essentials and L2 topics are"
                " searched with granularity topic"
            )
        mask = c.alive[:n] & (c.kind[:n] == kind)
        if filters.layer is not None and kind == KIND_BULLET:
            mask &= c.equals("layer", filters.layer.value)
        if scope.thread is not None:
            mask &= c.equals("thread", scope.thread)
        if scope.agent is not None:
            mask &= c.equals("agent", scope.agent)
        if filters.speaker is not None:
            mask &= c.equals("speaker", filters.speaker)
        if filters.surface is not None:
            mask &= c.equals("surface", filters.surface)
        if filters.session_id is not None:
            mask &= c.equals("session_id", filters.session_id)
        if filters.category is not None:
            mask &= c.equals("category", filters.category.value)
        if filters.topic is not None:
            mask &= c.equals("topic", filters.topic)
        if filters.since is not None:
            mask &= c.time[:n] >= epoch(filters.since)
        if filters.until is not None:
            mask &= c.time[:n] < epoch(filters.until)
        if not filters.include_archived:
            mask &= ~c.archived[:n]
        if filters.current_only:
            mask &= c.current[:n]
        return np.asarray(mask, dtype=bool)

    def _candidates(
        self, query: Query, mask: NDArray[np.bool_], lexical: NDArray[np.float32], k: int
    ) -> NDArray[np.bool_] | None:
        """For a large scope, the slots worth scoring: what the approximate graphs propose for
        the query (and its lines) plus the best lexical matches. None: score everything."""
        if not any(view.approximate for view in self.index.views):
            return None
        count = self.index.config.ann_candidates
        allowed = np.flatnonzero(mask)
        if len(allowed) > count:
            allowed = allowed[np.argpartition(-lexical[allowed], count - 1)[:count]]
        found = [allowed]
        for vector in (query.vector, *query.line_vectors):
            for view in self.index.views:
                proposed = view.candidates(vector, count)
                if proposed is not None:
                    found.append(proposed)
        chosen = np.zeros(len(mask), dtype=bool)
        slots = np.concatenate(found)
        chosen[slots[slots < len(mask)]] = True
        chosen &= mask
        if int(chosen.sum()) < max(k, 50):  # filters removed most proposals: be exact
            return None
        return chosen

    def dense_scores(
        self,
        query: Query,
        mask: NDArray[np.bool_],
        slots: NDArray[np.int64] | None = None,
        extra: NDArray[np.float32] | None = None,
    ) -> NDArray[np.float32]:
        """The dense score of every slot (or of ``slots``): each view's cosines z-scored over
        ``mask`` and averaged; for a dialogue, blended with the best single line's. Entries
        still waiting for their vectors score 0, the mean, whatever the query. ``extra``:
        vectors of texts outside the index, scored after the slots (``mask`` is then as
        long as both) on the scale of the masked slots alone."""
        index = self.index
        n = index.catalog.capacity
        ready = mask[:n]
        if index.pending and index.views:
            ready = ready & index.views[0].alive(n)
        basis = None
        if extra is not None:
            basis = np.concatenate([ready, np.zeros(len(extra), dtype=bool)])
            ready = np.concatenate([ready, np.ones(len(extra), dtype=bool)])

        def views_score(vector: NDArray[np.float32]) -> NDArray[np.float32]:
            def raw(view: ExactVectorIndex) -> NDArray[np.float32]:
                found = view.scores(vector, n, slots)
                return found if extra is None else np.concatenate([found, extra @ vector])

            parts = [_normalise(raw(view), ready, "zscore", basis) for view in index.views]
            return np.asarray(np.mean(parts, axis=0), dtype=np.float32)

        dense = views_score(query.vector)
        if query.is_dialogue and index.config.line_weight > 0:
            best = np.max([views_score(v) for v in query.line_vectors], axis=0)
            w = index.config.line_weight
            dense = (1 - w) * _normalise(dense, ready, "zscore", basis) + w * _normalise(
                np.asarray(best, dtype=np.float32), ready, "zscore", basis
            )
        return dense

    def score_texts(
        self, query: Query, scope: Scope, texts: Sequence[str], granularity: Granularity
    ) -> list[float] | None:
        """The fused score each of ``texts`` (not in the index: a profile slot, say) would
        have as one more entry of ``granularity`` in ``scope``: its lexical and dense scores
        put on the scale of that population's with the text in it, each text alone, with no
        speaker or date bonus. None when the scope has no such entry."""
        if not texts:
            return []
        index = self.index
        vectors = index.embedder.embed_documents(list(texts))  # may run the model: unlocked
        with index.lock.reading():
            mask = self.mask(scope, granularity, SearchFilter())
            if not mask.any():
                return None
            n = index.catalog.capacity
            weights = query.term_weights()
            outside = [index.lexical.score_tokens(tokenize(t), weights) for t in texts]
            lexical = np.concatenate(
                [index.lexical.scores(weights, n), np.asarray(outside, np.float32)]
            )
            whole = np.concatenate([mask, np.ones(len(texts), dtype=bool)])
            basis = np.concatenate([mask, np.zeros(len(texts), dtype=bool)])
            dense = self.dense_scores(query, whole, extra=np.asarray(vectors, np.float32))
            fused = fuse(lexical, dense, whole, index.config, basis)
            return [float(x) for x in fused[n:]]

    def scores(
        self, query: Query, mask: NDArray[np.bool_], k: int = 10
    ) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.bool_]]:
        """Lexical, dense and fused scores for every slot, and the mask they were ranked over
        (fused is -inf outside it): ``mask`` itself, or its candidates in a large scope."""
        index, config = self.index, self.index.config
        n = index.catalog.capacity
        lexical = index.lexical.scores(query.term_weights(), n)
        chosen = self._candidates(query, mask, lexical, k)
        slots = None
        if chosen is not None:
            mask = chosen
            slots = np.flatnonzero(mask)
        dense = self.dense_scores(query, mask, slots)
        fused = fuse(lexical, dense, mask, config)
        if config.speaker_boost:
            for name in self._speakers_named(query.text):
                fused[index.catalog.equals("speaker", name) & mask] += config.speaker_boost
        if config.date_bonus:
            self._date_bonus(query.text, fused, mask)
        return lexical, dense, fused, mask

    def _speakers_named(self, text: str) -> list[str]:
        """The known speakers (names of two characters or more) that ``text`` names,
        case-insensitively and as whole words where a name starts or ends with a Latin letter
        or digit (Chinese names stand next to other characters: 小明说); one compiled pattern
        per set of speakers (:func:`_speaker_matcher`), built again when a new one appears."""
        pattern, by_lower = _speaker_matcher(tuple(self.index.catalog.values("speaker")))
        if pattern is None:
            return []
        found = dict.fromkeys(m.group(0) for m in pattern.finditer(text.lower()))
        return [name for lower in found for name in by_lower[lower]]

    def _date_bonus(self, text: str, fused: NDArray[np.float32], mask: NDArray[np.bool_]) -> None:
        """Raise entries dated within a date the query names (see :mod:`dates`)."""
        named = date_query(text)
        if not named:
            return
        c = self.index.catalog
        n = c.capacity
        hit = np.zeros(n, dtype=bool)
        slack = self.index.config.date_slack_days * 86_400.0
        for start, end in named.windows:
            hit |= (c.time[:n] >= start) & (c.time[:n] < end + slack)
        if named.months:
            hit |= np.isin(c.month[:n], list(named.months))
        fused[hit & mask] += self.index.config.date_bonus

    def search(
        self,
        query: Query,
        scope: Scope,
        *,
        k: int,
        granularity: Granularity,
        filters: SearchFilter,
        passages: bool = False,
    ) -> SearchHits:
        """The best ``k`` hits for ``query`` in ``scope``, read under the shared lock: the
        index as it was before or after any concurrent write, never halfway. Entries still
        waiting for their dense vectors are ranked lexically (see :meth:`dense_scores`) and
        counted in the answer's ``pending``. ``passages``: at granularity topic, one hit per
        bullet (its id, its document's key as ``topic`` and id as ``session_id``), not per
        document."""
        with self.index.lock.reading():
            mask = self.mask(scope, granularity, filters)
            if not mask.any():
                return SearchHits()
            pending = 0
            if self.index.pending and self.index.views:
                pending = int((mask & ~self.index.views[0].alive(len(mask))).sum())
            lexical, dense, fused, mask = self.scores(query, mask, k)
            if granularity == Granularity.SESSION or (
                granularity == Granularity.TOPIC and not passages
            ):
                hits = self._groups_ranked(lexical, dense, fused, mask, k, granularity)
            else:
                order = _top(fused, mask, k)
                hits = [self._hit(int(s), granularity, lexical, dense, fused) for s in order]
            return SearchHits(hits, pending=pending)

    def _id(self, slot: int) -> str:
        info = self.index.catalog.info[slot]
        assert info is not None
        return info.id

    def _hit(
        self,
        slot: int,
        granularity: Granularity,
        lexical: NDArray[np.float32],
        dense: NDArray[np.float32],
        fused: NDArray[np.float32],
    ) -> SearchHit:
        info = self.index.catalog.info[slot]
        assert info is not None
        return SearchHit(
            id=info.id,
            granularity=granularity,
            score=float(fused[slot]),
            components={
                "lexical": float(lexical[slot]),
                "dense": float(dense[slot]),
                "fused": float(fused[slot]),
            },
            text=info.text,
            scope=Scope(self.index.user, info.thread, info.agent),
            session_id=info.session_id,
            speaker=info.speaker,
            time=datetime.fromtimestamp(info.time, UTC),
            topic=info.topic,
        )

    def _groups_ranked(
        self,
        lexical: NDArray[np.float32],
        dense: NDArray[np.float32],
        fused: NDArray[np.float32],
        mask: NDArray[np.bool_],
        k: int,
        granularity: Granularity,
    ) -> list[SearchHit]:
        """Sessions (their turns) or topic documents (their bullets), each scored as the mean
        of its best ``session_top`` members."""
        codes = self.index.catalog.session_codes()
        slots = np.flatnonzero(mask)
        # Sort by session, best turn first; rank turns within their session.
        order = slots[np.lexsort((-fused[slots], codes[slots]))]
        sorted_codes = codes[order]
        starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
        sizes = np.diff(np.r_[starts, len(order)])
        group = np.repeat(np.arange(len(starts)), sizes)
        rank = np.arange(len(order)) - starts[group]
        keep = rank < max(1, self.index.config.session_top)
        totals = np.bincount(group[keep], weights=fused[order][keep], minlength=len(starts))
        counts = np.bincount(group[keep], minlength=len(starts))
        session_scores = totals / np.maximum(counts, 1)
        best_groups = np.argsort(-session_scores, kind="stable")[:k]
        ranked = [
            (float(session_scores[g]), [int(x) for x in order[starts[g] : starts[g] + sizes[g]]])
            for g in best_groups
        ]
        hits = []
        for score, members in ranked:
            head = self._hit(members[0], granularity, lexical, dense, fused)
            info = self.index.catalog.info[members[0]]
            assert info is not None
            best = tuple(self._id(m) for m in members[:5])
            if granularity == Granularity.TOPIC:
                hit = replace(head, id=str(info.session_id), session_id=None, bullets=best)
            else:
                hit = replace(
                    head, id=f"{info.thread or ''}/{info.session_id}", speaker=None, episodes=best
                )
            hits.append(replace(hit, score=score))
        return hits


#: how many sets of speakers keep their compiled pattern (a set per user searched lately)
_SPEAKER_PATTERNS: Final = 256


@lru_cache(maxsize=_SPEAKER_PATTERNS)
def _speaker_matcher(
    names: tuple[str, ...],
) -> tuple[re.Pattern[str] | None, Mapping[str, list[str]]]:
    """One pattern for the ``names`` of two characters or more (longest first), and the names
    each lowercase match stands for; no pattern when there is no such name."""
    by_lower: dict[str, list[str]] = {}
    for name in names:
        if len(name) > 1:
            by_lower.setdefault(name.lower(), []).append(name)
    alternatives = "|".join(_name_pattern(n) for n in sorted(by_lower, key=len, reverse=True))
    return (re.compile(alternatives) if alternatives else None), by_lower


def _name_pattern(name: str) -> str:
    """A regex for a lowercase ``name`` that keeps Latin names to whole words: "bob" is not
    found in "bobby", but is in "和bob说"."""
    left = r"(?<![a-z0-9])" if name[0].isascii() and name[0].isalnum() else ""
    right = r"(?![a-z0-9])" if name[-1].isascii() and name[-1].isalnum() else ""
    return f"{left}{re.escape(name)}{right}"


def _normalise(
    values: NDArray[np.float32],
    mask: NDArray[np.bool_],
    method: str,
    basis: NDArray[np.bool_] | None = None,
) -> NDArray[np.float32]:
    """``values`` on ``mask`` put on one scale (z-score or min-max) over the masked values;
    zero elsewhere. With ``basis``: each masked value over the ``basis`` values and itself,
    as one more entry (see :func:`_as_one_more`)."""
    if basis is not None:
        return _as_one_more(values, mask, method, basis)
    chosen = values[mask]
    out = np.zeros_like(values)
    if not len(chosen):
        return out
    if method == "zscore":
        std = float(chosen.std())
        out[mask] = (chosen - float(chosen.mean())) / std if std > 1e-9 else 0.0
    else:
        low, high = float(chosen.min()), float(chosen.max())
        out[mask] = (chosen - low) / (high - low) if high - low > 1e-9 else 0.0
    return out


def _as_one_more(
    values: NDArray[np.float32], mask: NDArray[np.bool_], method: str, basis: NDArray[np.bool_]
) -> NDArray[np.float32]:
    """Each masked value on the scale of the ``basis`` values with it among them (a value
    in ``basis`` is among them already): as one more entry, so its z-score, like any
    entry's, is bounded by the population's size."""
    population = values[basis].astype(np.float64)
    x = values[mask].astype(np.float64)
    own = basis[mask]  # already counted
    n = len(population) + np.where(own, 0, 1)
    out = np.zeros_like(values)
    if method == "zscore":
        total = population.sum() + np.where(own, 0.0, x)
        squares = (population**2).sum() + np.where(own, 0.0, x**2)
        mean = total / n
        std = np.sqrt(np.maximum(squares / n - mean**2, 0.0))
        out[mask] = np.where(std > 1e-9, (x - mean) / np.maximum(std, 1e-9), 0.0)
    else:
        low = np.minimum(population.min(), x) if len(population) else x
        high = np.maximum(population.max(), x) if len(population) else x
        span = high - low
        out[mask] = np.where(span > 1e-9, (x - low) / np.maximum(span, 1e-9), 0.0)
    return out


def _ranks(
    values: NDArray[np.float32], mask: NDArray[np.bool_], basis: NDArray[np.bool_] | None = None
) -> NDArray[np.float32]:
    """1-based ranks of the ``mask`` values, best first, ties in slot order; with ``basis``,
    each value's rank among the ``basis`` values (one plus how many are better)."""
    ranks = np.zeros(len(values), dtype=np.float32)
    if basis is not None:
        ordered = np.sort(-values[basis])
        ranks[mask] = np.searchsorted(ordered, -values[mask], side="left") + 1
        return ranks
    slots = np.flatnonzero(mask)
    order = slots[np.argsort(-values[slots], kind="stable")]
    ranks[order] = np.arange(1, len(order) + 1, dtype=np.float32)
    return ranks


def fuse(
    lexical: NDArray[np.float32],
    dense: NDArray[np.float32],
    mask: NDArray[np.bool_],
    config: RankingConfig,
    basis: NDArray[np.bool_] | None = None,
) -> NDArray[np.float32]:
    """One ranking score per slot from the two; ``-inf`` outside ``mask``. ``basis``: the
    slots whose scores set the scale (default: ``mask``)."""
    w = config.lexical_weight
    if config.fusion == "rrf":
        fused = w / (config.rrf_k + _ranks(lexical, mask, basis)) + (1 - w) / (
            config.rrf_k + _ranks(dense, mask, basis)
        )
    else:
        fused = w * _normalise(lexical, mask, config.fusion, basis) + (1 - w) * _normalise(
            dense, mask, config.fusion, basis
        )
    out = np.full(len(fused), -np.inf, dtype=np.float32)
    out[mask] = fused[mask]
    return out


def _top(scores: NDArray[np.float32], mask: NDArray[np.bool_], k: int) -> NDArray[np.int64]:
    """The best ``k`` slots of ``mask``, best first, equal scores in slot order: the best
    ``k`` are always the first ``k`` of the best ``k + n`` (so pages of hits line up)."""
    slots = np.flatnonzero(mask)
    if len(slots) > k:
        kth = np.partition(-scores[slots], k - 1)[k - 1]
        slots = slots[-scores[slots] <= kth]  # the best k, and every slot tied with the k-th
    return slots[np.lexsort((slots, -scores[slots]))][:k]
