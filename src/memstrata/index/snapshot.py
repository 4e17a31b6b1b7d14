"""A user's search index saved to disk, so that a process opens it instead of rebuilding it.

Rebuilding a :class:`UserIndex` re-tokenizes every turn and reads every vector back from the
embedding cache: minutes at 100,000 turns. A snapshot holds the built index as arrays, and
opening one reads only what a search needs at once: the vector matrices (one ``.npy`` file per
view and model block) and the lexical postings are memory-mapped, and each entry's details are
made from the arrays when a hit shows them.

Layout, under ``<data dir>/index/<sha256(user)[:32]>/``::

    CURRENT          the name of the snapshot in use (replaced atomically)
    s-<gen>-<rand>/  one snapshot: meta.json, index.npz (catalog, lexical index, sessions,
                     documents, texts; zip CRCs), view<v>.block<b>.npy (float32 matrices),
                     view<v>.graph (usearch HNSW graph, when the index has one)
    .lock            readers hold it shared while loading; a commit or an erasure alone
    .save.lock       one save (or erasure) at a time
    erased           the store generation of the last erasure on request

**Saving** (:meth:`SnapshotStore.save`) captures the index under its read lock (the small
arrays are copied then, the matrices referenced), writes a new directory beside the others,
fsyncs every file and the directory, renames it into place, and replaces ``CURRENT``. A crash
leaves the previous snapshot (or none) and a ``.tmp-*`` directory the next save removes. Files
another process has mapped are never written: each save is a new directory.

**Loading** (:meth:`SnapshotStore.load`) uses a snapshot only if its format, embedder (name,
dimension, blocks) and the ranking fields that shape the stored content match, its generation
is not past the store's, and the change at its generation is the one it recorded (so a
snapshot of another database with the same user is not taken for this one). Anything else,
or any damage found, is logged and the index is rebuilt: a snapshot is derived data. The
caller then replays the store's change feed from the snapshot's generation.

**Forgetting** (:meth:`SnapshotStore.erase`): a deletion on request removes every snapshot of
the user, overwriting the bytes first. The files other processes read into memory (archive,
graphs, metadata) are overwritten whole; in the matrices they may have mapped, the rows of the
erased entries (those whose text is one of the erased texts) and of the turns that have them as
context are zeroed (those processes drop or re-embed these rows when they replay the deletion). The
``erased`` mark makes a save that started before the deletion give up instead of bringing the
text back; :meth:`SnapshotStore.residue` proves no file of the user's snapshots holds it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import json
import logging
import mmap
import os
import secrets
import shutil
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.blend import BlendEmbedder
from memstrata.erasure import Needles, text_forms
from memstrata.errors import SnapshotError, StoreError
from memstrata.index.ann import AnnGraph, usearch_available
from memstrata.index.bm25 import BM25Index
from memstrata.index.catalog import Catalog
from memstrata.index.config import RankingConfig
from memstrata.index.scope_index import PassageReader, UserIndex
from memstrata.index.vectors import ExactVectorIndex
from memstrata.ports import Embedder, RecordStore
from memstrata.private import owner_only, private_dir
from memstrata.util.durable import FileLock, fsync_path, new_file, write_atomic

log = logging.getLogger(__name__)

#: bumped whenever what a snapshot holds, or how, changes: older snapshots are rebuilt
FORMAT: Final = 1
#: the ranking fields that shape what the index holds (the rest only weigh it at search time)
CONTENT_FIELDS: Final = ("lexical_prev", "dense_views")
_CURRENT: Final = "CURRENT"
_LOCK: Final = ".lock"
_SAVE_LOCK: Final = ".save.lock"
_MARK: Final = "erased"
_KEEP: Final = frozenset({_LOCK, _SAVE_LOCK, _MARK})
_META: Final = "meta.json"
_ARCHIVE: Final = "index.npz"
#: the lexical index's large arrays, each an ``.npy`` file mapped read-only (a search reads
#: the postings of its terms only); term ids, slots and counts: no text
_MAPPED: Final = (
    "lexical.postings.slots",
    "lexical.postings.tfs",
    "lexical.postings.epochs",
    "lexical.docs.pairs",
)
_ROWS_PER_WRITE: Final = 8192
_MIN_FORM: Final = 4  # as the store's proof: shorter forms match by chance
#: how long an erasure waits for a save in progress to finish
_ERASE_WAIT_S: Final = 120.0


def user_key(user: str) -> str:
    """The directory name of a user's snapshots (a user id may hold any character)."""
    return hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def embedder_identity(embedder: Embedder) -> dict[str, Any]:
    """What makes vectors comparable: the models, their widths, and which of them pool a
    context view from the turns alone (a blend's ``pooled``)."""
    blocks, pooled = [embedder.dim], [False]
    if isinstance(embedder, BlendEmbedder):
        blocks, pooled = list(embedder.blocks), list(embedder.pooled)
    return {"name": embedder.name, "dim": embedder.dim, "blocks": blocks, "pooled": pooled}


