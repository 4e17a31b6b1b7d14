"""Reliability proofs: kills, contention, isolation, fuzzing, and deletion on request."""
