// Reading memory for the browsing views: one function per thing a view shows, over the
// API's routes (every list read page by page to its end).

export async function listAll(api, kind, query, signal) {
  return api.all('/v1/list', { ...query, kind, limit: 1000 }, { signal });
}

/** Every document of the scope (identity, profile, essentials, topics, state). */
export async function documents(api, query, signal) {
  return listAll(api, 'document', query, signal);
}

/** Facts of the scope: filters {category, topic, valid: current|superseded|all, slot: a kind
 * (allergy: every slot of that kind) or, with a colon, one slot (allergy:shrimp)}; a
 * superseded fact carries the text of the one that replaced it (superseded_by_text). */
export async function facts(api, query, filters, signal) {
  const slot = filters.slot || null;
  const wanted = {
    category: filters.category || null,
    topic: filters.topic || null,
    valid: filters.valid || 'current',
    slot: slot && slot.includes(':') ? slot : null,
    slot_kind: slot && !slot.includes(':') ? slot : null,
  };
  return api.all('/v1/facts', { ...query, ...wanted, limit: 1000 }, { signal });
}

/** The sessions of the scope, newest first. */
export async function sessions(api, query, signal) {
  return api.all('/v1/sessions', { ...query, limit: 1000 }, { signal });
}

/** Every turn of one session of the user, in the order spoken. */
export async function session(api, user, sessionId, signal) {
  const answer = await api.get(`/v1/sessions/${encodeURIComponent(sessionId)}`, { user }, { signal });
  return answer.turns;
}
