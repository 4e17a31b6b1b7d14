"""Curation: extraction, guards, privacy, consolidation, runs, decay."""
