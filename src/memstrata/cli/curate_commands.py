"""Curation commands: ``consolidate`` and ``forget``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memstrata.api.forget_preview import ForgetPreview
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
@click.option(
    "--dry-run",
    is_flag=True,
    help="Change nothing: list everything the forget would remove or rewrite.",
)
@data_dir_option
@json_option
def forget(
    item_id: str | None,
    scope_args: ScopeArgs,
    yes: bool,
    dry_run: bool,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    scope = scope_args.scope()
    if item_id is None and not yes and not dry_run:
        click.confirm(f"Forget everything of {scope}? This cannot be undone", abort=True, err=True)
    with memory_for(data_dir) as mem:
        if item_id:
            report = mem.forget(item_id, scope, dry_run=dry_run)
        else:
            report = mem.forget_scope(scope, dry_run=dry_run)
    if as_json:
        print_json(report.to_json())
    elif isinstance(report, ForgetPreview):
        _show_preview(report, item_id or str(scope))
    elif item_id:
        click.echo(f"forgot {item_id} and {len(report.cascaded)} item(s) derived from it")
    else:
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(report.counts.items()))
        click.echo(f"forgot {scope}: {counts}")


def _show_preview(preview: ForgetPreview, target: str) -> None:
    click.echo(f"forgetting {target} would remove (nothing was changed):")
    for episode in preview.episodes:
        click.echo(f"  turn {episode['id']}: {episode['text']}")
    for fact in preview.facts:
        click.echo(f"  fact {fact['id']} ({fact['how']}): {fact['text']}")
    for doc in preview.documents:
        click.echo(f"  document {doc['key']} ({doc['kind']}, {doc['id']})")
    for bullet in preview.bullets:
        click.echo(
            f"  bullet {bullet['bullet_id']} of {bullet['document']} ({bullet['how']}): "
            f"{bullet['text']}"
        )
    for slot in preview.profile_slots:
        click.echo(f"  profile {slot['section']}.{slot['slot']} ({slot['how']}): {slot['value']}")
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(preview.counts.items()))
    click.echo(f"  counts: {counts}")


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
        done = mem.curate(  # one run, one token budget for both steps
            scope,
            "consolidate",
            mode=mode,
            extract=extract,
            remove=remove,
            user_speaker=user_speaker,
            use_llm=use_llm,
        )
    extracted, report, fallback = done.extraction, done.consolidation, done.fallback
    if report is None:  # a consolidation run always consolidates unless cancelled
        raise click.ClickException(f"run {done.run.id} stopped before consolidating")
    result = {
        "mode": mode,
        "extracted": len(extracted.stored) if extracted else 0,
        "extraction_failures": extracted.failures if extracted else [],
        **report.to_json(),
        "run": {"id": done.run.id, "trigger": done.run.trigger},
        "fallback": fallback.to_json() if fallback is not None else None,
    }
    if fallback is not None:  # the work was done (exit 0), but not by the model
        click.echo(f"warning: {fallback.message()}", err=True)
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


@cli.group(
    help="The audit's flags on curated bullets: `audit list` shows them, `audit resolve` "
    "keeps, deletes or edits one."
)
def audit() -> None:
    pass


@audit.command(
    name="list",
    help="The audit's flags: curated bullets whose cited turns are gone or do not support "
    "them, checked now (nothing is changed); bullets kept as they stand are left out.",
)
@scope_options
@click.option("--no-llm", is_flag=True, help="Rules only, with a chat model configured.")
@data_dir_option
@json_option
def audit_list(scope_args: ScopeArgs, no_llm: bool, data_dir: Path | None, as_json: bool) -> None:
    with memory_for(data_dir) as mem:
        flags = mem.audit(scope_args.scope(), use_llm=not no_llm)
    if as_json:
        print_json([f.to_json() for f in flags])
        return
    for flag in flags:
        click.echo(
            f"{flag.key} v{flag.version} {flag.bullet_id} {flag.problem} "
            f"(support {flag.support}): {flag.text}"
        )
    if not flags:
        click.echo("no flags")


@audit.command(
    name="resolve",
    help="Resolve a flag on bullet BULLET_ID of document KEY, against the version it was "
    "shown at: keep it (not flagged again while it stands), delete it or edit it.",
)
@click.argument("key")
@click.argument("bullet_id")
@click.option(
    "--action", required=True, type=click.Choice(["keep", "delete", "edit"]), help="What to do."
)
@click.option("--expected-version", required=True, type=click.IntRange(0), help="KEY's version.")
@click.option("--text", default=None, help="edit: the bullet's new text.")
@click.option(
    "--reason",
    default=None,
    type=click.Choice(["contradicted", "superseded", "stale", "low-signal", "user-request"]),
    help="delete: why (default stale when no cited turn is left, else low-signal).",
)
@scope_options
@data_dir_option
@json_option
def audit_resolve(
    key: str,
    bullet_id: str,
    action: str,
    expected_version: int,
    text: str | None,
    reason: str | None,
    scope_args: ScopeArgs,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with memory_for(data_dir) as mem:
        done = mem.resolve_audit(
            scope_args.scope(),
            key,
            bullet_id,
            action,
            expected_version=expected_version,
            text=text,
            reason=reason,
        )
    if as_json:
        print_json(done.to_json())
        return
    click.echo(f"{action} {bullet_id} of {key}: now version {done.version}")
    if done.diff:
        click.echo(done.diff)
