// Episodes (L3): the sessions of the scope by date, and each session's turns verbatim.
// #/episodes/<session>?hl=<ids> highlights the cited turns and scrolls the first into view.

import { h, formatDate, formatTime, mount } from '../dom.js';
import { register } from '../i18n.js';
import { session as loadSession, sessions as loadSessions } from '../data.js';
import { heading, note } from '../parts.js';

register({
  en: {
    'episodes.title': 'Episodes',
    'episodes.intro': 'Every turn kept verbatim (L3), by session and date.',
    'episodes.none': 'No turns in this scope yet.',
    'episodes.session': 'Session {id}',
    'episodes.turns': '{n} turns',
    'episodes.speakers': 'speakers: {names}',
    'episodes.thread': 'thread {thread}',
    'episodes.all': 'All sessions',
    'episodes.cited': 'Cited turns are highlighted ({n}).',
    'episodes.cited_missing': '{n} of the cited turns are not in this session any more.',
    'episodes.cited_mark': 'cited',
    'episodes.archived': 'archived',
    'episodes.forget': 'Forget',
    'episodes.forget_label': 'Forget this turn ({id})',
    'episodes.unknown_speaker': 'unknown speaker',
  },
  zh: {
    'episodes.title': '对话记录',
    'episodes.intro': '逐字保存的每一轮对话（L3），按会话和日期排列。',
    'episodes.none': '此范围内还没有对话。',
    'episodes.session': '会话 {id}',
    'episodes.turns': '{n} 轮',
    'episodes.speakers': '说话人：{names}',
    'episodes.thread': '线程 {thread}',
    'episodes.all': '全部会话',
    'episodes.cited': '被引用的对话已高亮（{n} 条）。',
    'episodes.cited_missing': '有 {n} 条被引用的对话已不在此会话中。',
    'episodes.cited_mark': '被引用',
    'episodes.archived': '已归档',
    'episodes.forget': '遗忘',
    'episodes.forget_label': '遗忘这一轮对话（{id}）',
    'episodes.unknown_speaker': '未知说话人',
  },
});

export function sessionHref(sessionId, ids) {
  const base = `#/episodes/${encodeURIComponent(sessionId)}`;
  return ids && ids.length ? `${base}?hl=${ids.map(encodeURIComponent).join(',')}` : base;
}

async function renderList(root, ctx) {
  const { t, lang } = ctx;
  const found = await loadSessions(ctx.api, ctx.scope.query(), ctx.signal);
  const byDate = new Map();
  for (const s of found) {
    const day = formatDate(s.first_time, lang);
    if (!byDate.has(day)) byDate.set(day, []);
    byDate.get(day).push(s);
  }
  mount(root,
    heading(t('episodes.title'), h('p', { class: 'subtitle' }, t('episodes.intro'))),
    found.length
      ? [...byDate.entries()].map(([day, items]) => h('section', { class: 'day' },
        h('h2', {}, h('time', { datetime: items[0].first_time.slice(0, 10) }, day)),
        h('ul', { class: 'session-list' }, items.map((s) => h('li', { class: 'card session' },
          h('a', { href: sessionHref(s.session_id), class: 'session-link' }, t('episodes.session', { id: s.session_id })),
          h('p', { class: 'meta' },
            `${formatTime(s.first_time, lang)} – ${formatTime(s.last_time, lang)}`, ' · ',
            t('episodes.turns', { n: s.turns }),
            s.speakers && s.speakers.length ? [' · ', t('episodes.speakers', { names: s.speakers.join(', ') })] : null,
            s.thread ? [' · ', t('episodes.thread', { thread: s.thread })] : null))))))
      : note(t('episodes.none')));
}

async function renderSession(root, ctx) {
  const { t, lang, route } = ctx;
  const sessionId = route.params.session;
  const wanted = (route.query.get('hl') || '').split(',').map((s) => s.trim()).filter(Boolean);
  const turns = await loadSession(ctx.api, ctx.scope.user, sessionId, ctx.signal);
  const present = new Set(turns.map((turn) => turn.id));
  const shown = wanted.filter((id) => present.has(id));
  const missing = wanted.length - shown.length;
  const highlighted = new Set(shown);
  const list = h('ol', { class: 'turns' }, turns.map((turn) => {
    const cited = highlighted.has(turn.id);
    return h('li', {
      class: ['turn', `role-${turn.role}`, cited ? 'highlight' : null, turn.archived ? 'archived' : null],
      id: `turn-${turn.id}`, dataset: { id: turn.id }, tabindex: cited ? '-1' : null,
    },
    h('p', { class: 'turn-head' },
      h('span', { class: 'speaker' }, turn.speaker || t('episodes.unknown_speaker')),
      ' ', h('span', { class: 'badge' }, turn.role),
      ' ', h('time', { datetime: turn.time }, formatTime(turn.time, lang)),
      turn.scope && turn.scope.thread ? [' · ', t('episodes.thread', { thread: turn.scope.thread })] : null,
      cited ? [' ', h('strong', { class: 'badge cited' }, t('episodes.cited_mark'))] : null,
      turn.archived ? [' ', h('span', { class: 'badge' }, t('episodes.archived'))] : null,
      h('a', { class: 'button-link small danger', href: `#/forget/item/${encodeURIComponent(turn.id)}`,
        'aria-label': t('episodes.forget_label', { id: turn.id }) }, t('episodes.forget'))),
    h('p', { class: 'stored-text turn-text' }, turn.text));
  }));
  mount(root,
    heading(t('episodes.session', { id: sessionId }),
      h('p', {}, h('a', { href: '#/episodes' }, `← ${t('episodes.all')}`)),
      h('p', { class: 'meta' }, t('episodes.turns', { n: turns.length }))),
    shown.length ? h('p', { class: 'notice', role: 'status' }, t('episodes.cited', { n: shown.length })) : null,
    missing ? h('p', { class: 'notice error', role: 'status' }, t('episodes.cited_missing', { n: missing })) : null,
    list);
  const first = shown.length ? document.getElementById(`turn-${shown[0]}`) : null;
  if (first) {
    first.scrollIntoView({ block: 'center' });
    first.focus({ preventScroll: true });
  }
}

export async function render(root, ctx) {
  if (ctx.route.params.session) await renderSession(root, ctx);
  else await renderList(root, ctx);
}
