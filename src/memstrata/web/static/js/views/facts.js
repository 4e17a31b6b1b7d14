// Facts (L3): filtered by category, topic, validity and slot; a superseded fact shows what
// replaced it and when; a fact that names a time shows its words and the interval they name,
// a fact that sets a state its slot; every fact shows its citations.

import { h, formatTime, mount } from '../dom.js';
import { register } from '../i18n.js';
import { documents, facts as loadFacts } from '../data.js';
import { citationMarkers, heading, note } from '../parts.js';

export const CATEGORIES = ['profile', 'preference', 'personal', 'expertise', 'decision', 'plan', 'event', 'relationship', 'health', 'other'];
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
    'facts.slot': 'Slot',
    'facts.slot_hint': 'A kind (allergy) or a whole slot (allergy:shrimp)',
    'facts.slot_title': 'The state this fact sets for its subject; facts with the same slot supersede each other',
    'facts.when': 'Speaks of:',
    'facts.when_title': 'The interval [{start}, {end}) the words name, in UTC',
    'category.health': 'health',
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
    'facts.slot': '状态槽',
    'facts.slot_hint': '种类（allergy）或完整状态槽（allergy:shrimp）',
    'facts.slot_title': '此事实为其主体设定的状态；同一状态槽的事实相互取代',
    'facts.when': '所指时间：',
    'facts.when_title': '这些词所指的区间 [{start}, {end})，UTC',
    'category.health': '健康',
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

const DAY_MS = 24 * 60 * 60 * 1000;
const MIDNIGHT = /T00:00:00(\.0+)?Z$/;

/** The interval a fact's `when` names, for a person: whole days as dates (UTC, the last day
 * shown, since the end is not part of it), else the start and end times. */
export function whenInterval(when, lang) {
  if (MIDNIGHT.test(when.start) && MIDNIGHT.test(when.end)) {
    const locale = lang === 'zh' ? 'zh-CN' : 'en-GB';
    const day = (ms) => new Date(ms).toLocaleDateString(locale, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
    const first = new Date(when.start).getTime();
    const last = new Date(when.end).getTime() - DAY_MS;
    return first === last ? day(first) : `${day(first)} – ${day(last)}`;
  }
  return `${formatTime(when.start, lang)} – ${formatTime(when.end, lang)}`;
}

function whenLine(when, ctx) {
  const { t, lang } = ctx;
  return h('p', { class: 'fact-when', title: t('facts.when_title', { start: when.start, end: when.end }) },
    t('facts.when'), ' ',
    h('q', { class: 'stored-text when-text' }, when.text), ' ',
    h('span', { class: 'when-interval' }, `(${whenInterval(when, lang)})`));
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
      fact.slot ? [' ', h('span', { class: 'badge slot', title: t('facts.slot_title') }, fact.slot)] : null,
      ' ', t('facts.confidence', { value: percent(fact.confidence) }),
      ' · ', t('facts.importance', { value: percent(fact.importance) }),
      ' · ', t('facts.valid_from', { time: formatTime(fact.valid_from, lang) }),
      fact.valid_to ? [' ', t('facts.valid_to', { time: formatTime(fact.valid_to, lang) })] : null),
    fact.when ? whenLine(fact.when, ctx) : null,
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
    slot: (query.get('slot') || '').trim(),
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
    if (String(data.get('slot') || '').trim()) params.set('slot', String(data.get('slot')).trim());
    if (data.get('valid') && data.get('valid') !== 'current') params.set('valid', data.get('valid'));
    ctx.navigate(`facts${params.toString() ? `?${params}` : ''}`);
  } },
  select('facts-category', t('facts.category'), [['', t('facts.any')], ...CATEGORIES.map((c) => [c, t(`category.${c}`)])], filters.category),
  select('facts-topic', t('facts.topic'), [['', t('facts.any')], ...topics.map((k) => [k, k])], filters.topic),
  select('facts-valid', t('facts.valid'), VALIDITY.map((v) => [v, t(`facts.valid.${v}`)]), filters.valid),
  h('div', { class: 'field' }, h('label', { for: 'facts-slot' }, t('facts.slot')),
    h('input', { id: 'facts-slot', name: 'slot', type: 'search', value: filters.slot, maxlength: 200, placeholder: 'allergy, allergy:shrimp', title: t('facts.slot_hint') })),
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
