// Reading memory for the browsing views: one function per thing a view shows, over the
// API's routes. A server without a browsing route (404 for the route itself) is read
// through the generic list (`/v1/list`), so the views work against either.

import { ApiError } from './api.js';

/** Whether exc says the server has no such route (not that a record is missing): a 404 of
 * the router itself, or a 405 (the path exists for another method only). */
function routeMissing(exc) {
  return exc instanceof ApiError
    && ((exc.status === 404 && exc.message === 'Not Found') || exc.status === 405);
}

export async function listAll(api, kind, query, signal) {
  return api.all('/v1/list', { ...query, kind, limit: 1000 }, { signal });
}

/** Every document of the scope (identity, profile, essentials, topics, state). */
export async function documents(api, query, signal) {
  return listAll(api, 'document', query, signal);
}

/** Facts of the scope: filters {category, topic, valid: current|superseded|all}. */
export async function facts(api, query, filters, signal) {
  const wanted = { category: filters.category || null, topic: filters.topic || null, valid: filters.valid || 'current' };
  try {
    return await api.all('/v1/facts', { ...query, ...wanted, limit: 1000 }, { signal });
  } catch (exc) {
    if (!routeMissing(exc)) throw exc;
  }
  const all = await listAll(api, 'fact', query, signal);
  const byId = new Map(all.map((fact) => [fact.id, fact]));
  const now = Date.now();
  return all.filter((fact) => {
    const over = Boolean(fact.superseded_by) || (fact.valid_to && Date.parse(fact.valid_to) <= now);
    if (wanted.valid === 'current' && over) return false;
    if (wanted.valid === 'superseded' && !over) return false;
    if (wanted.category && fact.category !== wanted.category) return false;
    if (wanted.topic && fact.topic !== wanted.topic) return false;
    return true;
  }).map((fact) => ({
    ...fact,
    superseded_by_text: fact.superseded_by && byId.has(fact.superseded_by) ? byId.get(fact.superseded_by).text : null,
  }));
}

function summarize(episodes) {
  const sessions = new Map();
  for (const ep of episodes) {
    let s = sessions.get(ep.session_id);
    if (!s) {
      s = { session_id: ep.session_id, thread: ep.scope.thread || null, agent: ep.scope.agent || null,
        first_time: ep.time, last_time: ep.time, turns: 0, speakers: new Set(), surface: ep.surface };
      sessions.set(ep.session_id, s);
    }
    s.turns += 1;
    if (ep.time < s.first_time) s.first_time = ep.time;
    if (ep.time > s.last_time) s.last_time = ep.time;
    if (ep.speaker) s.speakers.add(ep.speaker);
  }
  return [...sessions.values()]
    .map((s) => ({ ...s, speakers: [...s.speakers].sort() }))
    .sort((a, b) => (a.last_time < b.last_time ? 1 : -1));
}

/** The sessions of the scope, newest first. */
export async function sessions(api, query, signal) {
  try {
    return await api.all('/v1/sessions', { ...query, limit: 1000 }, { signal });
  } catch (exc) {
    if (!routeMissing(exc)) throw exc;
  }
  return summarize(await listAll(api, 'episode', query, signal));
}

/** Every turn of one session, in the order spoken. */
export async function session(api, user, sessionId, signal) {
  try {
    const answer = await api.get(`/v1/sessions/${encodeURIComponent(sessionId)}`, { user }, { signal });
    return answer.turns;
  } catch (exc) {
    if (!routeMissing(exc)) throw exc;
  }
  const turns = (await listAll(api, 'episode', { user }, signal)).filter((ep) => ep.session_id === sessionId);
  if (!turns.length) throw new ApiError(404, 'NotFoundError', `no session ${sessionId}`, null);
  return turns.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : (a.id < b.id ? -1 : 1)));
}
