"""Leaf utilities: small pieces every layer uses and that know nothing of memory.

A module here imports the standard library, third-party libraries and ``memstrata.errors``
only, never another part of memstrata, so that any layer can use it without a cycle (the
layers contract in pyproject.toml holds this: ``memstrata.util`` is its lowest layer).
"""
