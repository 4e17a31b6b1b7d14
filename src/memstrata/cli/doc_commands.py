"""The ``doc``, ``identity``, ``export`` companions: curated documents and the L0 identity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from memstrata.cli.base import (
    ScopeArgs,
    cli,
    data_dir_option,
    edit_text,
    json_option,
    memory_for,
    print_json,
    scope_options,
)
from memstrata.errors import InvalidInputError
from memstrata.textio import read_text


@cli.group(help="Curated documents (essentials, topics) as markdown: show, edit, diff, apply.")
def doc() -> None:
    """The doc group."""


def _load_change(path: Path) -> Any:
    """An edited markdown file, or a JSON list of operations (by content)."""
    from memstrata.document.ops import operation_from_json

    text = read_text(path)
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
        print_json(
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
def doc_show(key: str, scope_args: ScopeArgs, data_dir: Path | None, as_json: bool) -> None:
    with memory_for(data_dir) as mem:
        markdown, version = mem.doc_markdown(key, scope_args.scope())
    if as_json:
        print_json({"key": key, "version": version, "markdown": markdown})
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
    scope_args: ScopeArgs,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with memory_for(data_dir) as mem:
        preview = mem.preview_doc(key, scope_args.scope(), _load_change(file))
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
    scope_args: ScopeArgs,
    expected: int,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    scope = scope_args.scope()
    with memory_for(data_dir, create=True) as mem:
        preview = mem.preview_doc(key, scope, _load_change(file), expected_version=expected)
        _, version = mem.apply_doc(key, scope, preview.operations, expected_version=expected)
    changed = version != expected
    if as_json:
        print_json(
            {
                "key": key,
                "version": version,
                "operations": len(preview.operations),
                "changed": changed,
            }
        )
    elif not changed:
        click.echo(f"no change; {key} stays at version {version}")
    else:
        click.echo(f"applied {len(preview.operations)} operation(s); {key} is at version {version}")


@doc.command(name="edit", help="Edit a document in $EDITOR, preview the change, then apply it.")
@click.argument("key")
@scope_options
@click.option("--yes", is_flag=True, help="Apply without asking.")
@data_dir_option
def doc_edit(key: str, scope_args: ScopeArgs, yes: bool, data_dir: Path | None) -> None:
    scope = scope_args.scope()
    with memory_for(data_dir, create=True) as mem:
        markdown, version = mem.doc_markdown(key, scope)
        edited = edit_text(markdown)
        if edited is None or edited == markdown:
            click.echo("no change")
            return
        preview = mem.preview_doc(key, scope, edited, expected_version=version)
        _show_preview(preview, False)
        if not (yes or click.confirm("apply?", default=False)):
            click.echo("not applied")
            return
        _, new_version = mem.apply_doc(key, scope, preview.operations, expected_version=version)
    if new_version == version:
        click.echo(f"no change; {key} stays at version {version}")
    else:
        click.echo(f"applied; {key} is at version {new_version}")


@cli.group(help="The L0 identity: a plain text the user writes.")
def identity() -> None:
    """The identity group."""


@identity.command(name="show", help="Print the identity text.")
@scope_options
@data_dir_option
@json_option
def identity_show(scope_args: ScopeArgs, data_dir: Path | None, as_json: bool) -> None:
    with memory_for(data_dir) as mem:
        ident = mem.identity(scope_args.scope())
    if as_json:
        print_json({"text": ident.text, "version": ident.version})
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
def identity_edit(scope_args: ScopeArgs, source: Path | None, data_dir: Path | None) -> None:
    scope = scope_args.scope()
    with memory_for(data_dir, create=True) as mem:
        current = mem.identity(scope)
        if source is not None:
            text: str | None = read_text(source)
        else:
            text = edit_text(current.text + "\n")
        if text is None:
            click.echo("no change")
            return
        text = text[:-1] if text.endswith("\n") else text
        if text == current.text:
            click.echo("no change")
            return
        updated = mem.set_identity(text, scope, expected_version=current.version)
    click.echo(f"identity saved (version {updated.version})")
