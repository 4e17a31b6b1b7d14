"""Named schema migrations, recorded in the database they are applied to.

A migration is a name (sortable, ``NNNN_what``) and the statements that apply it. A store
applies, on open, every migration of its list whose name is not yet recorded, in order,
each in its own transaction together with the row that records it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Migration:
    name: str
    statements: tuple[str, ...]


def pending(migrations: tuple[Migration, ...], applied: set[str]) -> list[Migration]:
    """The migrations not yet applied, in order; unknown applied names are an error."""
    known = {m.name for m in migrations}
    unknown = sorted(applied - known)
    if unknown:
        from memstrata.errors import MigrationError

        raise MigrationError(
            f"the database has migrations this version does not know: {', '.join(unknown)} "
            "(it was written by a newer memstrata)"
        )
    return [m for m in migrations if m.name not in applied]
