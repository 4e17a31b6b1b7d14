"""The record commands of the ``memstrata`` CLI.

The other command modules register theirs on the same group when this module is imported.
"""

from __future__ import annotations

import json
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

import click

from memstrata import importers
from memstrata.cli.base import (
    ScopeArgs,
    cli,
    data_dir_option,
    describe,
    json_option,
    memory_for,
    print_json,
    read_stdin,
    scope_options,
    settings_for,
    when,
)
from memstrata.codec import item_version_to_json, record_to_json, stats_to_json
from memstrata.errors import InvalidInputError

if TYPE_CHECKING:
    from memstrata.api.common import IngestReport


@cli.command(help="Create the data directory and the database.")
@data_dir_option
@json_option
def init(data_dir: Path | None, as_json: bool) -> None:
    from memstrata.api import Memory
    from memstrata.store.url import redact

    settings = settings_for(data_dir=data_dir)
    url = settings.store_url
    with Memory.open(settings=settings) as mem:
        info = {
            "data_dir": str(settings.data_dir),
            "database": str(settings.db_path) if url is None else redact(url.get_secret_value()),
            "migrations": mem.store.applied_migrations(),
        }
    if as_json:
        print_json(info)
    else:
        click.echo(f"memory ready in {info['data_dir']} ({len(info['migrations'])} migrations)")