def config_identity(config: RankingConfig) -> dict[str, Any]:
    full = dataclasses.asdict(config)
    return {name: _jsonable(full[name]) for name in CONTENT_FIELDS}


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """A saved snapshot: where, which store generation it reflects, how big."""

    path: Path
    user: str
    generation: int
    entries: int
    bytes: int


# strings -------------------------------------------------------------------------------
def _pack(name: str, strings: Sequence[str], out: dict[str, NDArray[Any]]) -> None:
    """``strings`` as one UTF-8 array: joined by NUL characters when none holds one (split
    back at once), otherwise with the character offsets between them."""
    if not any("\x00" in s for s in strings):
        joined = "\x00".join(strings)
        out[f"{name}.count"] = np.array([len(strings)], dtype=np.int64)
    else:
        joined = "".join(strings)
        offsets = np.zeros(len(strings) + 1, dtype=np.int64)
        np.cumsum([len(s) for s in strings], out=offsets[1:])
        out[f"{name}.offsets"] = offsets
    out[f"{name}.chars"] = np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8)


def _unpack(name: str, arrays: dict[str, NDArray[Any]]) -> list[str]:
    text = arrays[f"{name}.chars"].tobytes().decode("utf-8", "surrogatepass")
    if f"{name}.count" in arrays:
        count = int(arrays[f"{name}.count"][0])
        strings = text.split("\x00") if count else []
        if len(strings) != count:
            raise SnapshotError(f"the strings {name} are not {count}")
        return strings
    offsets: list[int] = arrays[f"{name}.offsets"].tolist()
    if not offsets or offsets[0] != 0 or offsets[-1] != len(text):
        raise SnapshotError(f"the strings {name} do not match their offsets")
    return [text[a:b] for a, b in pairwise(offsets)]


# files ---------------------------------------------------------------------------------
def _write_matrix(path: Path, pieces: Sequence[NDArray[np.float32]], width: int) -> None:
    """One ``.npy`` file of float32 rows, the pieces one after another, streamed."""
    rows = sum(len(p) for p in pieces)
    header: dict[str, Any] = {
        "descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)),
        "fortran_order": False,
        "shape": (rows, width),
    }
    with new_file(path) as fh:
        np.lib.format.write_array_header_1_0(fh, header)
        for piece in pieces:
            for start in range(0, len(piece), _ROWS_PER_WRITE):
                chunk = np.ascontiguousarray(piece[start : start + _ROWS_PER_WRITE])
                fh.write(chunk.tobytes())


