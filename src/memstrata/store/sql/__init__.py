"""The record store's tables written once for every SQL engine (SQLite, PostgreSQL, MySQL).

One module per concern: ``base`` (what a store gives: transactions, reads, the change feed),
``dialect`` (what differs between engines), ``common`` (columns, scope clauses),
``episodes``, ``facts``, ``documents``, ``erasures``, ``keys`` (API keys, hashed) and
``records`` (history, counts, restore: all of them together).
"""
