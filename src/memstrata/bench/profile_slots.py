"""Which profile slots L1 fills for each main speaker of each LoCoMo conversation.

Each conversation is ingested into a fresh thread, extracted by the configured extractor and
consolidated; then :mod:`memstrata.curate.essentials` says, per speaker (``speaker_a`` and
``speaker_b``), the slots the facts state and their values, which speaker is the scope's user,
and what the essentials document and the profile hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.importers.locomo import load_locomo
from memstrata.model import JsonValue, Scope

if TYPE_CHECKING:
    from memstrata.api import Memory

BENCH_USER = "bench"


def run_profile_slots(memory: Memory, path: Path) -> dict[str, JsonValue]:
    """Per conversation: the user chosen, and each main speaker's filled slots."""
    from memstrata.consolidate import Consolidator

    batch = load_locomo(path)
    memory.ingest(batch, BENCH_USER)
    conversations: list[JsonValue] = []
    filled_total = 0
    for conv in batch.conversations:
        scope = Scope(BENCH_USER, thread=conv.key)
        memory.extract(scope)
        memory.consolidate(scope)
        selection = Consolidator(memory.store, memory.documents, memory.runs).selection(scope)
        speakers: dict[str, JsonValue] = {}
        for key in ("speaker_a", "speaker_b"):
            name = str(conv.metadata.get(key, ""))
            person = selection.people.get(name)
            slots = {} if person is None else person.slot_values()
            slots.pop("name", None)
            filled_total += len(slots)
            speakers[name] = dict(sorted(slots.items()))
        doc, _ = memory.doc("essentials", scope)
        conversations.append(
            {
                "conversation": conv.key,
                "user": selection.user,
                "slots": speakers,
                "essentials_bullets": sum(len(s.bullets) for s in doc.sections),
                "essentials_sections": [s.heading for s in doc.sections],
            }
        )
    return {
        "benchmark": "profile-slots",
        "conversations": conversations,
        "slots_filled": filled_total,
    }


def profile_table(result: dict[str, JsonValue]) -> str:
    """The result as lines a person reads: conversation, speaker, slot: value."""
    lines: list[str] = []
    for conv in result["conversations"]:
        assert isinstance(conv, dict)
        lines.append(f"{conv['conversation']} (user: {conv['user']})")
        for name, slots in dict(conv["slots"]).items():
            filled = ", ".join(f"{k}: {v}" for k, v in dict(slots).items()) or "(none)"
            lines.append(f"  {name}: {filled}")
    lines.append(f"slots filled: {result['slots_filled']}")
    return "\n".join(lines)
