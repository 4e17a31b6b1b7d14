"""Curated documents (L1 profile, L2 topics) in their human-readable markdown form.

:mod:`memstrata.document.format` holds the records and the pure :func:`parse` /
:func:`serialize` pair.
"""

from __future__ import annotations

from memstrata.document.format import (
    Bullet,
    Citation,
    Document,
    DocumentFormatError,
    Section,
    parse,
    serialize,
)

__all__ = [
    "Bullet",
    "Citation",
    "Document",
    "DocumentFormatError",
    "Section",
    "parse",
    "serialize",
]
