"""What deleting episodes does to a curated document: pure functions, no I/O.

``forget`` (deletion on request) takes out every bullet that cites an erased episode or
carries an erased text; ``delete`` only takes out the citation, and a bullet left citing
nothing goes. Sections left empty go too.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, replace

from memstrata.document.format import Bullet, Document, Section


@dataclass(frozen=True, slots=True)
class Stripped:
    """A document with erased sources taken out: the new document, the bullets removed and
    the bullets kept with fewer citations (as they now are)."""

    document: Document
    removed: tuple[Bullet, ...]
    changed: tuple[Bullet, ...]

    @property
    def touched(self) -> bool:
        return bool(self.removed or self.changed)


def strip_sources(
    doc: Document, episodes: Set[str], *, texts: Set[str] = frozenset(), whole: bool
) -> Stripped:
    """``doc`` without what cites ``episodes``: with ``whole`` (forget) a bullet citing any
    of them, or whose text is one of ``texts``, is removed; otherwise (delete) only those
    citations are, and a bullet left citing nothing is removed."""
    removed: list[Bullet] = []
    changed: list[Bullet] = []
    sections: list[Section] = []
    for section in doc.sections:
        kept: list[Bullet] = []
        for bullet in section.bullets:
            cites = any(c.episode_id in episodes for c in bullet.citations)
            if whole and (cites or bullet.text in texts):
                removed.append(bullet)
                continue
            if not cites:
                kept.append(bullet)
                continue
            citations = tuple(c for c in bullet.citations if c.episode_id not in episodes)
            if not citations:
                removed.append(bullet)
                continue
            bullet = replace(bullet, citations=citations)
            changed.append(bullet)
            kept.append(bullet)
        if kept:
            sections.append(replace(section, bullets=tuple(kept)))
    return Stripped(replace(doc, sections=tuple(sections)), tuple(removed), tuple(changed))


def bullet_ids(doc: Document) -> list[str]:
    return [b.id for s in doc.sections for b in s.bullets]
