// Facts (L3): filtered by category, topic and validity; a superseded fact shows what replaced
// it and when; every fact shows its citations.

import { h, formatTime, mount } from '../dom.js';
import { register } from '../i18n.js';
import { documents, facts as loadFacts } from '../data.js';
import { citationMarkers, heading, note } from '../parts.js';

export const CATEGORIES = ['profile', 'preference', 'personal', 'expertise', 'decision', 'plan', 'event', 'relationship', 'other'];
const VALIDITY = ['current', 'superseded', 'all'];

register({
  en: {
    'facts.title': 'Facts',
    'facts.intro': 'Every atomic fact (L3), with its category, confidence, importance, validity and sources.',
    'facts.filters': 'Filters',
    'facts.category': 'Category',
    'facts.topic': 'Topic',
    'facts.valid': 'Validity',
    'facts.any': 'Any',
    'facts.valid.current': 'Current',
    'facts.valid.superseded': 'Superseded or expired',
    'facts.valid.all': 'All',
    'facts.apply': 'Filter',
    'facts.count': '{n} facts',
    'facts.none': 'No fact matches these filters.',
    'facts.confidence': 'confidence {value}',
    'facts.importance': 'importance {value}',
    'facts.valid_from': 'valid from {time}',
    'facts.valid_to': 'until {time}',
    'facts.superseded': 'Superseded on {time} by:',
    'facts.expired': 'No longer valid since {time}.',
    'facts.replacement_missing': 'the fact {id} (not in this scope any more)',
    'facts.edit': 'Edit',
    'facts.forget': 'Forget',
    'facts.edit_label': 'Edit the fact {id}',
    'facts.forget_label': 'Forget the fact {id}',
    'facts.sources': 'Sources:',
    'category.profile': 'profile', 'category.preference': 'preference', 'category.personal': 'personal',
    'category.expertise': 'expertise', 'category.decision': 'decision', 'category.plan': 'plan',
    'category.event': 'event', 'category.relationship': 'relationship', 'category.other': 'other',
  },
  zh: {
    'facts.title': '事实',
    'facts.intro': '每条原子事实（L3），含类别、置信度、重要性、有效期与来源。',
    'facts.filters': '筛选',
    'facts.category': '类别',
    'facts.topic': '主题',
    'facts.valid': '有效性',
    'facts.any': '任意',
    'facts.valid.current': '当前有效',
    'facts.valid.superseded': '已被取代或已过期',
    'facts.valid.all': '全部',
    'facts.apply': '筛选',
    'facts.count': '共 {n} 条事实',
    'facts.none': '没有符合筛选条件的事实。',
    'facts.confidence': '置信度 {value}',
    'facts.importance': '重要性 {value}',
    'facts.valid_from': '自 {time} 起有效',
    'facts.valid_to': '至 {time}',
    'facts.superseded': '于 {time} 被以下事实取代：',
    'facts.expired': '自 {time} 起不再有效。',
    'facts.replacement_missing': '事实 {id}（已不在此范围内）',
    'facts.edit': '编辑',
    'facts.forget': '遗忘',
    'facts.edit_label': '编辑事实 {id}',
    'facts.forget_label': '遗忘事实 {id}',
    'facts.sources': '来源：',
    'category.profile': '个人资料', 'category.preference': '偏好', 'category.personal': '个人',
    'category.expertise': '专长', 'category.decision': '决定', 'category.plan': '计划',
    'category.event': '事件', 'category.relationship': '关系', 'category.other': '其他',
  },
});

function select(id, label, options, chosen) {
  return h('div', { class: 'field' }, h('label', { for: id }, label),
    h('select', { id, name: id.replace('facts-', '') },
      options.map(([value, text]) => h('option', { value, selected: value === chosen }, text))));
}

