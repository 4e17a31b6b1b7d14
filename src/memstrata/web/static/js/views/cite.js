// A citation followed: #/cite/<episode ids>. Finds the cited turns and opens their session
// with them highlighted; turns spread over several sessions are offered one link per session.

import { ApiError } from '../api.js';
import { h, formatTime, mount } from '../dom.js';
import { register } from '../i18n.js';
import { heading, note } from '../parts.js';
import { sessionHref } from './episodes.js';

register({
  en: {
    'cite.title': 'Cited turns',
    'cite.several': 'The cited turns are in {n} sessions:',
    'cite.gone': 'The cited turn {id} is not in memory any more (it was deleted or forgotten).',
    'cite.open': 'Session {id} ({n} cited)',
  },
  zh: {
    'cite.title': '被引用的对话',
    'cite.several': '被引用的对话分布在 {n} 个会话中：',
    'cite.gone': '被引用的对话 {id} 已不在记忆中（已被删除或遗忘）。',
    'cite.open': '会话 {id}（{n} 条被引用）',
  },
});

export async function render(root, ctx) {
  const { t, lang } = ctx;
  const ids = (ctx.route.params.ids || '').split(',').map((s) => s.trim()).filter(Boolean);
  const found = [];
  const gone = [];
  for (const id of ids) {
    try {
      found.push(await ctx.api.get(`/v1/items/${encodeURIComponent(id)}`, { user: ctx.scope.user }, { signal: ctx.signal }));
    } catch (exc) {
      if (exc instanceof ApiError && (exc.status === 404 || exc.status === 422)) gone.push(id);
      else throw exc;
    }
  }
  const bySession = new Map();
  for (const ep of found) {
    if (!bySession.has(ep.session_id)) bySession.set(ep.session_id, []);
    bySession.get(ep.session_id).push(ep);
  }
  if (bySession.size === 1 && !gone.length) {
    const [[sessionId, eps]] = [...bySession.entries()];
    ctx.navigate(sessionHref(sessionId, eps.map((ep) => ep.id)).slice(2), { replace: true });
    return;
  }
  mount(root,
    heading(t('cite.title')),
    gone.map((id) => note(t('cite.gone', { id }), 'notice error')),
    bySession.size ? [h('p', {}, t('cite.several', { n: bySession.size })),
      h('ul', {}, [...bySession.entries()].map(([sessionId, eps]) => h('li', {},
        h('a', { href: sessionHref(sessionId, eps.map((ep) => ep.id)) }, t('cite.open', { id: sessionId, n: eps.length })),
        ' ', h('span', { class: 'meta' }, formatTime(eps[0].time, lang)))))] : null);
}