def _map(path: Path, *, writable: bool) -> NDArray[Any]:
    """An ``.npy`` file's array, memory-mapped: copy-on-write (a write stays this process's)
    or read-only. Pages are read as touched, without read-ahead around them (a search reads
    a few hundred scattered rows; read-ahead would map most of the file)."""
    with path.open("rb") as fh:
        version = np.lib.format.read_magic(fh)
        if version != (1, 0):
            raise SnapshotError(f"{path.name} is an .npy file of version {version}")
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        offset = fh.tell()
        if fortran or dtype.hasobject:
            raise SnapshotError(f"{path.name} is not a C-ordered array of numbers")
        size = int(np.prod(shape)) * dtype.itemsize
        if os.fstat(fh.fileno()).st_size != offset + size:
            raise SnapshotError(f"{path.name} does not hold {shape} values")
        if size == 0:
            return np.zeros(shape, dtype=dtype)
        access = mmap.ACCESS_COPY if writable else mmap.ACCESS_READ
        mapped = mmap.mmap(fh.fileno(), 0, access=access)
    if hasattr(mapped, "madvise"):
        mapped.madvise(mmap.MADV_RANDOM)
    return np.ndarray(shape, dtype=dtype, buffer=mapped, offset=offset)


@contextlib.contextmanager
def _flock(path: Path, *, exclusive: bool, wait: float | None = None) -> Iterator[bool]:
    """Hold an advisory lock on ``path`` (created if missing). Yields False when it could
    not be had within ``wait`` seconds (None: wait as long as it takes; 0: do not wait)."""
    try:
        lock = FileLock(path)
    except OSError:
        if exclusive:
            raise
        yield True  # a directory nobody can write: nobody changes it either
        return
    with lock:
        yield lock.acquire(shared=not exclusive, wait=wait)


def _overwrite(path: Path) -> None:
    """Overwrite a whole file with zeros, flushed to disk."""
    size = path.stat().st_size
    with path.open("r+b") as fh:
        zeros = bytes(min(size, 1 << 20))
        left = size
        while left > 0:
            fh.write(zeros[: min(left, len(zeros))])
            left -= len(zeros)
        fh.flush()
        os.fsync(fh.fileno())


