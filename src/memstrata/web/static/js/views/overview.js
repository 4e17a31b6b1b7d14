// Overview: the identity (L0), the essentials exactly as wake-up injects them with their
// token count (L0 + L1), and the counts of the scope.

import { h, formatTime, mount } from '../dom.js';
import { register } from '../i18n.js';
import { heading, number, pairs } from '../parts.js';

register({
  en: {
    'overview.title': 'Overview',
    'overview.scope': 'Memory of {user}',
    'overview.scope_thread': 'Memory of {user}, thread {thread}',
    'overview.identity': 'Identity (L0)',
    'overview.identity_empty': 'No identity written yet.',
    'overview.version': 'version {version}',
    'overview.wakeup': 'What the agent wakes up with (L0 + L1)',
    'overview.wakeup_intro': 'The <memory> block exactly as wake-up injects it at the start of a conversation.',
    'overview.tokens': '{tokens} of {budget} tokens',
    'overview.budget': 'Budget (tokens)',
    'overview.show': 'Show',
    'overview.left_out': 'Left out for the budget: {parts}',
    'overview.counts': 'Counts',
    'overview.episodes': 'Turns (episodes)',
    'overview.archived': 'Archived turns',
    'overview.sessions': 'Sessions',
    'overview.speakers': 'Speakers',
    'overview.facts_current': 'Current facts',
    'overview.facts_superseded': 'Superseded facts',
    'overview.documents': 'Documents',
    'overview.first': 'First turn',
    'overview.last': 'Latest turn',
    'overview.sizes': 'Stored text by kind (UTF-8)',
    'overview.kind.episode': 'turns',
    'overview.kind.fact': 'facts',
    'overview.kind.total': 'total',
    'overview.bytes': '{n} bytes',
    'overview.kib': '{n} KiB',
    'overview.mib': '{n} MiB',
  },
  zh: {
    'overview.title': '概览',
    'overview.scope': '{user} 的记忆',
    'overview.scope_thread': '{user} 的记忆，线程 {thread}',
    'overview.identity': '身份（L0）',
    'overview.identity_empty': '尚未填写身份。',
    'overview.version': '第 {version} 版',
    'overview.wakeup': '智能体启动时载入的内容（L0 + L1）',
    'overview.wakeup_intro': '与 wake-up 在对话开始时注入的 <memory> 块完全一致。',
    'overview.tokens': '{tokens} / {budget} 个 token',
    'overview.budget': '预算（token）',
    'overview.show': '显示',
    'overview.left_out': '因预算未载入：{parts}',
    'overview.counts': '数量',
    'overview.episodes': '对话轮次',
    'overview.archived': '已归档轮次',
    'overview.sessions': '会话',
    'overview.speakers': '说话人',
    'overview.facts_current': '当前事实',
    'overview.facts_superseded': '已被取代的事实',
    'overview.documents': '文档',
    'overview.first': '最早一轮',
    'overview.last': '最近一轮',
    'overview.sizes': '按类型统计的存储文本（UTF-8）',
    'overview.kind.episode': '对话轮次',
    'overview.kind.fact': '事实',
    'overview.kind.total': '合计',
    'overview.bytes': '{n} 字节',
    'overview.kib': '{n} KiB',
    'overview.mib': '{n} MiB',
  },
});

function size(bytes, t, lang) {
  if (bytes < 1024) return t('overview.bytes', { n: number(bytes, lang) });
  if (bytes < 1024 * 1024) return t('overview.kib', { n: (bytes / 1024).toFixed(1) });
  return t('overview.mib', { n: (bytes / 1024 / 1024).toFixed(1) });
}

export async function render(root, ctx) {
  const { api, t, scope, signal, lang } = ctx;
  const query = scope.query();
  const budget = Number(ctx.route.query.get('budget')) || 800;
  const [identity, wake, stats] = await Promise.all([
    api.get('/v1/identity', query, { signal }),
    api.get('/v1/wake-up', { ...query, budget }, { signal }),
    api.get('/v1/stats', query, { signal }),
  ]);
  const title = scope.thread
    ? t('overview.scope_thread', { user: scope.user, thread: scope.thread })
    : t('overview.scope', { user: scope.user });

  const budgetInput = h('input', { id: 'wake-budget', type: 'number', min: '1', value: String(budget), inputmode: 'numeric' });
  const budgetForm = h('form', { class: 'inline-form', onsubmit: (event) => {
    event.preventDefault();
    const value = Math.max(1, Math.round(Number(budgetInput.value) || 800));
    ctx.navigate(`overview?budget=${value}`);
  } }, h('label', { for: 'wake-budget' }, t('overview.budget')), budgetInput,
  h('button', { type: 'submit' }, t('overview.show')));
  const leftOut = Object.entries(wake.left_out || {}).filter(([, n]) => n > 0);

  const documents = Object.entries(stats.documents || {}).map(([kind, n]) => `${kind} ${number(n, lang)}`).join(', ');
  mount(root,
    heading(t('overview.title'), h('p', { class: 'subtitle' }, title)),
    h('section', { class: 'card', 'aria-labelledby': 'identity-title' },
      h('h2', { id: 'identity-title' }, t('overview.identity')),
      identity.text
        ? h('p', { class: 'stored-text identity-text' }, identity.text)
        : h('p', { class: 'notice' }, t('overview.identity_empty')),
      identity.version ? h('p', { class: 'meta' }, t('overview.version', { version: identity.version })) : null),
    h('section', { class: 'card', 'aria-labelledby': 'wake-title' },
      h('h2', { id: 'wake-title' }, t('overview.wakeup')),
      h('p', { class: 'meta' }, t('overview.wakeup_intro')),
      budgetForm,
      h('p', { class: 'token-count', id: 'wake-tokens' },
        t('overview.tokens', { tokens: number(wake.tokens, lang), budget: number(wake.budget, lang) })),
      leftOut.length ? h('p', { class: 'meta' }, t('overview.left_out', { parts: leftOut.map(([k, n]) => `${k} ${n}`).join(', ') })) : null,
      h('pre', { class: 'memory-block', id: 'wake-text', tabindex: '0' }, wake.text)),
    h('section', { class: 'card', 'aria-labelledby': 'counts-title' },
      h('h2', { id: 'counts-title' }, t('overview.counts')),
      pairs([
        [t('overview.episodes'), number(stats.episodes, lang)],
        [t('overview.archived'), number(stats.archived_episodes, lang)],
        [t('overview.sessions'), number(stats.sessions, lang)],
        [t('overview.speakers'), number(stats.speakers, lang)],
        [t('overview.facts_current'), number(stats.facts_current, lang)],
        [t('overview.facts_superseded'), number(stats.facts_superseded, lang)],
        [t('overview.documents'), documents || '0'],
        [t('overview.first'), formatTime(stats.first_time, lang)],
        [t('overview.last'), formatTime(stats.last_time, lang)],
      ], 'pairs stats'),
      stats.bytes ? [h('h3', {}, t('overview.sizes')),
        pairs(Object.entries(stats.bytes).map(([kind, n]) => [
          t(`overview.kind.${kind}`) === `overview.kind.${kind}` ? kind : t(`overview.kind.${kind}`),
          size(n, t, lang),
        ]), 'pairs sizes')] : null));
}
