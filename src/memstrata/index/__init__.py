"""Search indexes derived from the records: lexical (BM25), dense vectors, hybrid ranking.

Indexes hold no truth of their own: they are built from the record store, kept in step with
writes and deletes, and can always be rebuilt.
"""
