// Topics (L2) and the essentials document (L1): every curated document with its sections and
// bullets, each bullet with its citation markers (a click opens the cited turns).

import { h, formatTime, mount } from '../dom.js';
import { register } from '../i18n.js';
import { documents } from '../data.js';
import { Footnotes, citationMarkers, heading, note } from '../parts.js';

register({
  en: {
    'topics.title': 'Topics',
    'topics.intro': 'One summary document per topic (L2), and the essentials (L1); every bullet cites the turns it rests on.',
    'topics.none': 'No topic documents yet: they are made when memory is curated (extract, then consolidate).',
    'topics.essentials': 'Essentials (L1)',
    'topics.meta': 'version {version}, updated {time}',
    'topics.edit': 'Edit',
    'topics.edit_label': 'Edit the document {key}',
    'topics.all': 'All topics',
    'topics.missing': 'There is no topic document {key} in this scope.',
    'topics.bullets': 'bullets: {n}',
    'topics.toc': 'Documents',
  },
  zh: {
    'topics.title': '主题',
    'topics.intro': '每个主题一篇摘要文档（L2），以及要点文档（L1）；每个要点都引用其依据的对话。',
    'topics.none': '还没有主题文档：整理记忆（先提取，再合并）时才会生成。',
    'topics.essentials': '要点（L1）',
    'topics.meta': '第 {version} 版，更新于 {time}',
    'topics.edit': '编辑',
    'topics.edit_label': '编辑文档 {key}',
    'topics.all': '全部主题',
    'topics.missing': '此范围内没有主题文档 {key}。',
    'topics.bullets': '{n} 个要点',
    'topics.toc': '文档',
  },
});

function bulletCount(doc) {
  return (doc.content.sections || []).reduce((n, s) => n + (s.bullets || []).length, 0);
}

function documentCard(doc, ctx) {
  const { t, lang } = ctx;
  const footnotes = new Footnotes();
  const title = doc.doc_kind === 'essentials' ? t('topics.essentials') : (doc.content.title || doc.key);
  return h('article', { class: ['card', 'document', `doc-${doc.doc_kind}`], id: `doc-${doc.key}`, dataset: { key: doc.key } },
    h('header', { class: 'document-header' },
      h('h2', {}, doc.doc_kind === 'topic' ? h('a', { href: `#/topics/${encodeURIComponent(doc.key)}` }, title) : title),
      h('a', { class: 'button-link small', href: `#/edit/doc/${encodeURIComponent(doc.key)}`,
        'aria-label': t('topics.edit_label', { key: doc.key }) }, t('topics.edit'))),
    h('p', { class: 'meta' }, t('topics.meta', { version: doc.version, time: formatTime(doc.updated_at, lang) }),
      ' · ', t('topics.bullets', { n: bulletCount(doc) })),
    (doc.content.sections || []).map((section) => h('section', { class: 'doc-section' },
      section.heading ? h('h3', {}, section.heading) : null,
      h('ul', { class: 'bullets' },
        (section.bullets || []).map((bullet) => h('li', { class: 'bullet', id: `bullet-${bullet.id}`, dataset: { id: bullet.id } },
          h('span', { class: 'stored-text' }, bullet.text), ' ',
          citationMarkers(bullet.citations, footnotes)))))));
}

export async function render(root, ctx) {
  const { t, scope, signal, route } = ctx;
  const docs = (await documents(ctx.api, scope.query(), signal))
    .filter((doc) => doc.doc_kind === 'topic' || doc.doc_kind === 'essentials');
  const topics = docs.filter((doc) => doc.doc_kind === 'topic')
    .sort((a, b) => String(a.content.title || a.key).localeCompare(String(b.content.title || b.key)));
  const essentials = docs.filter((doc) => doc.doc_kind === 'essentials');
  if (route.params.key) {
    const doc = docs.find((d) => d.key === route.params.key);
    mount(root,
      heading(doc ? (doc.content.title || doc.key) : t('topics.title'),
        h('p', {}, h('a', { href: '#/topics' }, `← ${t('topics.all')}`))),
      doc ? documentCard(doc, ctx) : note(t('topics.missing', { key: route.params.key }), 'notice error'));
    return;
  }
  mount(root,
    heading(t('topics.title'), h('p', { class: 'subtitle' }, t('topics.intro'))),
    topics.length ? h('nav', { class: 'toc', 'aria-label': t('topics.toc') },
      h('ul', {}, [...essentials, ...topics].map((doc) => h('li', {},
        h('a', { href: doc.doc_kind === 'topic' ? `#/topics/${encodeURIComponent(doc.key)}` : '#/topics/essentials' },
          doc.doc_kind === 'essentials' ? t('topics.essentials') : (doc.content.title || doc.key)))))) : null,
    essentials.map((doc) => documentCard(doc, ctx)),
    topics.length ? topics.map((doc) => documentCard(doc, ctx)) : note(t('topics.none')));
}
