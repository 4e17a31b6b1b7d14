"""What one consolidation did: documents written, bullets added, removed and merged,
profile slots promoted, audit findings, and the model's share (what it wrote, what the guards
refused, what it could not do)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memstrata.model import (
    JsonValue,
)


@dataclass(slots=True)
class AuditFinding:
    key: str
    bullet_id: str
    problem: str  # "missing-evidence" or "unsupported"
    support: float
    by: str = "rules"  # who judged it: "rules", or "model" (its evidence shown to the model)


@dataclass(slots=True)
class ConsolidationReport:
    facts_read: int = 0
    documents: dict[str, int] = field(default_factory=dict)  # key -> new version
    added: int = 0
    removed: int = 0
    promoted: list[str] = field(default_factory=list)  # profile slots set by this run
    findings: list[AuditFinding] = field(default_factory=list)  # audit: unsupported bullets
    merged: int = 0  # dedup: bullets folded into a near-duplicate
    by_model: int = 0  # bullets the model wrote or rewrote that passed the guards
    by_rules: int = 0  # with a model: new facts it did not state, filed by rules instead
    rejected: list[str] = field(default_factory=list)  # model output the guards refused
    model_failures: list[str] = field(default_factory=list)  # steps the model could not do
    superseded: list[str] = field(default_factory=list)  # facts a contradiction closed
    topics_merged: dict[str, str] = field(default_factory=dict)  # folded topic -> kept one
    usage: dict[str, JsonValue] | None = None  # the model's calls, tokens and time, summed

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "facts_read": self.facts_read,
            "documents": dict(self.documents),
            "bullets_added": self.added,
            "bullets_removed": self.removed,
            "bullets_merged": self.merged,
            "promoted": list(self.promoted),
            "findings": [
                {
                    "document": f.key,
                    "bullet": f.bullet_id,
                    "problem": f.problem,
                    "support": f.support,
                    "by": f.by,
                }
                for f in self.findings
            ],
            "model": {
                "bullets_written": self.by_model,
                "facts_by_rules": self.by_rules,
                "rejected": list(self.rejected),
                "failures": list(self.model_failures),
                "superseded": list(self.superseded),
                "topics_merged": dict(self.topics_merged),
                "usage": self.usage,
            },
        }