# the store -----------------------------------------------------------------------------
class SnapshotStore:
    """The saved indexes under ``root`` (``<data dir>/index``), one directory per user."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def directory(self, user: str) -> Path:
        return self.root / user_key(user)

    def current(self, user: str) -> Path | None:
        """The snapshot in use for ``user``, if one was saved."""
        directory = self.directory(user)
        try:
            name = (directory / _CURRENT).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        path = directory / name
        return path if name.startswith("s-") and path.is_dir() else None

    def info(self, user: str) -> SnapshotInfo | None:
        """What the user's snapshot in use reflects and weighs (None: none, or unreadable)."""
        path = self.current(user)
        if path is None:
            return None
        try:
            meta = json.loads((path / _META).read_text(encoding="utf-8"))
            size = sum(f.stat().st_size for f in path.iterdir())
            return SnapshotInfo(path, meta["user"], meta["generation"], meta["entries"], size)
        except (OSError, ValueError, KeyError):
            return None

    # loading -----------------------------------------------------------------------
    def load(
        self,
        user: str,
        embedder: Embedder,
        config: RankingConfig,
        passages: PassageReader | None,
        store: RecordStore | None = None,
        *,
        deferred: bool = False,
    ) -> UserIndex | None:
        """The user's saved index, if it can be used with ``embedder`` and ``config`` and
        reflects ``store`` (at or before its generation); None otherwise, with the reason
        logged. The caller replays the change feed from the index's generation. Entries saved
        without their vectors come back pending (``deferred``: as for
        :class:`UserIndex`)."""
        directory = self.directory(user)
        if not (directory / _CURRENT).exists():
            return None
        try:
            with _flock(directory / _LOCK, exclusive=False):
                path = self.current(user)
                if path is None:
                    raise SnapshotError("CURRENT names no snapshot")
                meta, arrays, matrices, graphs = self._read(path, user, embedder, config)
            if store is not None:
                _check_store(meta, store, user)
            index = _assemble(meta, arrays, matrices, graphs, embedder, config, passages)
            index.deferred = deferred
            return index
        except Exception as exc:  # derived data: whatever is wrong, the index is rebuilt
            log.warning(
                "index snapshot of %s not used (%s); rebuilding from the records", user, exc
            )
            return None

    def _read(
        self, path: Path, user: str, embedder: Embedder, config: RankingConfig
    ) -> tuple[
        dict[str, Any],
        dict[str, NDArray[Any]],
        list[list[NDArray[np.float32]]],
        list[AnnGraph | None],
    ]:
        meta = json.loads((path / _META).read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise SnapshotError(f"format {meta.get('format')}, not {FORMAT}")
        if meta.get("user") != user:
            raise SnapshotError("it is another user's")
        if meta.get("embedder") != embedder_identity(embedder):
            raise SnapshotError(f"made with embedder {meta.get('embedder')}")
        if meta.get("config") != config_identity(config):
            raise SnapshotError(f"made with ranking {meta.get('config')}")
        for name, size in meta["files"].items():
            if (path / name).stat().st_size != size:
                raise SnapshotError(f"{name} is not {size} bytes long")
        with np.load(path / _ARCHIVE, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        for name in _MAPPED:
            arrays[name] = _map(path / f"{name}.npy", writable=False)
        matrices: list[list[NDArray[np.float32]]] = []
        graphs: list[AnnGraph | None] = []
        for v, view in enumerate(meta["views"]):
            blocks = []
            for b, width in enumerate(view["blocks"]):
                matrix = _map(path / f"view{v}.block{b}.npy", writable=True)
                if matrix.shape != (view["rows"], width) or matrix.dtype != np.float32:
                    raise SnapshotError(f"view {v} block {b} is not {view['rows']} x {width}")
                blocks.append(matrix)
            matrices.append(blocks)
            graph = None
            if view["graph"] and config.ann_threshold is not None and usearch_available():
                graph = AnnGraph.load(path / f"view{v}.graph", embedder.dim)
            graphs.append(graph)
        return meta, arrays, matrices, graphs

    # saving ------------------------------------------------------------------------
    def save(self, index: UserIndex, store: RecordStore | None = None) -> SnapshotInfo | None:
        """Save ``index`` as the user's snapshot; None when it was not (nothing to save, a
        save or erasure of the user under way, an erasure since the index's generation, a
        newer snapshot already saved, or a disk that cannot be written: each logged)."""
        directory = self.directory(index.user)
        try:
            private_dir(directory)
            with _flock(directory / _SAVE_LOCK, exclusive=True, wait=0) as held:
                if not held:
                    log.info("index of %s not saved: another save is under way", index.user)
                    return None
                return self._save(directory, index, store)
        except OSError as exc:
            log.warning("index of %s not saved: %s", index.user, exc)
            return None

    def _save(
        self, directory: Path, index: UserIndex, store: RecordStore | None
    ) -> SnapshotInfo | None:
        _scrub_stale(directory)
        captured = _capture(index)
        if captured is None:
            return None
        meta, arrays, views = captured
        if store is not None:
            anchor = store.changes_since(index.user, meta["generation"] - 1, limit=1)
            if not anchor or anchor[0].seq != meta["generation"]:
                log.info("index of %s not saved: its generation is not in the store", index.user)
                return None
            meta["anchor"] = anchor[0].item_id
        tmp = directory / f".tmp-{secrets.token_hex(8)}"
        tmp.mkdir(mode=0o700)
        try:
            files = self._write(tmp, meta, arrays, views)
            for written in tmp.iterdir():  # what numpy and the graph wrote: the owner's alone
                owner_only(written, 0o600)
            with _flock(directory / _LOCK, exclusive=True):
                if _erased_at(directory) > meta["generation"]:
                    log.info("index of %s not saved: an erasure came after it", index.user)
                    _scrub_tree(tmp, None)
                    return None
                held = self.info(index.user)
                if held is not None and held.generation > meta["generation"]:
                    shutil.rmtree(tmp)
                    return None
                final = directory / f"s-{meta['generation']}-{secrets.token_hex(4)}"
                os.rename(tmp, final)
                fsync_path(directory)
                write_atomic(directory / _CURRENT, final.name.encode("ascii"))
                for old in directory.iterdir():
                    if old.name.startswith("s-") and old != final:
                        shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return SnapshotInfo(final, index.user, meta["generation"], meta["entries"], files)

    def _write(
        self,
        tmp: Path,
        meta: dict[str, Any],
        arrays: dict[str, NDArray[Any]],
        views: list[tuple[list[list[NDArray[np.float32]]], AnnGraph | None]],
    ) -> int:
        arrays = dict(arrays)
        for name in _MAPPED:
            with new_file(tmp / f"{name}.npy") as fh:
                np.save(fh, arrays.pop(name), allow_pickle=False)
        with new_file(tmp / _ARCHIVE) as fh:
            savez: Any = np.savez  # numbers only, loaded with allow_pickle=False
            savez(fh, **arrays)
        for v, (pieces, graph) in enumerate(views):
            for b, (block_pieces, width) in enumerate(
                zip(pieces, meta["views"][v]["blocks"], strict=True)
            ):
                _write_matrix(tmp / f"view{v}.block{b}.npy", block_pieces, width)
            if graph is not None:
                graph.save(tmp / f"view{v}.graph")
        meta["files"] = {p.name: p.stat().st_size for p in tmp.iterdir()}
        with new_file(tmp / _META) as fh:
            fh.write(json.dumps(meta, sort_keys=True).encode("utf-8"))
        fsync_path(tmp)
        return sum(p.stat().st_size for p in tmp.iterdir())

    # checking ----------------------------------------------------------------------
    def check(self) -> list[tuple[Path, str]]:
        """What is wrong under :attr:`root`, per user directory: a ``CURRENT`` naming no
        snapshot, a snapshot that cannot be read whole (metadata, sizes, the archive's CRCs,
        the matrices' headers), a directory an interrupted save left."""
        found: list[tuple[Path, str]] = []
        if not self.root.is_dir():
            return found
        for directory in sorted(p for p in self.root.iterdir() if p.is_dir()):
            found += [
                (directory, f"an interrupted save left {p.name}")
                for p in sorted(directory.iterdir())
                if p.is_dir() and p.name.startswith(".tmp-")
            ]
            if not (directory / _CURRENT).exists():
                continue
            try:
                name = (directory / _CURRENT).read_text(encoding="ascii").strip()
                path = directory / name
                if not name.startswith("s-") or not path.is_dir():
                    raise SnapshotError(f"CURRENT names {name!r}, which is not there")
                meta = json.loads((path / _META).read_text(encoding="utf-8"))
                for file, size in meta["files"].items():
                    if (path / file).stat().st_size != size:
                        raise SnapshotError(f"{file} is not {size} bytes long")
                with np.load(path / _ARCHIVE, allow_pickle=False) as archive:
                    for member in archive.files:
                        archive[member]  # reads it whole: the zip checks its CRC
                for v, view in enumerate(meta["views"]):
                    for b, width in enumerate(view["blocks"]):
                        matrix = np.load(path / f"view{v}.block{b}.npy", mmap_mode="r")
                        if matrix.shape != (view["rows"], width):
                            raise SnapshotError(f"view {v} block {b} has shape {matrix.shape}")
            except Exception as exc:  # whatever it is, the snapshot cannot be used
                found.append((directory, f"the saved index cannot be used: {exc}"))
        return found

    def discard(self, directory: Path) -> None:
        """Overwrite and remove every snapshot in a user's directory (for ``doctor``, run
        while no other process uses the data directory); it is rebuilt on next use."""
        with (
            _flock(directory / _SAVE_LOCK, exclusive=True),
            _flock(directory / _LOCK, exclusive=True),
        ):
            with contextlib.suppress(FileNotFoundError):
                (directory / _CURRENT).unlink()
            for entry in sorted(directory.iterdir()):
                if entry.is_dir():
                    _scrub_tree(entry, None)

    # erasing -----------------------------------------------------------------------
    def erase(
        self, user: str, generation: int, texts: Collection[str], *, ids: Collection[str] = ()
    ) -> list[str]:
        """After a deletion on request (the store at ``generation``): remove every snapshot
        of ``user``, overwriting it first (see the module's docstring; the rows overwritten
        are those of ``texts`` or of the erased ``ids``), and keep any save that started
        before from being put in place. The copies left (see :meth:`residue`); raises
        :class:`StoreError` when a save holds the user's snapshots too long."""
        directory = self.directory(user)
        if not directory.is_dir():
            return []
        try:
            with _flock(directory / _SAVE_LOCK, exclusive=True, wait=_ERASE_WAIT_S) as held:
                if not held:
                    raise StoreError(f"a save of the search index holds {directory}")
                with _flock(directory / _LOCK, exclusive=True):
                    if generation > _erased_at(directory):
                        write_atomic(directory / _MARK, str(generation).encode("ascii"))
                    with contextlib.suppress(FileNotFoundError):
                        (directory / _CURRENT).unlink()
                    for entry in sorted(directory.iterdir()):
                        if entry.is_dir() and entry.name.startswith(".tmp-"):
                            _scrub_tree(entry, None)  # a crashed save: nobody maps it
                        elif entry.is_dir():
                            _scrub_tree(entry, _tainted_rows(entry, texts, ids))
                        elif entry.name not in _KEEP:
                            _overwrite(entry)
                            entry.unlink()
                    fsync_path(directory)
                # read back before letting a save start: one begun after (another process's
                # index from before the deletion) is refused by the mark, but while it writes
                # its temporary directory holds the texts and a proof read then would fail
                return self.residue(user, texts)
        except OSError as exc:
            return [f"the saved search index in {directory} could not be erased ({exc})"]

    def residue(self, user: str, texts: Collection[str]) -> list[str]:
        """Name each file of the user's snapshots that holds a form of ``texts`` (UTF-8 or
        JSON-escaped; forms under 4 bytes, which match by chance, are not looked for): a
        proof that an erasure left no copy there. A snapshot saved at or after the last
        erasure's generation was taken from an index that had applied it, so what it holds is
        held by records still stored (a speaker's name, a line said in two threads): it is
        not a copy and is not scanned."""
        directory = self.directory(user)
        if not directory.is_dir():
            return []
        needles = Needles(f for f in text_forms(texts) if len(f) >= _MIN_FORM)
        erased = _erased_at(directory)
        left = []
        for path in sorted(p for p in directory.rglob("*") if p.is_file()):
            top = path.relative_to(directory).parts[0]
            if top.startswith("s-") and _generation_of(top) >= erased:
                continue
            try:
                found = needles.in_file(path)
            except OSError as exc:
                left.append(f"{path} could not be read back ({exc})")
                continue
            if found:
                left.append(f"{path}: {len(found)} form(s) of the deleted text")
        return left


# capture and assembly --------------------------------------------------------------------
def _capture(
    index: UserIndex,
) -> (
    tuple[
        dict[str, Any],
        dict[str, NDArray[Any]],
        list[tuple[list[list[NDArray[np.float32]]], AnnGraph | None]],
    ]
    | None
):
    """What a save writes, taken under the index's read lock: the small arrays copied, the
    matrices referenced (a row written afterwards belongs to a change past the captured
    generation, which a load replays; see :meth:`ExactVectorIndex.to_arrays`)."""
    with index.lock.reading():
        if index.generation <= 0 or not len(index):
            return None
        capacity = index.catalog.capacity
        arrays: dict[str, NDArray[Any]] = {}
        catalog_arrays, strings = index.catalog.to_arrays()
        arrays.update({f"catalog.{k}": v for k, v in catalog_arrays.items()})
        for name, values in strings.items():
            _pack(f"catalog.{name}", values, arrays)
        lexical, terms = index.lexical.to_arrays(capacity)
        arrays.update({f"lexical.{k}": v for k, v in lexical.items()})
        _pack("lexical.terms", terms, arrays)
        sessions, documents = index.groups()
        slots = index.catalog.slots
        keys = list(sessions)
        turns = [t for key in keys for t in sessions[key]]
        arrays["sessions.offsets"] = np.cumsum([0, *(len(sessions[k]) for k in keys)])
        arrays["sessions.times"] = np.array([t for t, _ in turns], dtype=np.float64)
        arrays["sessions.slots"] = np.array([slots[i] for _, i in turns], dtype=np.int64)
        _pack("sessions.keys", keys, arrays)
        doc_ids = list(documents)
        parts = [sorted(documents[d]) for d in doc_ids]
        _pack("documents.ids", doc_ids, arrays)
        _pack("documents.passages", [p for ps in parts for p in ps], arrays)
        arrays["documents.offsets"] = np.cumsum([0, *(len(ps) for ps in parts)])
        views = []
        view_meta = []
        for v, view in enumerate(index.views):
            alive, pieces, graph = view.to_arrays(capacity)
            arrays[f"view{v}.alive"] = alive
            views.append((pieces, graph))
            view_meta.append({"rows": capacity, "blocks": view.widths, "graph": graph is not None})
        meta: dict[str, Any] = {
            "format": FORMAT,
            "user": index.user,
            "generation": index.generation,
            "entries": len(index),
            "embedder": embedder_identity(index.embedder),
            "config": config_identity(index.config),
            "ranking": {k: _jsonable(v) for k, v in dataclasses.asdict(index.config).items()},
            "views": view_meta,
            "saved_at": time.time(),
        }
    return meta, arrays, views


def _check_store(meta: dict[str, Any], store: RecordStore, user: str) -> None:
    generation = int(meta["generation"])
    if generation > store.generation(user):
        raise SnapshotError(f"generation {generation} is past the store's")
    anchor = store.changes_since(user, generation - 1, limit=1)
    if not anchor or anchor[0].seq != generation or anchor[0].item_id != meta.get("anchor"):
        raise SnapshotError("it was saved from another database")


def _assemble(
    meta: dict[str, Any],
    arrays: dict[str, NDArray[Any]],
    matrices: list[list[NDArray[np.float32]]],
    graphs: list[AnnGraph | None],
    embedder: Embedder,
    config: RankingConfig,
    passages: PassageReader | None,
) -> UserIndex:
    def part(prefix: str) -> dict[str, NDArray[Any]]:
        return {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}

    catalog_arrays = part("catalog.")
    ids = _unpack("catalog.ids", arrays)
    texts = _unpack("catalog.texts", arrays)
    values = {
        f"values.{name}": _unpack(f"catalog.values.{name}", arrays) for name in Catalog.COLUMNS
    }
    catalog = Catalog.from_arrays(catalog_arrays, values, ids, texts)
    lexical = BM25Index.from_arrays(
        part("lexical."), _unpack("lexical.terms", arrays), k1=config.k1, b=config.b
    )
    if len(matrices) != len(config.dense_views):
        raise SnapshotError(f"{len(matrices)} dense views, not {len(config.dense_views)}")
    views = [
        ExactVectorIndex.from_arrays(
            blocks, arrays[f"view{v}.alive"], ann_threshold=config.ann_threshold, graph=graph
        )
        for v, (blocks, graph) in enumerate(zip(matrices, graphs, strict=True))
    ]
    keys = _unpack("sessions.keys", arrays)
    bounds: list[int] = arrays["sessions.offsets"].tolist()
    times: list[float] = arrays["sessions.times"].tolist()
    turn_ids = [ids[s] for s in arrays["sessions.slots"].tolist()]
    turns = list(zip(times, turn_ids, strict=True))
    sessions = {key: turns[a:b] for key, a, b in zip(keys, bounds[:-1], bounds[1:], strict=True)}
    doc_ids = _unpack("documents.ids", arrays)
    passage_ids = _unpack("documents.passages", arrays)
    doc_bounds: list[int] = arrays["documents.offsets"].tolist()
    documents = {
        doc: set(passage_ids[a:b])
        for doc, a, b in zip(doc_ids, doc_bounds[:-1], doc_bounds[1:], strict=True)
    }
    return UserIndex.from_parts(
        meta["user"],
        embedder,
        config,
        passages,
        catalog=catalog,
        lexical=lexical,
        views=views,
        groups=(sessions, documents),
        generation=int(meta["generation"]),
    )


# erasure helpers ---------------------------------------------------------------------------
def _erased_at(directory: Path) -> int:
    """The store generation of the user's last erasure on request (0: none)."""
    try:
        return int((directory / _MARK).read_text(encoding="ascii").strip() or 0)
    except FileNotFoundError:
        return 0
    except (OSError, ValueError):
        return 1 << 62  # unreadable: no save may assume it came after


def _generation_of(name: str) -> int:
    """The generation in a snapshot directory's name (``s-<generation>-<rand>``; -1: none)."""
    try:
        return int(name.split("-")[1])
    except (IndexError, ValueError):
        return -1


def _scrub_stale(directory: Path) -> None:
    """Overwrite and remove what crashed saves left (the caller holds the save lock, so no
    save is writing them)."""
    for entry in directory.iterdir():
        if entry.name.startswith(".tmp-") and entry.is_dir():
            _scrub_tree(entry, None)


def _tainted_rows(path: Path, texts: Collection[str], ids: Collection[str] = ()) -> set[int] | None:
    """The slots of a snapshot whose text is one of the erased ``texts`` (a turn as indexed,
    a fact, a passage: each is among them) or whose id is one of the erased ``ids``, and the
    turns after them in their sessions that embed them as context (None: the snapshot cannot
    be read, so which cannot be told)."""
    try:
        meta = json.loads((path / _META).read_text(encoding="utf-8"))
        with np.load(path / _ARCHIVE, allow_pickle=False) as archive:
            arrays = {
                name: archive[name] for name in archive.files if not name.startswith("lexical.")
            }
        erased, gone = set(texts), set(ids)
        slots = _unpack("catalog.texts", arrays)
        hit = {slot for slot, text in enumerate(slots) if text and text in erased}
        if gone:
            slot_ids = _unpack("catalog.ids", arrays)
            hit.update(slot for slot, item in enumerate(slot_ids) if item in gone)
        context = max([0, *meta["config"]["dense_views"]])
        tainted = set(hit)
        if hit and context:
            order: list[int] = arrays["sessions.slots"].tolist()
            bounds: list[int] = arrays["sessions.offsets"].tolist()
            for a, b in pairwise(bounds):
                turns = order[a:b]
                for i, slot in enumerate(turns):
                    if slot in hit:
                        tainted.update(turns[i : i + context + 1])
        return tainted
    except Exception:  # a damaged snapshot: every row is overwritten
        return None


def _scrub_tree(path: Path, rows: set[int] | None) -> None:
    """Overwrite a snapshot directory's files, then remove it. Matrices another process may
    have mapped keep their bytes but for ``rows`` (None: matrices are overwritten whole)."""
    for entry in sorted(path.iterdir()):
        try:
            if entry.name.startswith("lexical.") and rows is not None:
                pass  # term ids, slots and counts others may map; the terms are in the archive
            elif entry.suffix == ".npy" and rows is not None:
                _zero_rows(entry, rows)
            else:
                _overwrite(entry)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise
        entry.unlink(missing_ok=True)
    path.rmdir()
    fsync_path(path.parent)


def _zero_rows(path: Path, rows: set[int]) -> None:
    if not rows:
        return
    matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    header = matrix.offset
    width = matrix.shape[1] * matrix.itemsize
    count = matrix.shape[0]
    del matrix
    zeros = bytes(width)
    with path.open("r+b") as fh:
        for row in sorted(r for r in rows if 0 <= r < count):
            fh.seek(header + row * width)
            fh.write(zeros)
        fh.flush()
        os.fsync(fh.fileno())
