"""Curated documents: L1 essentials and L2 topics as markdown, L0 identity and the profile.

A service of the facade (``memory.docs``, as ``memstrata doc`` on the command line): it takes
the :class:`~memstrata.api.runtime.Runtime`, the capture service (a bullet written by hand
cites a turn captured for it) and the erasure of texts (a bullet deleted on request leaves no
copy); :class:`memstrata.api.Memory` delegates its document methods to it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.api.capture import CaptureService
from memstrata.api.curated import (
    clean_identity,
    clean_import,
    clean_profile,
    clean_text,
    in_store,
)
from memstrata.api.inputs import ScopeLike, as_scope, document_passages
from memstrata.api.runtime import Runtime
from memstrata.errors import InvalidInputError
from memstrata.model import DeleteReason, DocumentKind, Identity, Profile, Scope, Turn
from memstrata.ports import RecordStore
from memstrata.retry import retry_conflicts

if TYPE_CHECKING:
    from memstrata.document.format import Document as CuratedDocument
    from memstrata.document.ops import Operation
    from memstrata.document.service import DocPreview, DocumentService


class DocumentsService:
    """L1 essentials and L2 topics as markdown documents, L0 identity and the profile."""

    def __init__(
        self,
        runtime: Runtime,
        capture: CaptureService,
        erase_texts: Callable[[Scope, str, Sequence[str]], None],
    ) -> None:
        self.runtime = runtime
        self.capture = capture
        #: erase the copies of texts the store no longer holds (a bullet deleted on request),
        #: through the erasure journal so every data directory erases its own
        self.erase_texts = erase_texts

    @property
    def store(self) -> RecordStore:
        return self.runtime.store

    @property
    def documents(self) -> DocumentService:
        """The document operations over the store (compare-and-swap, per-bullet history)."""
        from memstrata.document.service import DocumentService

        def capture(text: str, scope: Scope) -> str:
            return self.capture.remember(Turn(text=text), scope, surface="manual")[0].id

        return DocumentService(self.store, capture, clean_text)

    def doc(self, key: str, scope: ScopeLike) -> tuple[CuratedDocument, int]:
        """A curated document (``essentials`` or a topic key) and its version."""
        return self.documents.get(as_scope(scope), key)

    def doc_markdown(self, key: str, scope: ScopeLike) -> tuple[str, int]:
        return self.documents.markdown(as_scope(scope), key)

    def preview_doc(
        self,
        key: str,
        scope: ScopeLike,
        change: str | Sequence[Operation],
        *,
        expected_version: int | None = None,
    ) -> DocPreview:
        """What a batch (operations, or the whole edited markdown) would do; writes nothing."""
        if not isinstance(change, str):
            self.check_operations(change)
        preview = self.documents.plan(
            as_scope(scope), key, change, expected_version=expected_version
        )
        self.check_operations(preview.operations)
        return preview

    def apply_doc(
        self, key: str, scope: ScopeLike, ops: Sequence[Operation], *, expected_version: int
    ) -> tuple[CuratedDocument, int]:
        """Apply a batch atomically against ``expected_version`` (compare-and-swap). A bullet
        deleted on request (reason ``user-request``) leaves no copy: its cached vectors and the
        database's old pages go in the same call, and, through the erasure journal, the copies
        in every other data directory sharing the store (see ``_erase_texts``)."""
        from memstrata.document.ops import OpKind
        from memstrata.document.service import kind_for

        self.check_operations(ops)
        scope = as_scope(scope)
        erased = {
            op.id
            for op in ops
            if op.kind == OpKind.DELETE and op.reason == DeleteReason.USER_REQUEST
        }
        stored = self.store.get_document(scope, kind_for(key), key) if erased else None
        result = self.documents.apply(scope, key, ops, expected_version=expected_version)
        if stored is not None:
            texts = [p.text for p in document_passages(stored) if p.id in erased]
            self.erase_texts(scope, f"{stored.id} bullets {','.join(sorted(erased))}", texts)
        return result

    def check_operations(self, ops: Sequence[Operation]) -> None:
        for number, op in enumerate(ops, start=1):
            if isinstance(op.text, str):
                self.runtime.check_size(op.text, f"operation {number}'s text")

    def export_markdown(self, scope: ScopeLike, directory: str | Path) -> dict[str, Any]:
        """Write the scope's memory as markdown documents and JSONL (see :mod:`exchange`)."""
        from memstrata.exchange import export_directory

        target = Path(directory)
        if target.exists() and not target.is_dir():
            raise InvalidInputError(f"{target} is not a directory; export into a directory")
        try:
            return export_directory(self.store, as_scope(scope), target)
        except OSError as exc:
            raise InvalidInputError(f"cannot write the export to {target}: {exc}") from exc

    def import_markdown(self, directory: str | Path, *, user: str | None = None) -> Scope:
        """Restore an exported directory into an empty scope (of ``user`` if given).

        The records pass the one scrub and citation check of curated writes (text already
        scrubbed stays as it is); a citation of an episode not in the import refuses the
        whole import before anything is written."""
        from memstrata.exchange import read_directory, renumbered

        batch = read_directory(Path(directory), user=user)
        for episode in batch.episodes:
            self.runtime.check_size(episode.text, f"episode {episode.id}")
        for fact in batch.facts:
            self.runtime.check_size(fact.text, f"fact {fact.id}")
        for doc in batch.documents:
            if doc.kind == DocumentKind.IDENTITY:
                self.runtime.check_size(str(doc.content.get("text", "")), "the identity")
            if doc.kind in (DocumentKind.ESSENTIALS, DocumentKind.TOPIC):
                for section in doc.content.get("sections", []):
                    for bullet in section.get("bullets", []):
                        self.runtime.check_size(
                            str(bullet.get("text", "")), f"a bullet of {doc.key}"
                        )
        settings = self.runtime.settings
        batch = clean_import(batch, scrub_capture=settings is None or settings.scrub_capture)
        batch = renumbered(batch)
        self.store.restore(batch.scope, batch.episodes, batch.facts, batch.documents)
        return batch.scope

    # L0 and L1 documents -----------------------------------------------------------
    def identity(self, scope: ScopeLike) -> Identity:
        doc = self.store.get_document(as_scope(scope), DocumentKind.IDENTITY, "identity")
        return Identity(text="") if doc is None else Identity.from_document(doc)

    def set_identity(
        self, text: str, scope: ScopeLike, *, expected_version: int | None = None
    ) -> Identity:
        """Replace the identity (L0). With ``expected_version`` a strict compare-and-swap;
        without it the last writer wins (conflicts retried with backoff)."""
        scope = as_scope(scope)
        if not isinstance(text, str):
            raise InvalidInputError(f"the identity is text, not {type(text).__name__}")
        self.runtime.check_size(text, "the identity")
        content = Identity(clean_identity(text, scope)).to_content()

        def attempt(version: int) -> Identity:
            doc = self.store.put_document(
                scope, DocumentKind.IDENTITY, "identity", content, expected_version=version
            )
            return Identity.from_document(doc)

        if expected_version is not None:
            return attempt(expected_version)
        return retry_conflicts(lambda: attempt(self.identity(scope).version))

    def profile(self, scope: ScopeLike) -> Profile:
        doc = self.store.get_document(as_scope(scope), DocumentKind.PROFILE, "profile")
        return Profile() if doc is None else Profile.from_document(doc)

    def put_profile(self, profile: Profile, scope: ScopeLike) -> Profile:
        """Store a profile; ``profile.version`` must be the version it was read at."""
        scope = as_scope(scope)
        stored = self.store.get_document(scope, DocumentKind.PROFILE, "profile")
        previous = None if stored is None else Profile.from_document(stored)
        profile = clean_profile(in_store(self.store), scope, profile, previous)
        doc = self.store.put_document(
            scope,
            DocumentKind.PROFILE,
            "profile",
            profile.to_content(),
            expected_version=profile.version,
        )
        return Profile.from_document(doc)