@cli.command(help="Store turns verbatim. TEXT '-' reads one turn per line from stdin.")
@click.argument("text", nargs=-1, required=True)
@scope_options
@click.option("--speaker", default=None, help="Who said it.")
@click.option(
    "--role",
    default="user",
    show_default=True,
    type=click.Choice(["user", "assistant", "system", "tool", "other"]),
)
@click.option("--session", "session_id", default=None, help="Session id (default: today).")
@click.option("--surface", default="chat", show_default=True, help="Where it was said.")
@data_dir_option
@json_option
def remember(
    text: tuple[str, ...],
    scope_args: ScopeArgs,
    speaker: str | None,
    role: str,
    session_id: str | None,
    surface: str,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.model import Role, Turn

    if text == ("-",):
        lines = [line for line in read_stdin().split("\n") if line.strip()]
    else:
        lines = [" ".join(text)]
    turns = [Turn(text=line, speaker=speaker, role=Role(role)) for line in lines]
    with memory_for(data_dir, create=True) as mem:
        episodes = mem.remember(turns, scope_args.scope(), surface=surface, session_id=session_id)
    if as_json:
        print_json([record_to_json(e) for e in episodes])
    else:
        for ep in episodes:
            click.echo(ep.id)


_FORMATS_EPILOG = "\b\nFormats:\n" + "\n".join(
    f"  {name:<12} {text}" for name, text in importers.DESCRIPTIONS.items()
)


@cli.command(
    help="Import a conversation file or another memory system's export into --user; each "
    "conversation becomes a thread. Exports of other systems (chatgpt, claude, deerflow, mem0, "
    "mempalace, deeptutor) import idempotently: run it again and nothing is added twice; "
    "--dry-run shows what would be imported.",
    epilog=_FORMATS_EPILOG,
)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(list(importers.FORMATS)),
    help="The file's format (listed below).",
)
@click.option("--user", required=True, help="User id that receives the conversations.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show what would be imported (per source) and write nothing.",
)
@click.option(
    "--all-branches",
    is_flag=True,
    help="chatgpt: import every branch of a conversation, not only the one last seen.",
)
@click.option(
    "--no-index",
    is_flag=True,
    help="Store only; embed later (`memstrata index`, a search with --wait, or the server).",
)
@data_dir_option
@json_option
def ingest(
    file: Path,
    fmt: str,
    user: str,
    dry_run: bool,
    all_branches: bool,
    no_index: bool,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.cli.index_commands import embed_with_progress, progress_mode
    from memstrata.server.schemas.capture import IngestOut

    # parse and check the whole file before opening the store
    batch = importers.load(file, fmt, all_branches=all_branches)
    if dry_run and not batch.keyed:
        raise InvalidInputError(f"--dry-run is offered for {', '.join(importers.KEYED)}")
    with memory_for(data_dir, create=True) as mem:
        report = mem.ingest(batch, user, dry_run=dry_run)
        summary: dict[str, object] = dict(IngestOut.of(report).model_dump())
        if not as_json:
            _echo_import(report, user)
        if (
            not dry_run and not no_index
        ):  # stored already: a Ctrl-C here only leaves vectors for later
            embedded = embed_with_progress(mem, user, "quiet" if as_json else progress_mode(False))
            summary["embedded"] = embedded.get(user, 0)
        if not dry_run:
            summary["pending"] = mem.pending(user)
    if as_json:
        print_json(summary)
    elif dry_run:
        click.echo("dry run: nothing was written")
    elif no_index:
        click.echo("not embedded yet: `memstrata index` embeds them")
    else:
        click.echo(f"embedded {summary['embedded']} record(s); searchable by meaning")


def _echo_import(report: IngestReport, user: str) -> None:
    if not report.sources and not report.skipped:
        click.echo(
            f"imported {report.turns} turns in {report.conversations} conversation(s) "
            f"into user {user} ({round(report.turns_per_s, 1)} turns/s)"
        )
        return
    verb = "would import" if report.dry_run else "imported"
    click.echo(
        f"{verb} into user {user}: {report.turns} turn(s), {report.facts} fact(s), "
        f"{report.bullets} document bullet(s); {report.present} already present, "
        f"{len(report.skipped)} skipped"
    )
    for s in report.sources:
        added = {"conversation": s.turns, "facts": s.facts, "document": s.bullets}[s.kind]
        unit = {"conversation": "turn(s)", "facts": "fact(s)", "document": "bullet(s)"}[s.kind]
        name = "facts" if s.kind == "facts" else f"{s.kind} {s.source}"
        title = f" {s.title!r}" if s.title and s.kind != "facts" else ""
        click.echo(f"  {name}{title}: {added} new {unit}, {s.present} present")
    for where, reason in report.skipped:
        click.echo(f"  skipped {where}: {reason}")
    if report.unresolved:
        click.echo(
            f"  {report.unresolved} citation(s) name nothing in memory: not kept; each bullet "
            "cites the import episode that holds it"
        )


@cli.command(help="Show one episode, fact or document.")
@click.argument("item_id")
@scope_options
@data_dir_option
@json_option
def get(
    item_id: str,
    scope_args: ScopeArgs,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with memory_for(data_dir) as mem:
        record = mem.get(item_id, scope_args.scope())
    click.echo(
        json.dumps(record_to_json(record), ensure_ascii=False, indent=2)
        if as_json
        else describe(record)
    )


@cli.command(name="list", help="List one page of a scope's episodes, facts or documents.")
@scope_options
@click.option(
    "--kind",
    default="episode",
    show_default=True,
    type=click.Choice(["episode", "fact", "document"]),
)
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--after", default=None, help="Continue after this id.")
@data_dir_option
@json_option
def list_(
    scope_args: ScopeArgs,
    kind: str,
    limit: int,
    after: str | None,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with memory_for(data_dir) as mem:
        records = mem.list(
            scope_args.scope(),
            cast(Literal["episode", "fact", "document"], kind),
            limit=limit,
            after=after,
        )
    if as_json:
        print_json([record_to_json(r) for r in records])
    else:
        for record in records:
            click.echo(describe(record))


@cli.command(help="Hybrid search of a scope's turns, sessions, facts or curated topics.")
@click.argument("query")
@scope_options
@click.option("--k", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option(
    "--granularity",
    default="turn",
    show_default=True,
    type=click.Choice(["turn", "session", "fact", "topic"]),
)
@click.option("--speaker", default=None, help="Only turns by this speaker.")
@click.option("--session", "session_id", default=None, help="Only this session.")
@click.option("--since", type=click.DateTime(), default=None, help="Only from this time on.")
@click.option("--until", type=click.DateTime(), default=None, help="Only before this time.")
@click.option("--category", default=None, help="Only facts of this category.")
@click.option("--topic", default=None, help="Only facts (or curated documents) of this topic.")
@click.option(
    "--layer",
    type=click.Choice(["L1", "L2", "L3"]),
    default=None,
    help="Only this layer: L1 essentials or L2 topics (granularity topic), L3 the archive.",
)
@click.option("--surface", default=None, help="Only turns from this surface (chat, notebook...).")
@click.option("--include-archived", is_flag=True, help="Also archived turns.")
@click.option(
    "--current-only/--include-superseded",
    default=True,
    show_default=True,
    help="Only current facts, or superseded ones too.",
)
@click.option("--rerank", is_flag=True, help="Let the configured chat model reorder the best hits.")
@click.option(
    "--wait",
    is_flag=True,
    help="Embed records that have no vector yet before searching (else they rank by words).",
)
@data_dir_option
@json_option
def search(
    query: str,
    scope_args: ScopeArgs,
    k: int,
    granularity: str,
    speaker: str | None,
    session_id: str | None,
    since: datetime | None,
    until: datetime | None,
    category: str | None,
    topic: str | None,
    layer: str | None,
    surface: str | None,
    include_archived: bool,
    current_only: bool,
    rerank: bool,
    wait: bool,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.codec import hit_to_json, search_filter

    filters = search_filter(
        speaker=speaker,
        session_id=session_id,
        surface=surface,
        since=since,
        until=until,
        category=category,
        topic=topic,
        layer=layer,
        include_archived=include_archived,
        current_only=current_only,
    )
    with memory_for(data_dir) as mem:
        hits = mem.search(
            query,
            scope_args.scope(),
            k=k,
            granularity=granularity,
            filters=filters,
            rerank=rerank,
            wait=wait,
        )
    if hits.partial:
        click.echo(
            f"partial: {hits.pending} record(s) in this scope have no vectors yet and were "
            "ranked by their words alone; `memstrata index` embeds them (or search with --wait)",
            err=True,
        )
    if as_json:
        print_json([hit_to_json(h) for h in hits])
        return
    for rank, hit in enumerate(hits, 1):
        where = hit.session_id or hit.topic or "-"
        click.echo(f"{rank:>2}. {hit.score:6.3f}  {hit.id}  [{where}] {hit.text}")


@cli.command(help="Delete an item (episodes cascade to the facts citing them).")
@click.argument("item_id")
@scope_options
@click.option(
    "--reason",
    default="user-request",
    show_default=True,
    type=click.Choice(["contradicted", "superseded", "stale", "low-signal", "user-request"]),
)
@data_dir_option
@json_option
def delete(
    item_id: str,
    scope_args: ScopeArgs,
    reason: str,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with memory_for(data_dir) as mem:
        report = mem.delete(item_id, scope_args.scope(), reason=reason)
    if as_json:
        print_json(report.to_json())
    else:
        extra = f" and {len(report.cascaded)} fact(s) citing only it" if report.cascaded else ""
        click.echo(f"deleted {item_id}{extra}")


@cli.command(help="Show every version of an item, oldest first.")
@click.argument("item_id")
@scope_options
@data_dir_option
@json_option
def history(
    item_id: str,
    scope_args: ScopeArgs,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with memory_for(data_dir) as mem:
        entries = mem.history(item_id, scope_args.scope())
    if as_json:
        print_json([item_version_to_json(e) for e in entries])
        return
    for e in entries:
        reason = f" ({e.reason})" if e.reason else ""
        text = e.data.get("text", "") if isinstance(e.data, dict) else ""
        click.echo(f"v{e.version} {e.op.value}{reason} at {when(e.at)}  {text}".rstrip())


@cli.command(help="Count what a scope holds.")
@scope_options
@data_dir_option
@json_option
def stats(scope_args: ScopeArgs, data_dir: Path | None, as_json: bool) -> None:
    with memory_for(data_dir) as mem:
        scope = scope_args.scope()
        result = {**stats_to_json(mem.stats(scope)), "bytes": mem.sizes(scope)}
    if as_json:
        print_json(result)
        return
    for key, value in result.items():
        if key != "scope":
            click.echo(f"{key}: {value}")


@cli.command(help="Export a scope: JSONL of every record, or a markdown directory.")
@click.argument("target", required=False, type=click.Path(path_type=Path))
@scope_options
@click.option(
    "--format",
    "fmt",
    default="jsonl",
    show_default=True,
    type=click.Choice(["jsonl", "markdown"]),
    help="jsonl: one record per line; markdown: documents as markdown, records as JSONL.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="File (jsonl; default stdout) or directory (markdown; required).",
)
@data_dir_option
def export(
    target: Path | None,
    scope_args: ScopeArgs,
    fmt: str,
    out: Path | None,
    data_dir: Path | None,
) -> None:
    if target is not None and out is not None and target != out:
        raise InvalidInputError("give the destination once: as an argument or as --out")
    out = out or target
    scope = scope_args.scope()
    if fmt == "markdown":
        if out is None:
            raise InvalidInputError("--format markdown needs --out DIR")
        if out.exists() and not out.is_dir():
            raise InvalidInputError(f"{out} is not a directory; export into a new directory")
        if out.exists() and any(out.iterdir()):
            raise InvalidInputError(f"{out} is not empty; export into a new directory")
        with memory_for(data_dir) as mem:
            manifest = mem.export_markdown(scope, out)
        click.echo(
            f"exported {manifest['episodes']} episodes, {manifest['facts']} facts and "
            f"{len(manifest['documents'])} documents to {out}",
            err=True,
        )
        return
    if out is not None and out.is_dir():
        raise InvalidInputError(f"{out} is a directory; name a file to export to")
    with memory_for(data_dir) as mem:
        lines = (json.dumps(r, ensure_ascii=False) + "\n" for r in mem.export(scope))
        if out is None:
            for line in lines:
                click.echo(line, nl=False)
            return
        # a file is written whole under a temporary name, then renamed over it; a pipe or a
        # device is written through
        through = out.exists() and not out.is_file()
        dest = out if through else out.with_name(out.name + ".tmp")
        try:
            with dest.open("w", encoding="utf-8") as fh:
                fh.writelines(lines)
            if not through:
                dest.replace(out)
        except OSError as exc:
            if not through:
                with suppress(OSError):
                    dest.unlink(missing_ok=True)
            raise InvalidInputError(f"cannot write {out}: {exc.strerror or exc}") from exc
    click.echo(f"exported to {out}", err=True)


@cli.command(
    name="import",
    help="Restore a markdown export directory into an empty scope (into another user with "
    "--user: every id new, so a copy can sit beside its original).",
)
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--user", default=None, help="Restore into this user (default: the exported one).")
@data_dir_option
@json_option
def import_(directory: Path, user: str | None, data_dir: Path | None, as_json: bool) -> None:
    from memstrata.codec import scope_to_json

    with memory_for(data_dir, create=True) as mem:
        scope = mem.import_markdown(directory, user=user)
        stats = stats_to_json(mem.stats(scope))
    if as_json:
        print_json({"scope": scope_to_json(scope), "stats": stats})
    else:
        click.echo(
            f"restored {stats['episodes']} episodes and {stats['facts_current']} current "
            f"facts into {scope}"
        )


@cli.command(
    help="Run the HTTP server (loads the sample memory into an empty store). Every request "
    "needs an API key; the first start writes an admin key to <data dir>/admin.key."
)
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1).")
@click.option("--port", default=None, type=click.IntRange(1, 65535), help="Port (default 8765).")
@click.option(
    "--workers",
    default=None,
    type=click.IntRange(1, 64),
    help="Server processes sharing the port (default 1).",
)
@click.option(
    "--log-format",
    default=None,
    type=click.Choice(["auto", "json", "text"]),
    help="Log lines as JSON or text (default auto: text on a terminal, else JSON).",
)
@click.option("--no-sample", is_flag=True, help="Do not load the sample memory.")
@click.option(
    "--local",
    is_flag=True,
    help="Serve without API keys: binds only the loopback and answers only requests for "
    'localhost (auth = "local").',
)
@data_dir_option
def serve(
    host: str | None,
    port: int | None,
    workers: int | None,
    log_format: str | None,
    no_sample: bool,
    local: bool,
    data_dir: Path | None,
) -> None:
    from memstrata.server import serve as run_server

    settings = settings_for(
        data_dir=data_dir,
        host=host,
        port=port,
        workers=workers,
        log_format=log_format,
        load_sample=False if no_sample else None,
        auth="local" if local else None,
    )
    run_server(settings)


@cli.command(name="wake-up", help="L0 identity and L1 essentials within a token budget.")
@scope_options
@click.option("--budget", default=800, show_default=True, type=click.IntRange(80, 100_000))
@data_dir_option
@json_option
def wake_up(
    scope_args: ScopeArgs,
    budget: int,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.server.schemas.serving import WakeUpOut

    with memory_for(data_dir) as mem:
        result = mem.wake_up(scope_args.scope(), budget=budget)
    if as_json:
        print_json(WakeUpOut.of(result).model_dump())
    else:
        click.echo(result.text)


@cli.command(help="L2: what memory holds about a topic, within a token budget.")
@click.argument("topic")
@scope_options
@click.option("--budget", default=1200, show_default=True, type=click.IntRange(80, 100_000))
@data_dir_option
@json_option
def recall(
    topic: str,
    scope_args: ScopeArgs,
    budget: int,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.server.schemas.serving import RecallOut

    with memory_for(data_dir) as mem:
        result = mem.recall(topic, scope_args.scope(), budget=budget)
    if as_json:
        print_json(RecallOut.of(result).model_dump())
    else:
        click.echo(result.text)


@cli.command(help="A <memory> block for a query, within a token budget.")
@click.argument("query")
@scope_options
@click.option("--budget", default=1000, show_default=True, type=click.IntRange(50, 100_000))
@click.option("--explain", is_flag=True, help="Say why each item is in and what was cut.")
@data_dir_option
@json_option
def context(
    query: str,
    scope_args: ScopeArgs,
    budget: int,
    explain: bool,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.server.schemas.serving import ContextOut

    with memory_for(data_dir) as mem:
        result = mem.context(query, scope_args.scope(), budget=budget)
    if as_json:
        shown = ContextOut.of(result, explain=explain)
        print_json(shown.model_dump(exclude=None if explain else {"explain"}))
        return
    click.echo(result.text or f"(no memory needed: route {result.route})")
    if explain:
        for entry in result.explain():
            mark = "+" if entry["included"] else "-"
            click.echo(f"{mark} {entry['kind']} {entry['id']}: {entry['why']}", err=True)


# The other command modules register their commands on the same group.
from memstrata.cli import (  # noqa: E402
    bench_commands,
    compact_commands,
    curate_commands,
    doc_commands,
    doctor_commands,
    fact_commands,
    index_commands,
    keys_commands,
    mcp_commands,
    proxy_commands,
    sites_commands,
    store_commands,
)

__all__ = [
    "bench_commands",
    "cli",
    "compact_commands",
    "curate_commands",
    "doc_commands",
    "doctor_commands",
    "fact_commands",
    "index_commands",
    "keys_commands",
    "mcp_commands",
    "proxy_commands",
    "sites_commands",
    "store_commands",
]
