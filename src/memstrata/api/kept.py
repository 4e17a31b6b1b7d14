"""What a person kept through the audit: the acknowledgements in a scope's ``state/audit``
document, each a bullet id with a fingerprint (a hash) of the bullet's text and citations.

Read by the audit that flags bullets (:mod:`memstrata.api.audit`) and by the consolidation
that removes what the audit finds (:mod:`memstrata.api.curation`): a bullet kept as it now
stands is neither flagged nor removed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from memstrata.api.common import AUDIT_STATE_KEY
from memstrata.model import DocumentKind, JsonValue, Scope
from memstrata.ports import RecordStore

if TYPE_CHECKING:
    from memstrata.document.format import Bullet


def fingerprint(bullet: Bullet) -> str:
    """A hash of a bullet's text and citations: what a keep acknowledges."""
    cited = [f"{c.surface}:{c.episode_id}" for c in bullet.citations]
    data = json.dumps([bullet.text, cited], ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def kept_bullets(store: RecordStore, scope: Scope) -> Mapping[str, JsonValue]:
    """The acknowledgements of the bullets a person kept in ``scope``, by bullet id."""
    state = store.get_document(scope, DocumentKind.STATE, AUDIT_STATE_KEY)
    kept = state.content.get("kept") if state is not None else None
    return kept if isinstance(kept, Mapping) else {}


def kept_check(store: RecordStore, scope: Scope) -> Callable[[Bullet], bool]:
    """Whether a bullet is one a person kept as it now stands (text and citations as they
    were when it was kept): the audit neither flags nor removes it."""
    kept = kept_bullets(store, scope)

    def check(bullet: Bullet) -> bool:
        ack = kept.get(bullet.id)
        return isinstance(ack, Mapping) and ack.get("fingerprint") == fingerprint(bullet)

    return check
