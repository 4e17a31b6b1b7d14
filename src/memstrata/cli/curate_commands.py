"""Curation commands: ``consolidate`` and ``forget``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memstrata.cli.base import (
    ScopeArgs,
    cli,
    data_dir_option,
    json_option,
    memory_for,
    print_json,
    scope_options,
)


@cli.command(
    help="Forget on request: an item with everything derived from it, or (without ITEM_ID) "
    "everything the scope holds (a user, or one thread or agent of a user)."
)
@click.argument("item_id", required=False)
@scope_options
@click.option("--yes", is_flag=True, help="Forget a whole scope without asking first.")
@data_dir_option
@json_option
def forget(
    item_id: str | None,
    scope_args: ScopeArgs,
    yes: bool,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    scope = scope_args.scope()
    if item_id is None and not yes:
        click.confirm(f"Forget everything of {scope}? This cannot be undone", abort=True, err=True)
    with memory_for(data_dir) as mem:
        report = mem.forget(item_id, scope) if item_id else mem.forget_scope(scope)
    if as_json:
        print_json(report.to_json())
    elif item_id:
        click.echo(f"forgot {item_id} and {len(report.cascaded)} item(s) derived from it")
    else:
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(report.counts.items()))
        click.echo(f"forgot {scope}: {counts}")


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
@click.option(
    "--user-speaker",
    default=None,
    metavar="NAME",
    help="update: the speaker who is the scope's user in L1 (default: the user_speaker "
    "setting, else the speaker with the most user turns).",
)
@click.option(
    "--llm/--no-llm",
    "use_llm",
    default=True,
    show_default=True,
    help="Let the configured chat model (setting llm) do what rules cannot; --no-llm: rules only.",
)
@click.option("--follow", is_flag=True, help="Print progress events (on stderr) as they happen.")
@data_dir_option
@json_option
def consolidate(
    scope_args: ScopeArgs,
    mode: str,
    extract: bool,
    remove: bool,
    user_speaker: str | None,
    use_llm: bool,
    follow: bool,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    scope = scope_args.scope()
    with memory_for(data_dir) as mem:
        if follow:
            mem.runs.subscribe(
                lambda e: click.echo(
                    f"[{e.seq}] {e.kind} {json.dumps(dict(e.data), ensure_ascii=False)}",
                    err=True,
                )
            )
        from memstrata.curate.extract_rules import RuleExtractor

        extractor = None if use_llm else RuleExtractor()
        extracted = (
            mem.extract(scope, extractor=extractor) if extract and mode == "update" else None
        )
        report = mem.consolidate(
            scope, mode=mode, remove=remove, user_speaker=user_speaker, use_llm=use_llm
        )
    result = {
        "mode": mode,
        "extracted": len(extracted.stored) if extracted else 0,
        "extraction_failures": extracted.failures if extracted else [],
        **report.to_json(),
    }
    if as_json:
        print_json(result)
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
