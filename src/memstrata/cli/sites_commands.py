"""``memstrata sites``: the data directories sharing a store, which a forget must reach."""

from __future__ import annotations

from pathlib import Path

import click

from memstrata.cli.base import cli, data_dir_option, json_option, memory_for, print_json, when
from memstrata.codec import format_time


@cli.group(
    help="The data directories using this store (one per machine or directory: each keeps "
    "its own raw trace, saved indexes and vector cache, which a forget must reach). "
    "`sites list` shows them; `sites retire` stops waiting for one taken out of service."
)
def sites() -> None:
    pass


@sites.command(
    name="list",
    help="Every data directory using the store: where it is, when it was first and last "
    "seen, and how many forgets it has still to apply (at its next sweep or start).",
)
@data_dir_option
@json_option
def sites_list(data_dir: Path | None, as_json: bool) -> None:
    with memory_for(data_dir) as mem:
        found = mem.sites()
        own = mem._site_id
    if as_json:
        print_json(
            [
                {
                    "id": s.id,
                    "label": s.label,
                    "first_seen": format_time(s.first_seen),
                    "last_seen": format_time(s.last_seen),
                    "waiting": s.waiting,
                    "this": s.id == own,
                }
                for s in found
            ]
        )
        return
    for s in found:
        mark = "*" if s.id == own else " "
        click.echo(
            f"{mark} {s.id}  {s.label}  first {when(s.first_seen)}  last {when(s.last_seen)}"
            f"  {s.waiting} forget(s) to apply"
        )


@sites.command(
    name="retire",
    help="Stop waiting for data directory SITE (from `sites list`), e.g. a machine taken out "
    "of service: forgets that waited only for it are closed now and their texts dropped. "
    "Should it run again, it enrols anew and applies every forget it missed.",
)
@click.argument("site")
@data_dir_option
@json_option
def sites_retire(site: str, data_dir: Path | None, as_json: bool) -> None:
    with memory_for(data_dir) as mem:
        closed = mem.retire_site(site)
    if as_json:
        print_json({"retired": site, "closed": closed})
        return
    click.echo(f"retired {site}; {closed} forget(s) it held open are closed")
