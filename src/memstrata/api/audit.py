"""Audit flags a person looks at and resolves: the consolidator's audit (bullets whose cited
turns are gone, or do not support their words), each with its bullet's text and citations,
and what a person decides about each: delete it, edit it (through the documents' preview and
compare-and-swap apply), or keep it.

A bullet kept is acknowledged in the scope's ``state/audit`` document: its id with a
fingerprint (a hash) of its text and citations, and when. A kept bullet is not flagged again
while its text and citations stay as they were; once either changes, the audit judges it
afresh. The acknowledgement holds no text, only the hash, and goes with the scope when it is
forgotten.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from memstrata.api.common import AUDIT_STATE_KEY, ScopeLike, as_scope, reason_of
from memstrata.api.curation import CurationMixin
from memstrata.api.fallback import model_fallback
from memstrata.api.kept import fingerprint
from memstrata.codec import format_time
from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.model import DeleteReason, DocumentKind, JsonValue, Scope
from memstrata.retry import retry_conflicts

if TYPE_CHECKING:
    from memstrata.document.format import Bullet
    from memstrata.document.service import DocPreview

AuditAction = Literal["keep", "delete", "edit"]
ACTIONS: Final = ("keep", "delete", "edit")


@dataclass(frozen=True, slots=True)
class AuditFlag:
    """A bullet the audit flags, as it stands: ``problem`` is ``missing-evidence`` (no cited
    turn is left) or ``unsupported`` (its words are barely in the turns it cites, ``support``
    being the share found); ``citations`` each with the cited turn, when it still exists."""

    key: str
    version: int
    bullet_id: str
    text: str
    problem: str
    support: float
    citations: tuple[Mapping[str, JsonValue], ...]
    #: who judged it: ``rules``, or ``model`` (a chat model shown the cited turns)
    by: str = "rules"

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "key": self.key,
            "version": self.version,
            "bullet_id": self.bullet_id,
            "text": self.text,
            "problem": self.problem,
            "support": self.support,
            "citations": [dict(c) for c in self.citations],
            "by": self.by,
        }


@dataclass(frozen=True, slots=True)
class AuditResolution:
    """What resolving a flag did: the document's version now, and for an edit or a delete
    the diff that was applied."""

    key: str
    bullet_id: str
    action: str
    version: int
    diff: str | None

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "key": self.key,
            "bullet_id": self.bullet_id,
            "action": self.action,
            "version": self.version,
            "diff": self.diff,
        }


class AuditMixin(CurationMixin):
    """The audit's flags, and resolving them."""

    def audit(self, scope: ScopeLike, *, use_llm: bool = True) -> list[AuditFlag]:
        """The current flags of the consolidator's audit (run now, removing nothing) on the
        scope's curated documents, except bullets a person kept as they still stand. With a
        chat model configured it judges the evidence (``use_llm=False``: rules only)."""
        scope = as_scope(scope)
        report = self.consolidate(scope, mode="audit", remove=False, use_llm=use_llm)
        fallback = model_fallback((), report.model_failures)
        if fallback is not None:  # the flags stand, judged by rules: say so (the CLI's stderr)
            logging.getLogger(__name__).warning("audit of %s: %s", scope, fallback.message())
        flags: list[AuditFlag] = []
        documents: dict[str, tuple[dict[str, Bullet], int]] = {}
        for finding in report.findings:
            if finding.key not in documents:
                doc, version = self.docs.doc(finding.key, scope)
                bullets = {b.id: b for s in doc.sections for b in s.bullets}
                documents[finding.key] = (bullets, version)
            bullets, version = documents[finding.key]
            bullet = bullets.get(finding.bullet_id)
            if bullet is None:
                continue
            flags.append(
                AuditFlag(
                    key=finding.key,
                    version=version,
                    bullet_id=bullet.id,
                    text=bullet.text,
                    problem=finding.problem,
                    support=finding.support,
                    citations=tuple(self._citations(scope, bullet)),
                    by=finding.by,
                )
            )
        return flags

    def resolve_audit(
        self,
        scope: ScopeLike,
        key: str,
        bullet_id: str,
        action: AuditAction | str,
        *,
        expected_version: int,
        text: str | None = None,
        reason: DeleteReason | str | None = None,
    ) -> AuditResolution:
        """Resolve a flag on bullet ``bullet_id`` of document ``key``, whose version the
        person saw was ``expected_version`` (a stale one is :class:`ConflictError`, nothing
        written). ``delete`` (with ``reason``: by default ``stale`` when no cited turn is
        left, else ``low-signal``) and ``edit`` (the new ``text``) go through the document's
        preview and compare-and-swap apply; ``keep`` records that the bullet stands as it is,
        so the audit does not flag it again until its text or citations change."""
        scope = as_scope(scope)
        if action not in ACTIONS:
            raise InvalidInputError(
                f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}"
            )
        if isinstance(expected_version, bool) or not isinstance(expected_version, int):
            raise InvalidInputError("expected_version must be a whole number")
        if action != "edit" and text is not None:
            raise InvalidInputError(f"text is for an edit, not a {action}")
        if action != "delete" and reason is not None:
            raise InvalidInputError(f"reason is for a delete, not a {action}")
        doc, version = self.docs.doc(key, scope)
        if version != expected_version:
            raise ConflictError(key, expected_version, version)
        bullet = next((b for s in doc.sections for b in s.bullets if b.id == bullet_id), None)
        if bullet is None:
            raise NotFoundError(f"document {key!r} has no bullet {bullet_id} in scope {scope}")
        if action == "keep":
            self._keep(scope, key, bullet)
            return AuditResolution(key, bullet_id, "keep", version, None)
        from memstrata.document.ops import Operation, OpKind

        if action == "edit":
            if not isinstance(text, str) or not text.strip():
                raise InvalidInputError("an edit needs the bullet's new text")
            op = Operation(OpKind.EDIT, bullet_id, text=text)
        else:
            why = reason_of(reason) if reason is not None else self._default_reason(scope, bullet)
            op = Operation(OpKind.DELETE, bullet_id, reason=why)
        preview: DocPreview = self.docs.preview_doc(key, scope, [op], expected_version=version)
        _, now = self.docs.apply_doc(key, scope, preview.operations, expected_version=version)
        return AuditResolution(key, bullet_id, action, now, preview.diff)

    # kept flags ----------------------------------------------------------------------
    def _keep(self, scope: Scope, key: str, bullet: Bullet) -> None:
        def attempt() -> None:
            state = self.store.get_document(scope, DocumentKind.STATE, AUDIT_STATE_KEY)
            content = dict(state.content) if state is not None else {}
            kept = content.get("kept")
            entries: dict[str, JsonValue] = dict(kept) if isinstance(kept, Mapping) else {}
            entries[bullet.id] = {
                "key": key,
                "fingerprint": fingerprint(bullet),
                "at": format_time(self.clock.now()),
            }
            self.store.put_document(
                scope,
                DocumentKind.STATE,
                AUDIT_STATE_KEY,
                {**content, "kept": entries},
                expected_version=0 if state is None else state.version,
            )

        retry_conflicts(attempt)

    # helpers -------------------------------------------------------------------------
    def _citations(self, scope: Scope, bullet: Bullet) -> list[dict[str, JsonValue]]:
        found = {
            e.id: e
            for e in self.store.get_episodes(scope, [c.episode_id for c in bullet.citations])
        }
        out: list[dict[str, JsonValue]] = []
        for citation in bullet.citations:
            episode = found.get(citation.episode_id)
            out.append(
                {
                    "citation": f"{citation.surface}:{citation.episode_id}",
                    "episode_id": citation.episode_id,
                    "exists": episode is not None,
                    "session_id": None if episode is None else episode.session_id,
                    "speaker": None if episode is None else episode.speaker,
                    "time": None if episode is None else format_time(episode.time),
                    "text": None if episode is None else episode.text,
                }
            )
        return out

    def _default_reason(self, scope: Scope, bullet: Bullet) -> DeleteReason:
        cited = [c.episode_id for c in bullet.citations]
        if not cited or not self.store.get_episodes(scope, cited):
            return DeleteReason.STALE
        return DeleteReason.LOW_SIGNAL
