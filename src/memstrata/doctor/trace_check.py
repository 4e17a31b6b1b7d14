"""The raw-trace part of ``doctor``: torn lines mended in place, episodes with no trace line
appended to it, trace lines with no episode (and no tombstone) reported. The episodes are
those of the record store in use: the SQLite file, or a database server's store."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from memstrata.codec import episode_to_json
from memstrata.doctor.report import DoctorReport, Problem, some
from memstrata.errors import MemstrataError
from memstrata.model import Episode, EpisodeFilter, Scope
from memstrata.ports import RecordStore
from memstrata.settings import Settings
from memstrata.trace import JsonlTrace, mend_torn, scan_file, torn_event


def check_and_repair(
    settings: Settings,
    report: DoctorReport,
    repair: bool,
    *,
    records: Callable[[], RecordStore] | None,
) -> None:
    """Check (and repair) the raw trace; compared with the record store ``records`` opens
    (the SQLite file, or the server store), unless None: it cannot be read."""
    trace = JsonlTrace(settings.trace_dir)
    report.checked.append(f"trace: {settings.trace_dir}")
    traced: dict[str, str] = {}  # episode id -> surface of its line
    tombstoned: set[str] = set()
    for file in trace.files():
        torn = 0
        try:
            lines = list(scan_file(file))
        except OSError as exc:
            report.problems.append(Problem("trace", f"{file}: cannot be read: {exc}"))
            continue
        for line in lines:
            event = line.event
            if (event is None and line.raw.strip()) or not line.terminated:
                torn += 1
                event = event or torn_event(line.raw)  # what mending keeps of it
            if event is not None and isinstance(event.get("id"), str):
                item = str(event["id"])
                if event.get("event") == "redacted":
                    tombstoned.add(item)
                elif event.get("event") == "episode":
                    traced.setdefault(item, str(event.get("surface", "")))
        if torn:
            problem = Problem("trace", f"{file}: {torn} torn line(s)")
            report.problems.append(problem)
            if repair:
                try:
                    problem.fixed = f"mended {mend_torn(file)} line(s) in place"
                except OSError as exc:
                    report.problems.append(Problem("trace", f"{file}: cannot be mended: {exc}"))
    if records is None:
        report.checked.append(
            "trace: not compared with the database (it is missing, unreadable or unreachable)"
        )
        return
    try:
        store = records()
    except MemstrataError as exc:
        report.problems.append(Problem("trace", f"not compared with the database: {exc}"))
        return
    try:
        stored = _episode_users(store)
        missing = sorted(set(stored) - set(traced))
        orphans = sorted(set(traced) - set(stored) - tombstoned)
        others = _other_sites(store, settings)
        if missing and others:  # turns captured through another data directory: traced there
            report.checked.append(
                f"trace: {len(missing)} episode(s) have no line here; {others} other data "
                "director(y/ies) share the store and trace the turns captured through them "
                "(`memstrata sites list`), so these are not compared"
            )
            missing = []
        if missing:
            problem = Problem(
                "trace", f"{len(missing)} episode(s) with no trace line: " + some(missing)
            )
            report.problems.append(problem)
            if repair:
                written = _backfill(store, trace, missing, stored)
                if written == len(missing):
                    problem.fixed = f"appended {written} episode(s) to the trace"
                else:
                    report.problems.append(
                        Problem("trace", f"only {written} of {len(missing)} could be appended")
                    )
        if orphans:
            report.problems.append(
                Problem(
                    "trace",
                    f"{len(orphans)} trace line(s) whose episode is not stored and that are not "
                    f"tombstones: {some(orphans)} (episodes the database lost: add them back "
                    "with `memstrata restore --from-trace --missing --user U`; or a deletion "
                    "whose trace line could not be erased: delete them again; or a forget "
                    "made through another data directory, erased here at the next open)",
                )
            )
    finally:
        store.close()


def _other_sites(store: RecordStore, settings: Settings) -> int:
    """How many data directories other than this one are enrolled in the store (read only:
    doctor makes no site id)."""
    try:
        own = settings.site_path.read_text(encoding="ascii").partition("\n")[0].strip()
    except (OSError, UnicodeDecodeError):
        own = ""
    return sum(site.id != own for site in store.sites())


def _episode_users(store: RecordStore) -> dict[str, str]:
    """Every stored episode id (archived ones too) and its user."""
    everything = EpisodeFilter(include_archived=True)
    return {
        ep.id: user for user in store.users() for ep in store.iter_episodes(Scope(user), everything)
    }


def _backfill(
    store: RecordStore, trace: JsonlTrace, missing: Sequence[str], users: dict[str, str]
) -> int:
    """Append the ``missing`` episodes to the trace; how many were written."""
    by_user: dict[str, list[str]] = defaultdict(list)
    for episode_id in missing:
        by_user[users[episode_id]].append(episode_id)
    written = 0
    for user, ids in sorted(by_user.items()):
        episodes = store.get_episodes(Scope(user), ids)
        by_surface: dict[str, list[Episode]] = defaultdict(list)
        for ep in episodes:
            by_surface[ep.surface].append(ep)
        for surface, eps in by_surface.items():
            events = [{"event": "episode", **episode_to_json(e)} for e in eps]
            if trace.append(surface, events):
                written += len(eps)
    return written
