"""The texts the dense views embed for a turn, worked out from a session's turns alone.

A turn's dense view with ``p`` previous turns embeds the turn joined to the ``p`` turns before
it in its session (:meth:`memstrata.index.scope_index.UserIndex._context`), so a turn's words
are in its own views and in the views of the ``p`` turns after it. A deletion on request purges
the cached vectors of all of them, whether or not an index was ever built in this process.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC

from memstrata.index.config import RankingConfig
from memstrata.index.scope_index import turn_text
from memstrata.model import Episode


def embedded_texts(
    session: Sequence[Episode],
    targets: Collection[str],
    config: RankingConfig,
    *,
    turns_alone: bool = False,
) -> set[str]:
    """Every text a dense view embeds that holds one of the turns ``targets`` (ids), given
    all the turns of their session (same thread, agent and session id), deleted ones too;
    ``turns_alone``: a model also embeds each turn of a view alone (a pooled model of a
    blend, :func:`memstrata.embed.blend.embeds_turns_alone`)."""
    turns = sorted(session, key=lambda e: (e.time.astimezone(UTC).timestamp(), e.id))
    texts = [turn_text(e) for e in turns]
    out: set[str] = set()
    for i, episode in enumerate(turns):
        if episode.id not in targets:
            continue
        if turns_alone:
            out.add(texts[i])
        for prev in config.dense_views:
            for j in range(i, min(len(turns), i + prev + 1)):
                out.add("\n".join(texts[max(0, j - prev) : j + 1]))
    return out
