"""The commands of the ``memstrata`` CLI."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import click

from memstrata.codec import format_time, item_version_to_json, record_to_json, stats_to_json
from memstrata.errors import InvalidInputError

if TYPE_CHECKING:
    from memstrata.api import Memory
    from memstrata.model import Scope

F = TypeVar("F", bound=Callable[..., Any])


def data_dir_option(func: F) -> F:
    return click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Data directory (default: $MEMSTRATA_DATA_DIR or ~/.local/share/memstrata).",
    )(func)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def scope_options(func: F) -> F:
    func = click.option("--agent", default=None, help="Agent id (optional).")(func)
    func = click.option("--thread", default=None, help="Thread id (optional).")(func)
    return click.option("--user", required=True, help="User id (the scope's owner).")(func)


def _memory(data_dir: Path | None) -> Memory:
    from memstrata.api import Memory
    from memstrata.settings import load_settings

    return Memory.open(settings=load_settings(data_dir=data_dir))


def _scope(user: str, thread: str | None, agent: str | None) -> Scope:
    from memstrata.model import Scope

    return Scope(user, thread, agent)


def _print_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def _when(value: datetime) -> str:
    return format_time(value)[:19].replace("T", " ")


def _describe(record: Any) -> str:
    data = record_to_json(record)
    if data["kind"] == "episode":
        return (
            f"{data['id']}  [{data['session_id']}] {_when(record.time)}  "
            f"{data['speaker']}: {data['text']}"
        )
    if data["kind"] == "fact":
        state = "current" if record.valid_to is None else f"ended {_when(record.valid_to)}"
        return (
            f"{data['id']}  v{data['version']} {data['category']} ({state}, "
            f"confidence {data['confidence']:.2f}, importance {data['importance']:.2f})\n"
            f"  {data['text']}\n  sources: {', '.join(data['sources'])}"
        )
    return f"{data['id']}  v{data['version']} {data['doc_kind']}/{data['key']}\n" + json.dumps(
        data["content"], ensure_ascii=False, indent=2
    )


@click.group(help="memstrata: layered, auditable long-term memory for LLM agents.")
@click.version_option(package_name="memstrata")
def cli() -> None:
    """The command group."""


@cli.command(help="Create the data directory and the database.")
@data_dir_option
@json_option
def init(data_dir: Path | None, as_json: bool) -> None:
    from memstrata.api import Memory
    from memstrata.settings import load_settings

    settings = load_settings(data_dir=data_dir)
    with Memory.open(settings=settings) as mem:
        info = {
            "data_dir": str(settings.data_dir),
            "database": str(settings.db_path),
            "migrations": mem.store.applied_migrations(),
        }
    if as_json:
        _print_json(info)
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
    user: str,
    thread: str | None,
    agent: str | None,
    speaker: str | None,
    role: str,
    session_id: str | None,
    surface: str,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.model import Role, Turn

    if text == ("-",):
        lines = [line.rstrip("\n") for line in sys.stdin if line.strip()]
    else:
        lines = [" ".join(text)]
    turns = [Turn(text=line, speaker=speaker, role=Role(role)) for line in lines]
    with _memory(data_dir) as mem:
        episodes = mem.remember(
            turns, _scope(user, thread, agent), surface=surface, session_id=session_id
        )
    if as_json:
        _print_json([record_to_json(e) for e in episodes])
    else:
        for ep in episodes:
            click.echo(ep.id)


@cli.command(help="Import a conversation file; each conversation becomes a thread of --user.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(["locomo", "longmemeval", "madial", "jsonl"]),
    help="The file's format.",
)
@click.option("--user", required=True, help="User id that receives the conversations.")
@data_dir_option
@json_option
def ingest(file: Path, fmt: str, user: str, data_dir: Path | None, as_json: bool) -> None:
    from memstrata import importers

    batch = importers.load(file, fmt)  # parse and check the whole file before opening the store
    with _memory(data_dir) as mem:
        report = mem.ingest(batch, user)
    summary = {
        "source": report.source,
        "format": report.format,
        "conversations": report.conversations,
        "turns": report.turns,
        "questions": report.questions,
        "threads": [s.thread for s in report.scopes],
        "seconds": round(report.seconds, 4),
        "turns_per_s": round(report.turns_per_s, 1),
    }
    if as_json:
        _print_json(summary)
    else:
        click.echo(
            f"imported {report.turns} turns in {report.conversations} conversation(s) "
            f"into user {user} ({summary['turns_per_s']} turns/s)"
        )


@cli.command(help="Show one episode, fact or document.")
@click.argument("item_id")
@scope_options
@data_dir_option
@json_option
def get(
    item_id: str,
    user: str,
    thread: str | None,
    agent: str | None,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with _memory(data_dir) as mem:
        record = mem.get(item_id, _scope(user, thread, agent))
    click.echo(
        json.dumps(record_to_json(record), ensure_ascii=False, indent=2)
        if as_json
        else _describe(record)
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
    user: str,
    thread: str | None,
    agent: str | None,
    kind: str,
    limit: int,
    after: str | None,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with _memory(data_dir) as mem:
        records = mem.list(
            _scope(user, thread, agent),
            cast(Literal["episode", "fact", "document"], kind),
            limit=limit,
            after=after,
        )
    if as_json:
        _print_json([record_to_json(r) for r in records])
    else:
        for record in records:
            click.echo(_describe(record))


@cli.command(help="Hybrid search of a scope's turns, sessions or facts.")
@click.argument("query")
@scope_options
@click.option("--k", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option(
    "--granularity",
    default="turn",
    show_default=True,
    type=click.Choice(["turn", "session", "fact"]),
)
@click.option("--speaker", default=None, help="Only turns by this speaker.")
@click.option("--session", "session_id", default=None, help="Only this session.")
@click.option("--since", type=click.DateTime(), default=None, help="Only from this time on.")
@click.option("--until", type=click.DateTime(), default=None, help="Only before this time.")
@click.option("--category", default=None, help="Only facts of this category.")
@click.option("--topic", default=None, help="Only facts of this topic.")
@data_dir_option
@json_option
def search(
    query: str,
    user: str,
    thread: str | None,
    agent: str | None,
    k: int,
    granularity: str,
    speaker: str | None,
    session_id: str | None,
    since: datetime | None,
    until: datetime | None,
    category: str | None,
    topic: str | None,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.codec import hit_to_json
    from memstrata.model import Category, SearchFilter

    try:
        cat = Category(category) if category else None
    except ValueError:
        raise InvalidInputError(f"unknown category {category!r}") from None
    filters = SearchFilter(
        speaker=speaker, session_id=session_id, since=since, until=until, category=cat, topic=topic
    )
    with _memory(data_dir) as mem:
        hits = mem.search(
            query, _scope(user, thread, agent), k=k, granularity=granularity, filters=filters
        )
    if as_json:
        _print_json([hit_to_json(h) for h in hits])
        return
    for rank, hit in enumerate(hits, 1):
        click.echo(f"{rank:>2}. {hit.score:6.3f}  {hit.id}  [{hit.session_id or '-'}] {hit.text}")


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
    user: str,
    thread: str | None,
    agent: str | None,
    reason: str,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with _memory(data_dir) as mem:
        report = mem.delete(item_id, _scope(user, thread, agent), reason=reason)
    if as_json:
        _print_json({"deleted": list(report.deleted), "cascaded": list(report.cascaded)})
    else:
        extra = f" and {len(report.cascaded)} fact(s) citing only it" if report.cascaded else ""
        click.echo(f"deleted {item_id}{extra}")


@cli.command(help="Forget an item on request, with the facts and bullets derived from it.")
@click.argument("item_id")
@scope_options
@data_dir_option
@json_option
def forget(
    item_id: str,
    user: str,
    thread: str | None,
    agent: str | None,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with _memory(data_dir) as mem:
        report = mem.forget(item_id, _scope(user, thread, agent))
    if as_json:
        _print_json({"deleted": list(report.deleted), "cascaded": list(report.cascaded)})
    else:
        click.echo(f"forgot {item_id} and {len(report.cascaded)} item(s) derived from it")


@cli.command(help="Show every version of an item, oldest first.")
@click.argument("item_id")
@scope_options
@data_dir_option
@json_option
def history(
    item_id: str,
    user: str,
    thread: str | None,
    agent: str | None,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with _memory(data_dir) as mem:
        entries = mem.history(item_id, _scope(user, thread, agent))
    if as_json:
        _print_json([item_version_to_json(e) for e in entries])
        return
    for e in entries:
        reason = f" ({e.reason})" if e.reason else ""
        text = e.data.get("text", "") if isinstance(e.data, dict) else ""
        click.echo(f"v{e.version} {e.op.value}{reason} at {_when(e.at)}  {text}".rstrip())


@cli.command(help="Count what a scope holds.")
@scope_options
@data_dir_option
@json_option
def stats(
    user: str, thread: str | None, agent: str | None, data_dir: Path | None, as_json: bool
) -> None:
    with _memory(data_dir) as mem:
        result = stats_to_json(mem.stats(_scope(user, thread, agent)))
    if as_json:
        _print_json(result)
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
    user: str,
    thread: str | None,
    agent: str | None,
    fmt: str,
    out: Path | None,
    data_dir: Path | None,
) -> None:
    if target is not None and out is not None and target != out:
        raise InvalidInputError("give the destination once: as an argument or as --out")
    out = out or target
    scope = _scope(user, thread, agent)
    if fmt == "markdown":
        if out is None:
            raise InvalidInputError("--format markdown needs --out DIR")
        if out.exists() and any(out.iterdir()):
            raise InvalidInputError(f"{out} is not empty; export into a new directory")
        with _memory(data_dir) as mem:
            manifest = mem.export_markdown(scope, out)
        click.echo(
            f"exported {manifest['episodes']} episodes, {manifest['facts']} facts and "
            f"{len(manifest['documents'])} documents to {out}",
            err=True,
        )
        return
    with _memory(data_dir) as mem:
        lines = (json.dumps(r, ensure_ascii=False) + "\n" for r in mem.export(scope))
        if out is None:
            for line in lines:
                click.echo(line, nl=False)
            return
        tmp = out.with_name(out.name + ".tmp")
        try:
            with tmp.open("w", encoding="utf-8") as fh:
                fh.writelines(lines)
            tmp.replace(out)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise InvalidInputError(f"cannot write {out}: {exc}") from exc
    click.echo(f"exported to {out}", err=True)


@cli.command(name="import", help="Restore a markdown export directory into an empty scope.")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--user", default=None, help="Restore into this user (default: the exported one).")
@data_dir_option
@json_option
def import_(directory: Path, user: str | None, data_dir: Path | None, as_json: bool) -> None:
    from memstrata.codec import scope_to_json

    with _memory(data_dir) as mem:
        scope = mem.import_markdown(directory, user=user)
        stats = stats_to_json(mem.stats(scope))
    if as_json:
        _print_json({"scope": scope_to_json(scope), "stats": stats})
    else:
        click.echo(
            f"restored {stats['episodes']} episodes and {stats['facts_current']} current "
            f"facts into {scope}"
        )


@cli.group(help="Curated documents (essentials, topics) as markdown: show, edit, diff, apply.")
def doc() -> None:
    """The doc group."""


def _load_change(path: Path) -> Any:
    """An edited markdown file, or a JSON list of operations (by content)."""
    from memstrata.document.ops import operation_from_json

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}") from exc
    if text.lstrip().startswith("["):
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"{path}: invalid JSON: {exc.msg} (line {exc.lineno})") from exc
        return [operation_from_json(item, i) for i, item in enumerate(raw)]
    return text


def _show_preview(preview: Any, as_json: bool) -> None:
    from memstrata.document.ops import operation_to_json

    if as_json:
        _print_json(
            {
                "key": preview.key,
                "base_version": preview.base_version,
                "operations": [operation_to_json(op) for op in preview.operations],
                "diff": preview.diff,
                "after": preview.after,
            }
        )
        return
    click.echo(f"{len(preview.operations)} operation(s) against version {preview.base_version}:")
    for op in preview.operations:
        click.echo("  " + json.dumps(operation_to_json(op), ensure_ascii=False))
    click.echo(preview.diff or "(no change)", nl=False)


@doc.command(name="show", help="Print a document as markdown (KEY: essentials or a topic).")
@click.argument("key")
@scope_options
@data_dir_option
@json_option
def doc_show(
    key: str, user: str, thread: str | None, agent: str | None, data_dir: Path | None, as_json: bool
) -> None:
    with _memory(data_dir) as mem:
        markdown, version = mem.doc_markdown(key, _scope(user, thread, agent))
    if as_json:
        _print_json({"key": key, "version": version, "markdown": markdown})
    else:
        click.echo(markdown, nl=False)
        click.echo(f"(version {version})", err=True)


@doc.command(name="diff", help="Preview FILE (edited markdown or JSON operations); writes nothing.")
@click.argument("key")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@scope_options
@data_dir_option
@json_option
def doc_diff(
    key: str,
    file: Path,
    user: str,
    thread: str | None,
    agent: str | None,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with _memory(data_dir) as mem:
        preview = mem.preview_doc(key, _scope(user, thread, agent), _load_change(file))
    _show_preview(preview, as_json)


@doc.command(name="apply", help="Apply FILE (edited markdown or JSON operations) atomically.")
@click.argument("key")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@scope_options
@click.option(
    "--version",
    "expected",
    required=True,
    type=click.IntRange(0),
    help="The version the change was made against (from show or diff).",
)
@data_dir_option
@json_option
def doc_apply(
    key: str,
    file: Path,
    user: str,
    thread: str | None,
    agent: str | None,
    expected: int,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    scope = _scope(user, thread, agent)
    with _memory(data_dir) as mem:
        preview = mem.preview_doc(key, scope, _load_change(file), expected_version=expected)
        _, version = mem.apply_doc(key, scope, preview.operations, expected_version=expected)
    if as_json:
        _print_json({"key": key, "version": version, "operations": len(preview.operations)})
    else:
        click.echo(f"applied {len(preview.operations)} operation(s); {key} is at version {version}")


@doc.command(name="edit", help="Edit a document in $EDITOR, preview the change, then apply it.")
@click.argument("key")
@scope_options
@click.option("--yes", is_flag=True, help="Apply without asking.")
@data_dir_option
def doc_edit(
    key: str, user: str, thread: str | None, agent: str | None, yes: bool, data_dir: Path | None
) -> None:
    scope = _scope(user, thread, agent)
    with _memory(data_dir) as mem:
        markdown, version = mem.doc_markdown(key, scope)
        edited = click.edit(markdown, extension=".md", require_save=True)
        if edited is None or edited == markdown:
            click.echo("no change")
            return
        preview = mem.preview_doc(key, scope, edited, expected_version=version)
        _show_preview(preview, False)
        if not (yes or click.confirm("apply?", default=False)):
            click.echo("not applied")
            return
        _, new_version = mem.apply_doc(key, scope, preview.operations, expected_version=version)
    click.echo(f"applied; {key} is at version {new_version}")


@cli.group(help="The L0 identity: a plain text the user writes.")
def identity() -> None:
    """The identity group."""


@identity.command(name="show", help="Print the identity text.")
@scope_options
@data_dir_option
@json_option
def identity_show(
    user: str, thread: str | None, agent: str | None, data_dir: Path | None, as_json: bool
) -> None:
    with _memory(data_dir) as mem:
        ident = mem.identity(_scope(user, thread, agent))
    if as_json:
        _print_json({"text": ident.text, "version": ident.version})
    else:
        click.echo(ident.text)


@identity.command(name="edit", help="Edit the identity in $EDITOR, or set it from --file.")
@scope_options
@click.option(
    "--file",
    "source",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Read the new text from this file ('-' is not accepted).",
)
@data_dir_option
def identity_edit(
    user: str, thread: str | None, agent: str | None, source: Path | None, data_dir: Path | None
) -> None:
    scope = _scope(user, thread, agent)
    with _memory(data_dir) as mem:
        current = mem.identity(scope)
        if source is not None:
            text: str | None = source.read_text(encoding="utf-8")
        else:
            text = click.edit(current.text + "\n", extension=".md", require_save=True)
        if text is None:
            click.echo("no change")
            return
        text = text[:-1] if text.endswith("\n") else text
        if text == current.text:
            click.echo("no change")
            return
        updated = mem.set_identity(text, scope, expected_version=current.version)
    click.echo(f"identity saved (version {updated.version})")


@cli.command(help="Run the HTTP server (loads the sample memory into an empty store).")
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1).")
@click.option("--port", default=None, type=click.IntRange(1, 65535), help="Port (default 8765).")
@click.option("--no-sample", is_flag=True, help="Do not load the sample memory.")
@data_dir_option
def serve(host: str | None, port: int | None, no_sample: bool, data_dir: Path | None) -> None:
    from memstrata.server import serve as run_server
    from memstrata.settings import load_settings

    settings = load_settings(
        data_dir=data_dir, host=host, port=port, load_sample=False if no_sample else None
    )
    run_server(settings)


@cli.group(help="Benchmarks (medians over runs, measured on this machine).")
def bench() -> None:
    """The bench group."""


@bench.command(name="ingest", help="Ingest throughput of a conversation file (no embeddings).")
@click.option(
    "--data", "path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--format",
    "fmt",
    default="locomo",
    show_default=True,
    type=click.Choice(["locomo", "longmemeval", "madial", "jsonl"]),
)
@click.option("--runs", default=5, show_default=True, type=click.IntRange(1, 100))
@click.option("--no-trace", is_flag=True, help="Do not write the raw trace.")
@json_option
def bench_ingest(path: Path, fmt: str, runs: int, no_trace: bool, as_json: bool) -> None:
    from memstrata.bench.ingest import run_ingest_bench

    result = run_ingest_bench(path, fmt, runs=runs, trace=not no_trace)
    if as_json:
        _print_json(result)
    else:
        click.echo(
            f"{result['turns']} turns: {result['ingest_turns_per_s']} turns/s "
            f"(median of {runs}; parse {result['parse_ms_p50']} ms, "
            f"store {result['store_ms_p50']} ms)"
        )


def _bench_options(func: F) -> F:
    func = click.option(
        "--embedding-cache",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Vector cache kept between runs (default ~/.cache/memstrata).",
    )(func)
    return click.option(
        "--data",
        "path",
        required=True,
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="The benchmark file.",
    )(func)


def _print_bench(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        _print_json(result)
        return
    for key, value in result.items():
        click.echo(f"{key}: {json.dumps(value, ensure_ascii=False)}")


@bench.command(name="locomo", help="Turn and session evidence recall on LoCoMo (no LLM).")
@_bench_options
@click.option(
    "--limit", type=click.IntRange(1), default=None, help="Only the first N conversations."
)
@json_option
def bench_locomo(
    path: Path, embedding_cache: Path | None, limit: int | None, as_json: bool
) -> None:
    from memstrata.bench.locomo import run_locomo
    from memstrata.bench.runner import bench_memory

    with bench_memory(embedding_cache=embedding_cache) as memory:
        _print_bench(run_locomo(memory, path, limit=limit), as_json)


@bench.command(name="longmemeval", help="recall_any / recall_all on LongMemEval haystacks.")
@_bench_options
@json_option
def bench_longmemeval(path: Path, embedding_cache: Path | None, as_json: bool) -> None:
    from memstrata.bench.longmemeval import run_longmemeval
    from memstrata.bench.runner import bench_memory

    with bench_memory(embedding_cache=embedding_cache) as memory:
        _print_bench(run_longmemeval(memory, path), as_json)


@bench.command(name="madial", help="Recall of the memories a MADial dialogue should bring up.")
@_bench_options
@json_option
def bench_madial(path: Path, embedding_cache: Path | None, as_json: bool) -> None:
    from memstrata.bench.madial import run_madial
    from memstrata.bench.runner import bench_memory

    with bench_memory(embedding_cache=embedding_cache) as memory:
        _print_bench(run_madial(memory, path), as_json)


@bench.command(name="scale", help="Search latency and index memory at growing scope sizes.")
@click.option(
    "--sizes",
    default="1000,10000,100000",
    show_default=True,
    help="Comma-separated numbers of synthetic turns.",
)
@click.option("--queries", default=50, show_default=True, type=click.IntRange(1, 10_000))
@json_option
def bench_scale(sizes: str, queries: int, as_json: bool) -> None:
    from memstrata.bench.scale import run_scale
    from memstrata.embed import create_embedder
    from memstrata.settings import load_settings

    try:
        numbers = [int(s) for s in sizes.split(",") if s.strip()]
    except ValueError:
        raise InvalidInputError(f"--sizes must be numbers separated by commas: {sizes!r}") from None
    if not numbers or min(numbers) < 1:
        raise InvalidInputError("--sizes needs at least one positive number")
    embedder = create_embedder(load_settings().embedder)
    _print_bench(run_scale(embedder, numbers, queries=queries), as_json)


@bench.command(name="extraction", help="Rule extractor recall of LoCoMo's gold observations.")
@click.option(
    "--data", "path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--sample",
    default=40,
    show_default=True,
    type=click.IntRange(0, 1000),
    help="Extracted facts to print for judging precision by hand.",
)
@json_option
def bench_extraction(path: Path, sample: int, as_json: bool) -> None:
    from memstrata.bench.extraction import run_extraction
    from memstrata.curate.extract_rules import RuleExtractor

    _print_bench(run_extraction(RuleExtractor(), path, sample=sample), as_json)


@cli.command(help="Consolidate curated documents: update, audit or dedup.")
@scope_options
@click.option(
    "--mode",
    default="update",
    show_default=True,
    type=click.Choice(["update", "audit", "dedup"]),
    help="update: new facts become cited bullets; audit: check bullets against their "
    "evidence; dedup: merge near-duplicate bullets.",
)
@click.option(
    "--extract/--no-extract",
    default=True,
    show_default=True,
    help="update: extract facts from new turns first.",
)
@click.option("--remove", is_flag=True, help="audit: delete the unsupported bullets.")
@click.option("--follow", is_flag=True, help="Print progress events (on stderr) as they happen.")
@data_dir_option
@json_option
def consolidate(
    user: str,
    thread: str | None,
    agent: str | None,
    mode: str,
    extract: bool,
    remove: bool,
    follow: bool,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    scope = _scope(user, thread, agent)
    with _memory(data_dir) as mem:
        if follow:
            mem.runs.subscribe(
                lambda e: click.echo(
                    f"[{e.seq}] {e.kind} {json.dumps(dict(e.data), ensure_ascii=False)}",
                    err=True,
                )
            )
        extracted = mem.extract(scope) if extract and mode == "update" else None
        report = mem.consolidate(scope, mode=mode, remove=remove)
    result = {
        "mode": mode,
        "extracted": len(extracted.stored) if extracted else 0,
        "extraction_failures": extracted.failures if extracted else [],
        "facts_read": report.facts_read,
        "documents": report.documents,
        "bullets_added": report.added,
        "bullets_removed": report.removed,
        "bullets_merged": report.merged,
        "promoted": report.promoted,
        "findings": [
            {"document": f.key, "bullet": f.bullet_id, "problem": f.problem, "support": f.support}
            for f in report.findings
        ],
    }
    if as_json:
        _print_json(result)
        return
    click.echo(
        f"{mode}: extracted {result['extracted']} fact(s); {report.added} bullet(s) "
        f"added, {report.removed} removed, {report.merged} merged in "
        f"{len(report.documents)} document(s)"
    )
    for finding in report.findings:
        click.echo(
            f"  {finding.problem}: {finding.key} {finding.bullet_id} (support {finding.support})"
        )
