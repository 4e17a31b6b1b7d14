"""Consolidation into curated documents, mode ``update``: incremental by id difference.

Facts created since the last run (their ids sort after the one recorded in the scope's
``state/consolidation`` document) become bullets of their topic's document, citing the same
episodes. Bullets of facts that a new fact superseded are deleted with reason ``superseded``.
L1 is then brought (also when no fact is new but one changed, e.g. a repeat merged into it: the
state keeps a digest of the current facts' versions) to what :mod:`memstrata.curate.essentials`
selects from every current fact within the L1 budget (the user's profile slots, preferences
and key facts, then the people's): the user's slots fill the profile document, the rest the
``essentials`` document. Bullets it wrote that are no longer selected are deleted (reason
``low-signal``: they stay in their topic documents), bullets a person edited, moved or deleted
are left as the person made them, and the facts of edited or deleted ones are not offered
again. The profile is kept the same way: a slot a person deleted or edited withholds its facts
from L1 and its value from that slot; a slot a person wrote or edited is theirs; a slot this
wrote that L1 no longer states is removed (the state records each slot's value digest and
facts). Style preferences (tone, verbosity, code style) are promoted only when two or more
sessions support them (:mod:`curate.profile`). Every change goes through the document
operations (compare-and-swap, per-bullet history) inside a run that holds its (layer, key), so
two consolidations of the same document never interleave.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from memstrata.consolidate import l1, profile
from memstrata.consolidate.parts import Parts
from memstrata.consolidate.report import ConsolidationReport
from memstrata.consolidate.state import (
    STATE_KEY,
    aliases_of,
    all_facts,
    as_list,
    facts_digest,
    pairs,
    put_state,
    slots_of,
)
from memstrata.consolidate.topics import file_facts, merges, refile
from memstrata.document.coverage import topic_key
from memstrata.model import (
    DocumentKind,
    Fact,
    FactFilter,
    JsonValue,
    Scope,
)

if TYPE_CHECKING:
    from memstrata.consolidate.by_model import ModelSteps


def update(parts: Parts, model: ModelSteps | None, scope: Scope) -> ConsolidationReport:
    report = ConsolidationReport()
    state = parts.store.get_document(scope, DocumentKind.STATE, STATE_KEY)
    prior: dict[str, JsonValue] = dict(state.content) if state is not None else {}
    version = 0 if state is None else state.version
    last = prior.get("last_fact_id")
    merging = pairs(prior.get("merging"))
    if merging:  # a merge a run began and did not finish is finished first
        version = merges(parts, scope, merging, prior, version, report)
    current = all_facts(parts.store, scope, FactFilter(current_only=True))
    new = [f for f in current if not last or f.id > str(last)]
    report.facts_read = len(new)
    seen = facts_digest(current)  # a repeat merged into a fact changes its support
    if not new and (state is None or prior.get("facts") == seen) and not merging:
        return report
    new_ids = {f.id for f in new}
    refiled = bool(new) and refile(parts, scope, new, aliases_of(prior.get("aliases")))
    closed = model is not None and model.contradictions(scope, new, current, report)
    if refiled or closed:  # facts changed: read again
        current = all_facts(parts.store, scope, FactFilter(current_only=True))
        new = [f for f in current if f.id in new_ids]
        seen = facts_digest(current)
    replaced = [
        f
        for f in all_facts(parts.store, scope, FactFilter(superseded_only=True))
        if f.superseded_by in new_ids
    ]
    surfaces = {
        e.id: e.surface
        for e in parts.store.get_episodes(scope, sorted({s for f in new for s in f.sources}))
    }
    filed = {str(f) for f in as_list(prior.get("filed"))}  # by a run that did not finish
    plans: dict[str, list[Fact]] = defaultdict(list)
    for fact in new:
        if fact.id not in filed:
            plans[topic_key(fact)].append(fact)
    gone_texts = {f.text for f in replaced}
    for key, facts in sorted(plans.items()):
        file_facts(parts, model, scope, key, facts, gone_texts, surfaces, report)
        if model is not None:  # a run stopped after this resumes after it
            filed |= {f.id for f in facts}
            prior["filed"] = sorted(filed)
            version = put_state(parts, scope, prior, version)
    for key in sorted({topic_key(f) for f in replaced} - set(plans)):
        file_facts(parts, model, scope, key, [], gone_texts, surfaces, report)
    if model is not None and new:
        proposed = model.propose_merges(scope, report)
        if proposed:
            version = merges(parts, scope, proposed, prior, version, report)
            current = all_facts(parts.store, scope, FactFilter(current_only=True))
            seen = facts_digest(current)
    withheld = l1.withheld(parts, scope, prior.get("essentials"))
    withheld |= profile.profile_hands(parts, scope, prior).withheld
    kept = [f for f in current if f.id not in withheld]  # a person's edits stand for them
    selection = l1.selection(parts, scope, kept)
    model_slots = slots_of(prior.get("model_slots"))
    if model is not None and new:
        model_slots.update(model.slots(scope, selection.user, new, report))
    current_ids = {f.id for f in current}
    model_slots = {  # a proposal whose facts were superseded is withdrawn
        k: v
        for k, v in model_slots.items()
        if isinstance(v, dict) and set(map(str, as_list(v.get("facts")))) <= current_ids
    }
    record = l1.bring(parts, scope, selection, prior.get("essentials"), report)
    profile_record, report.promoted = profile.promote(
        parts, scope, selection, kept, prior, model_slots
    )
    marker = max(new_ids) if new_ids else last
    content: dict[str, JsonValue] = {
        "last_fact_id": marker,
        "essentials": record,
        "profile": profile_record,
        "facts": seen,
    }
    for key, value in (
        ("aliases", prior.get("aliases")),
        ("model_slots", model_slots or None),
    ):
        if value:
            content[key] = value
    put_state(parts, scope, content, version)
    return report
