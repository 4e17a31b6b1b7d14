"""Consolidation: facts into curated documents (topics, L1 essentials, the profile), one
module per mode.

- :mod:`~memstrata.consolidate.update`: incremental, by id difference (topic documents in
  :mod:`~memstrata.consolidate.topics`, L1 in :mod:`~memstrata.consolidate.l1`, the profile in
  :mod:`~memstrata.consolidate.profile`);
- :mod:`~memstrata.consolidate.audit`: every bullet checked against the turns it cites;
- :mod:`~memstrata.consolidate.dedup`: near-duplicate bullets merged.

:class:`Consolidator` (:mod:`~memstrata.consolidate.consolidator`) wires them to one
:class:`~memstrata.consolidate.parts.Parts` and, where a model is configured, the model's
steps (:mod:`~memstrata.consolidate.by_model`); :mod:`~memstrata.consolidate.state` holds the
state document's reads, :mod:`~memstrata.consolidate.report` what a run reports.
"""

from __future__ import annotations

from memstrata.consolidate.consolidator import Consolidator
from memstrata.consolidate.report import AuditFinding, ConsolidationReport
from memstrata.consolidate.state import STATE_KEY
from memstrata.document.coverage import topic_key

__all__ = ["STATE_KEY", "AuditFinding", "ConsolidationReport", "Consolidator", "topic_key"]
