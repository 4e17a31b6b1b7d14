"""The ``bench`` group: benchmarks, measured on this machine."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memstrata.cli.base import (
    F,
    cli,
    json_option,
    print_json,
    settings_for,
)
from memstrata.errors import InvalidInputError

if TYPE_CHECKING:
    from memstrata.api import Memory


@cli.group(help="Benchmarks (medians over runs, measured on this machine).")
def bench() -> None:
    """The bench group."""


def _conversation_file(func: F) -> F:
    """``--data FILE`` and its ``--format``, for the benches that read a conversation file."""
    func = click.option(
        "--format",
        "fmt",
        default="locomo",
        show_default=True,
        type=click.Choice(["locomo", "longmemeval", "madial", "jsonl"]),
    )(func)
    return click.option(
        "--data",
        "path",
        required=True,
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
    )(func)


@bench.command(name="ingest", help="Ingest throughput of a conversation file (no embeddings).")
@_conversation_file
@click.option("--runs", default=5, show_default=True, type=click.IntRange(1, 100))
@click.option("--no-trace", is_flag=True, help="Do not write the raw trace.")
@json_option
def bench_ingest(path: Path, fmt: str, runs: int, no_trace: bool, as_json: bool) -> None:
    from memstrata.bench.ingest import run_ingest_bench

    result = run_ingest_bench(path, fmt, runs=runs, trace=not no_trace)
    if as_json:
        print_json(result)
    else:
        click.echo(
            f"{result['turns']} turns: {result['ingest_turns_per_s']} turns/s "
            f"(median of {runs}; parse {result['parse_ms_p50']} ms, "
            f"store {result['store_ms_p50']} ms)"
        )


@bench.command(
    name="stores",
    help="Record stores side by side: ingest, search and single writes through each "
    "(hashing embedder; SQLite in a temporary directory, and each --store URL).",
)
@_conversation_file
@click.option(
    "--store",
    "specs",
    multiple=True,
    metavar="NAME=URL",
    help="A server store to measure beside SQLite, e.g. pg=postgresql://u@host/db "
    "(repeatable). The bench writes under a user of its own and forgets it at the end.",
)
@click.option("--queries", default=50, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--writes", default=100, show_default=True, type=click.IntRange(1, 100_000))
@json_option
def bench_stores(
    path: Path, fmt: str, specs: tuple[str, ...], queries: int, writes: int, as_json: bool
) -> None:
    from memstrata.bench.stores import run_stores_bench

    stores: list[tuple[str, str | None]] = [("sqlite", None)]
    for spec in specs:
        name, sep, url = spec.partition("=")
        if not sep or not name.strip() or not url.strip():
            raise InvalidInputError("--store takes NAME=URL, e.g. pg=postgresql://user@host/db")
        stores.append((name.strip(), url.strip()))
    result = run_stores_bench(path, fmt, stores, queries=queries, writes=writes)
    if as_json:
        print_json(result)
        return
    click.echo(f"{result['turns']} turns, {result['queries']} searches, {writes} single writes")
    click.echo("store        ingest/s  search p50/p95 ms  writes/s  write+search p50 ms")
    rows: list[dict[str, Any]] = result["stores"]
    for row in rows:
        click.echo(
            f"{row['store']:<12} {row['ingest_turns_per_s']:>8}  "
            f"{row['search_p50_ms']:>7} / {row['search_p95_ms']:<7}  "
            f"{row['writes_per_s']:>8}  {row['write_then_search_p50_ms']:>8}"
        )


@bench.command(
    name="index",
    help="Raw text to searchable: ingest, then embed and index every turn, with the configured "
    "embedder and a new, empty embedding cache (turns/s, texts embedded, peak memory).",
)
@_conversation_file
@click.option(
    "--limit", type=click.IntRange(1), default=None, help="Only the first N conversations."
)
@json_option
def bench_index(path: Path, fmt: str, limit: int | None, as_json: bool) -> None:
    from memstrata.bench.index import run_index_bench

    result = run_index_bench(path, fmt, limit=limit, settings=settings_for())
    if as_json:
        print_json(result)
    else:
        click.echo(
            f"{result['turns']} turns searchable in {result['total_s']} s: "
            f"{result['turns_per_s']} turns/s (ingest {result['ingest_turns_per_s']} turns/s, "
            f"embedding and indexing {result['index_turns_per_s']} turns/s); "
            f"{result['texts_embedded']} texts embedded by {result['embedder']}; "
            f"peak RSS {result['peak_rss_mb']} MiB"
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


def _in_bench_memory(
    run: Callable[[Memory], dict[str, Any]], embedding_cache: Path | None, as_json: bool
) -> None:
    """Run a retrieval benchmark in a fresh memory and print its result."""
    from memstrata.bench.runner import bench_memory

    with bench_memory(embedding_cache=embedding_cache) as memory:
        _print_bench(run(memory), as_json)


def _print_bench(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(result)
        return
    for key, value in result.items():
        click.echo(f"{key}: {json.dumps(value, ensure_ascii=False)}")


@bench.command(name="locomo", help="Turn and session evidence recall on LoCoMo (no LLM).")
@_bench_options
@click.option(
    "--limit", type=click.IntRange(1), default=None, help="Only the first N conversations."
)
@click.option(
    "--curate",
    is_flag=True,
    help="Curate each conversation offline first (rule extraction, then consolidation), so "
    "curated memory competes with the turns in context().",
)
@json_option
def bench_locomo(
    path: Path, embedding_cache: Path | None, limit: int | None, curate: bool, as_json: bool
) -> None:
    from memstrata.bench.locomo import run_locomo

    _in_bench_memory(
        lambda m: run_locomo(m, path, limit=limit, curate=curate), embedding_cache, as_json
    )


@bench.command(
    name="qa",
    help="Answer LoCoMo questions with the configured chat model from context() at a budget; "
    "token F1, LLM judge (J) and tokens per question. Needs the llm setting.",
)
@_bench_options
@click.option(
    "--budget",
    default=1000,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Tokens of memory context per question.",
)
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first N questions.")
@json_option
def bench_qa(
    path: Path, embedding_cache: Path | None, budget: int, limit: int | None, as_json: bool
) -> None:
    from memstrata.errors import ConfigError
    from memstrata.settings import load_settings

    settings = load_settings()
    if settings.llm is None:
        raise ConfigError(
            "bench qa answers with a chat model and none is configured: set the llm setting "
            "(e.g. MEMSTRATA_LLM__BASE_URL and MEMSTRATA_LLM__MODEL)"
        )
    from memstrata.bench.qa import run_qa
    from memstrata.llm.openai_compat import OpenAIChat

    llm = OpenAIChat.from_settings(settings.llm)
    _in_bench_memory(
        lambda m: run_qa(m, path, llm, budget=budget, limit=limit), embedding_cache, as_json
    )


@bench.command(name="longmemeval", help="recall_any / recall_all on LongMemEval haystacks.")
@_bench_options
@json_option
def bench_longmemeval(path: Path, embedding_cache: Path | None, as_json: bool) -> None:
    from memstrata.bench.longmemeval import run_longmemeval

    _in_bench_memory(lambda m: run_longmemeval(m, path), embedding_cache, as_json)


@bench.command(name="madial", help="Recall of the memories a MADial dialogue should bring up.")
@_bench_options
@click.option(
    "--rerank",
    is_flag=True,
    help="Let the configured chat model (setting llm) reorder each dialogue's best hits.",
)
@json_option
def bench_madial(path: Path, embedding_cache: Path | None, rerank: bool, as_json: bool) -> None:
    from memstrata.bench.madial import run_madial

    _in_bench_memory(lambda m: run_madial(m, path, rerank=rerank), embedding_cache, as_json)


@bench.command(
    name="scale", help="Search latency, index memory and build time at growing scope sizes."
)
@click.option(
    "--sizes",
    default="1000,10000,100000",
    show_default=True,
    help="Comma-separated numbers of synthetic turns (up to 1,000,000 and more).",
)
@click.option("--queries", default=100, show_default=True, type=click.IntRange(1, 10_000))
@click.option(
    "--plot",
    "plot_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write PNG plots of the curves into this directory (needs memstrata[bench]).",
)
@json_option
def bench_scale(sizes: str, queries: int, plot_dir: Path | None, as_json: bool) -> None:
    from memstrata.bench.scale import run_scale
    from memstrata.embed import create_embedder

    try:
        numbers = [int(s) for s in sizes.split(",") if s.strip()]
    except ValueError:
        raise InvalidInputError(f"--sizes must be numbers separated by commas: {sizes!r}") from None
    if not numbers or min(numbers) < 1:
        raise InvalidInputError("--sizes needs at least one positive number")
    embedder = create_embedder(settings_for().embedder)
    result = run_scale(
        embedder,
        numbers,
        queries=queries,
        progress=lambda size, row: click.echo(
            f"{size} turns: {json.dumps(row, ensure_ascii=False)}", err=True
        ),
    )
    if plot_dir is not None:
        from memstrata.bench.plots import plot_scale

        result["plots"] = [str(p) for p in plot_scale(result, plot_dir)]
    _print_bench(result, as_json)


@bench.command(
    name="cold-open",
    help="Open a data directory of N embedded turns in a new process and time its first query.",
)
@click.option("--turns", default=100_000, show_default=True, type=click.IntRange(1, 10_000_000))
@click.option("--opens", default=3, show_default=True, type=click.IntRange(1, 100))
@click.option(
    "--dir",
    "data_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Data directory to fill (default: a new temporary one).",
)
@json_option
def bench_cold_open(turns: int, opens: int, data_dir: Path | None, as_json: bool) -> None:
    from memstrata.bench.cold_open import run_cold_open

    result = run_cold_open(turns, opens=opens, data_dir=data_dir)
    if as_json:
        print_json(result)
        return
    prepared = result["prepare"]
    assert isinstance(prepared, dict)
    click.echo(
        f"{turns} turns: first hits {result['open_to_first_hits_s_p50']} s after the open "
        f"(median of {opens}), peak RSS {result['peak_rss_mb_p50']} MB, "
        f"{prepared['snapshot_bytes_per_100k_turns']} bytes on disk per 100,000 turns"
    )


@bench.command(name="plot", help="PNG plots of a saved `bench scale --json` result.")
@click.argument("result_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory the PNG files are written to.",
)
def bench_plot(result_file: Path, out_dir: Path) -> None:
    from memstrata.bench.plots import plot_scale

    try:
        result = json.loads(result_file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"{result_file} is not a JSON file: {exc}") from exc
    if not isinstance(result, dict):
        raise InvalidInputError(f"{result_file} does not hold a bench scale result")
    for path in plot_scale(result, out_dir):
        click.echo(str(path))


@bench.command(
    name="extraction",
    help="Extracted facts against LoCoMo's gold observations: strict and lenient scores, and "
    "the share of flawed facts extracted and served by wake_up.",
)
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
@click.option(
    "--budget",
    default=800,
    show_default=True,
    type=click.IntRange(64, 100_000),
    help="Token budget of the wake_up whose bullets are judged.",
)
@json_option
def bench_extraction(path: Path, sample: int, budget: int, as_json: bool) -> None:
    from memstrata.bench.extraction import run_extraction
    from memstrata.bench.runner import bench_memory
    from memstrata.curate.extract_rules import RuleExtractor
    from memstrata.embed.fake import HashingEmbedder

    with bench_memory(embedder=HashingEmbedder()) as memory:  # nothing here embeds
        result = run_extraction(RuleExtractor(), path, sample=sample, memory=memory, budget=budget)
    if as_json:
        print_json(result)
    else:
        click.echo(_extraction_table(result))


_FLAW_LABELS = {
    "dangling": "dangling referent",
    "listener": "listener addressed",
    "question": "question",
    "broken_verb": "broken verb",
    "any": "any of these",
}


def _extraction_table(result: dict[str, Any]) -> str:
    """The extraction bench as a table: scores, then flaw shares of facts and of wake_up."""
    facts, served = result["fact_quality"], result["wake_up_quality"]
    lines = [
        f"extraction ({result['extractor']}): {result['conversations']} conversations, "
        f"{result['observations']} gold observations, {result['facts']} facts, "
        f"{result['elapsed_s']} s",
        "",
        f"{'':<22}{'value':>8}",
    ]
    for key, label in (
        ("strict_precision", "strict precision"),
        ("strict_recall", "strict recall"),
        ("strict_f1", "strict F1"),
        ("observation_recall", "lenient recall"),
    ):
        lines.append(f"{label:<22}{result[key]:>8.3f}")
    oracle = result["oracle_whole_turns"]
    lines.append(
        f"(an oracle taking each gold evidence turn whole: precision "
        f"{oracle['strict_precision']:.3f}, recall {oracle['strict_recall']:.3f}, "
        f"F1 {oracle['strict_f1']:.3f})"
    )
    lines += ["", f"{'share of':<22}{'facts':>8}{'wake_up':>10}"]
    lines.append(f"{'(count)':<22}{facts['count']:>8}{served['count']:>10}")
    for key, label in _FLAW_LABELS.items():
        lines.append(f"{label:<22}{facts['shares'][key]:>8.1%}{served['shares'][key]:>10.1%}")
    lines += ["", f"wake_up at {served['budget']} tokens; examples of extracted facts:"]
    for key, examples in facts["examples"].items():
        for text in examples:
            lines.append(f"  [{_FLAW_LABELS[key]}] {text}")
    if result["sample"]:
        lines += ["", "sample for judging by hand (fact <- turn):"]
        for item in result["sample"]:
            lines.append(f"  {item['fact']}  <-  {item['turn']}")
    return "\n".join(lines)


@bench.command(
    name="handed",
    help="What every session is handed (wake_up) and what context() serves per question, on "
    "realistic conversations (the shipped dev and held-out sets, or --data): current facts and "
    "stale values served, safety facts, trivia, dated events, whole slot values, cut values; "
    "with --locomo, LoCoMo's flawed wake_up bullets and profile slots per speaker. Offline "
    "defaults, no chat model.",
)
@click.option(
    "--set",
    "which",
    type=click.Choice(["dev", "heldout", "all"]),
    default=None,
    help="The shipped set to run (default all: every set that exists).",
)
@click.option(
    "--data",
    "paths",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Conversation files, or directories of them, to run instead of a shipped set "
    "(repeatable).",
)
@click.option(
    "--budget",
    default=800,
    show_default=True,
    type=click.IntRange(64, 100_000),
    help="Tokens of wake_up (safety is also measured at 160).",
)
@click.option(
    "--context-budget",
    default=1000,
    show_default=True,
    type=click.IntRange(50, 100_000),
    help="Tokens of context() per question.",
)
@click.option(
    "--embedder",
    "embedder_kind",
    type=click.Choice(["default", "hashing"]),
    default="default",
    show_default=True,
    help="default: the default models (vectors cached in --embedding-cache); hashing: the "
    "feature-hashing embedder, no model (context() then ranks by words alone).",
)
@click.option(
    "--embedding-cache",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Vector cache kept between runs (default ~/.cache/memstrata).",
)
@click.option(
    "--locomo",
    "locomo_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A LoCoMo file (e.g. ../shared/data/locomo/locomo_dev.json) for its flawed "
    "wake_up bullets and profile slots per main speaker; skipped without it.",
)
@click.option(
    "--show", is_flag=True, help="Also print each wake_up text and each question's context."
)
@json_option
def bench_handed(
    which: str | None,
    paths: tuple[Path, ...],
    budget: int,
    context_budget: int,
    embedder_kind: str,
    embedding_cache: Path | None,
    locomo_path: Path | None,
    show: bool,
    as_json: bool,
) -> None:
    from memstrata.bench.handed import (
        default_embedder,
        handed_show,
        handed_table,
        hashing_embedder,
        locomo_figures,
        run_handed,
    )
    from memstrata.bench.handed_files import load_paths, load_sets

    if paths and which is not None:
        raise InvalidInputError("give --set or --data, not both")
    conversations = load_paths(paths) if paths else load_sets(which or "all")
    result = run_handed(
        conversations,
        budget=budget,
        context_budget=context_budget,
        make_embedder=hashing_embedder
        if embedder_kind == "hashing"
        else default_embedder(embedding_cache),
        progress=lambda text: click.echo(text, err=True),
    )
    if locomo_path is None:
        result["locomo"] = {"skipped": "no --locomo FILE given"}
    else:
        result["locomo"] = locomo_figures(locomo_path, budget=budget)
    if as_json:
        print_json(result)
        return
    if show:
        click.echo(handed_show(result))
    click.echo(handed_table(result))


@bench.command(name="wake-up", help="wake_up latency for a scope with many facts.")
@click.option("--facts", default=10_000, show_default=True, type=click.IntRange(1, 1_000_000))
@click.option("--calls", default=20, show_default=True, type=click.IntRange(2, 10_000))
@json_option
def bench_wakeup(facts: int, calls: int, as_json: bool) -> None:
    from memstrata.bench.wakeup import run_wakeup

    _print_bench(run_wakeup(facts, calls=calls), as_json)


@bench.command(name="profile", help="Profile slots L1 fills per main speaker (LoCoMo file).")
@click.option(
    "--data", "path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@json_option
def bench_profile(path: Path, as_json: bool) -> None:
    from memstrata.bench.profile_slots import profile_table, run_profile_slots
    from memstrata.bench.runner import bench_memory
    from memstrata.embed.fake import HashingEmbedder

    with bench_memory(embedder=HashingEmbedder()) as memory:  # nothing here embeds
        result = run_profile_slots(memory, path)
    if as_json:
        print_json(result)
    else:
        click.echo(profile_table(result))


@bench.command(
    name="serve",
    help="Requests/s and p50/p95 latency of the HTTP server (search, context, remember) under "
    "concurrent clients on loopback, over a scope of synthetic bilingual turns.",
)
@click.option("--turns", default=10_000, show_default=True, type=click.IntRange(1, 1_000_000))
@click.option("--clients", default=16, show_default=True, type=click.IntRange(1, 256))
@click.option(
    "--requests",
    default=50,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Timed requests per client and route.",
)
@click.option(
    "--workers",
    default="1",
    show_default=True,
    help="Comma-separated server process counts, each measured in turn.",
)
@click.option(
    "--routes",
    default="search,context,remember",
    show_default=True,
    help="Comma-separated routes to load.",
)
@click.option(
    "--embedder",
    type=click.Choice(["fake", "configured"]),
    default="fake",
    show_default=True,
    help="fake: the hashing embedder (fast, for throughput); configured: the settings' model.",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the filled store here (reused when it holds the turns already).",
)
@json_option
def bench_serve(
    turns: int,
    clients: int,
    requests: int,
    workers: str,
    routes: str,
    embedder: str,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.bench.serve import run_serve_bench

    try:
        counts = [int(w) for w in workers.split(",") if w.strip()]
    except ValueError:
        raise InvalidInputError(
            f"--workers must be numbers separated by commas: {workers!r}"
        ) from None
    if not counts or min(counts) < 1 or max(counts) > 64:
        raise InvalidInputError("--workers needs counts from 1 to 64")
    result = run_serve_bench(
        turns=turns,
        clients=clients,
        requests=requests,
        workers=counts,
        routes=[r.strip() for r in routes.split(",") if r.strip()],
        fake_embedder=embedder == "fake",
        data_dir=data_dir,
        progress=lambda text: click.echo(text, err=True),
    )
    _print_bench(result, as_json)
