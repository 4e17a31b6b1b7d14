"""API keys of the HTTP server: ``memstrata keys create | list | revoke``."""

from __future__ import annotations

from pathlib import Path

import click

from memstrata.cli.base import cli, data_dir_option, json_option, memory_for, print_json, when
from memstrata.errors import InvalidInputError
from memstrata.model import ApiKey, KeyRole


@cli.group(help="API keys of the HTTP server: each bound to users and a role, stored hashed.")
def keys() -> None:
    pass


def _tenant(key: ApiKey) -> str:
    return "all users" if key.users is None else ", ".join(key.users)


@keys.command(
    name="create",
    help="Create a key for one or more users (--user, repeatable) or every user "
    "(--all-users) with a role: reader (reads and search), writer (also writes and forgets "
    "items and threads), admin (everything). The key is printed this once; only its hash "
    "is stored.",
)
@click.option("--user", "users", multiple=True, help="A user the key serves (repeatable).")
@click.option("--all-users", is_flag=True, help="The key serves every user.")
@click.option(
    "--role", required=True, type=click.Choice([r.value for r in KeyRole]), help="What it may do."
)
@click.option("--name", default="", help="A label to tell keys apart.")
@data_dir_option
@json_option
def create(
    users: tuple[str, ...],
    all_users: bool,
    role: str,
    name: str,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.codec import api_key_to_json

    if bool(users) == all_users:
        raise InvalidInputError("give --user (one or more) or --all-users, not both or neither")
    with memory_for(data_dir, create=True) as mem:
        created = mem.keys.create(role, None if all_users else users, name=name)
    if as_json:
        print_json({**api_key_to_json(created.key), "key": created.secret})
        return
    click.echo(created.secret)
    click.echo(
        f"created {created.key.id} ({created.key.role.value}, {_tenant(created.key)}); "
        "the key above is shown only now: store it safely",
        err=True,
    )


@keys.command(name="list", help="Every key (revoked ones too): id, prefix, role, users, name.")
@data_dir_option
@json_option
def list_(data_dir: Path | None, as_json: bool) -> None:
    from memstrata.codec import api_key_to_json

    with memory_for(data_dir) as mem:
        found = mem.keys.list()
    if as_json:
        print_json([api_key_to_json(k) for k in found])
        return
    for key in found:
        state = "active" if key.revoked_at is None else f"revoked {when(key.revoked_at)}"
        name = f"  {key.name}" if key.name else ""
        click.echo(
            f"{key.id}  {key.prefix}...  {key.role.value:<6}  {_tenant(key)}  "
            f"{when(key.created_at)}  {state}{name}"
        )


@keys.command(name="revoke", help="Revoke a key by id (key_...): it stops working at once.")
@click.argument("key_id")
@data_dir_option
@json_option
def revoke(key_id: str, data_dir: Path | None, as_json: bool) -> None:
    from memstrata.codec import api_key_to_json

    with memory_for(data_dir) as mem:
        key = mem.keys.revoke(key_id)
    if as_json:
        print_json(api_key_to_json(key))
    else:
        click.echo(f"revoked {key.id} ({key.prefix}...)")