function factItem(fact, ctx) {
  const { t, lang } = ctx;
  const over = Boolean(fact.superseded_by) || Boolean(fact.valid_to);
  const percent = (v) => Number(v).toFixed(2);
  return h('li', { class: ['card', 'fact', over ? 'fact-over' : null], id: `fact-${fact.id}`, dataset: { id: fact.id } },
    h('p', { class: 'stored-text fact-text' }, fact.text),
    h('p', { class: 'meta' },
      h('span', { class: 'badge' }, t(`category.${fact.category}`)),
      fact.topic ? [' ', h('a', { class: 'badge topic', href: `#/topics/${encodeURIComponent(fact.topic)}` }, fact.topic)] : null,
      ' ', t('facts.confidence', { value: percent(fact.confidence) }),
      ' · ', t('facts.importance', { value: percent(fact.importance) }),
      ' · ', t('facts.valid_from', { time: formatTime(fact.valid_from, lang) }),
      fact.valid_to ? [' ', t('facts.valid_to', { time: formatTime(fact.valid_to, lang) })] : null),
    fact.superseded_by
      ? h('div', { class: 'superseded' },
        h('p', {}, t('facts.superseded', { time: formatTime(fact.valid_to, lang) })),
        h('p', { class: 'replacement' },
          h('a', { href: `#/facts?valid=all&focus=${encodeURIComponent(fact.superseded_by)}`, dataset: { replacement: fact.superseded_by } },
            fact.superseded_by_text
              ? h('span', { class: 'stored-text' }, fact.superseded_by_text)
              : t('facts.replacement_missing', { id: fact.superseded_by }))))
      : (fact.valid_to ? h('p', { class: 'superseded' }, t('facts.expired', { time: formatTime(fact.valid_to, lang) })) : null),
    h('p', { class: 'fact-sources' }, t('facts.sources'), ' ', citationMarkers(fact.sources)),
    h('p', { class: 'actions' },
      h('a', { class: 'button-link small', href: `#/edit/fact/${encodeURIComponent(fact.id)}`, 'aria-label': t('facts.edit_label', { id: fact.id }) }, t('facts.edit')),
      ' ',
      h('a', { class: 'button-link small danger', href: `#/forget/item/${encodeURIComponent(fact.id)}`, 'aria-label': t('facts.forget_label', { id: fact.id }) }, t('facts.forget'))));
}

export async function render(root, ctx) {
  const { t, scope, signal, route } = ctx;
  const query = route.query;
  const filters = {
    category: CATEGORIES.includes(query.get('category')) ? query.get('category') : '',
    topic: query.get('topic') || '',
    valid: VALIDITY.includes(query.get('valid')) ? query.get('valid') : 'current',
  };
  const [found, docs] = await Promise.all([
    loadFacts(ctx.api, scope.query(), filters, signal),
    documents(ctx.api, scope.query(), signal),
  ]);
  const topics = [...new Set([
    ...docs.filter((d) => d.doc_kind === 'topic').map((d) => d.key),
    ...found.map((f) => f.topic).filter(Boolean),
    ...(filters.topic ? [filters.topic] : []),
  ])].sort();
  const form = h('form', { class: 'filters', 'aria-label': t('facts.filters'), onsubmit: (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const params = new URLSearchParams();
    for (const name of ['category', 'topic']) if (data.get(name)) params.set(name, data.get(name));
    if (data.get('valid') && data.get('valid') !== 'current') params.set('valid', data.get('valid'));
    ctx.navigate(`facts${params.toString() ? `?${params}` : ''}`);
  } },
  select('facts-category', t('facts.category'), [['', t('facts.any')], ...CATEGORIES.map((c) => [c, t(`category.${c}`)])], filters.category),
  select('facts-topic', t('facts.topic'), [['', t('facts.any')], ...topics.map((k) => [k, k])], filters.topic),
  select('facts-valid', t('facts.valid'), VALIDITY.map((v) => [v, t(`facts.valid.${v}`)]), filters.valid),
  h('button', { type: 'submit', class: 'primary' }, t('facts.apply')));
  mount(root,
    heading(t('facts.title'), h('p', { class: 'subtitle' }, t('facts.intro'))),
    form,
    h('p', { class: 'meta', role: 'status', id: 'facts-count' }, t('facts.count', { n: found.length })),
    found.length ? h('ul', { class: 'fact-list' }, found.map((fact) => factItem(fact, ctx))) : note(t('facts.none')));
  const focus = query.get('focus') && document.getElementById(`fact-${query.get('focus')}`);
  if (focus) {
    focus.classList.add('highlight');
    focus.setAttribute('tabindex', '-1');
    focus.scrollIntoView({ block: 'center' });
    focus.focus({ preventScroll: true });
  }
}
