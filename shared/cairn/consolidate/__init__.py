"""Consolidation: completed runs' evidence and a scope's live memory, tidied in one atomic commit.

``evidence`` stages what a run left; ``commit.consolidate_scope`` is one pass (read, propose,
validate, commit); ``worker.ConsolidationWorker`` runs passes in the background for embedded
and long-lived hosts. See docs/consolidation.md.
"""
