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
    'topics.of_thread': 'thread {thread}',
    'topics.of_agent': 'agent {agent}',
    'topics.others': 'These documents belong to one thread or agent of the user, beside the user\'s own.',
    'topics.none_thread': 'This thread has no documents of its own: its turns are curated into the user\'s documents (pick "All threads" to see them).',
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
    'topics.of_thread': '线程 {thread}',
    'topics.of_agent': '智能体 {agent}',
    'topics.others': '以下文档属于该用户的某个线程或智能体，与用户本人的文档并列。',
    'topics.none_thread': '此线程没有自己的文档：它的对话已整理进该用户的文档（选择“全部线程”即可查看）。',
  },
});

function bulletCount(doc) {
  return (doc.content.sections || []).reduce((n, s) => n + (s.bullets || []).length, 0);
}

/** The thread and agent of a document that the page's scope does not name (null: none). */
function elsewhere(doc, scope) {
  const of = doc.scope || {};
  const thread = of.thread && of.thread !== scope.thread ? of.thread : null;
  const agent = of.agent || null;
  return thread || agent ? { thread, agent } : null;
}

/** Where a document belongs, for a person: "thread t1", "agent helper", both. */
function whereLabel(where, t) {
  return [where.thread ? t('topics.of_thread', { thread: where.thread }) : null,
    where.agent ? t('topics.of_agent', { agent: where.agent }) : null].filter(Boolean).join(' · ');
}

/** The query that keeps a link to a document in the document's own thread and agent. */
function whereQuery(where) {
  if (!where) return '';
  const params = new URLSearchParams();
  if (where.thread) params.set('thread', where.thread);
  if (where.agent) params.set('agent', where.agent);
  return `?${params}`;
}

function docTitle(doc, t) {
  return doc.doc_kind === 'essentials' ? t('topics.essentials') : (doc.content.title || doc.key);
}

function docHref(doc, where) {
  return `#/topics/${encodeURIComponent(doc.doc_kind === 'topic' ? doc.key : 'essentials')}${whereQuery(where)}`;
}

function docAnchor(doc, where) {
  if (!where) return `doc-${doc.key}`;
  return `doc-${[where.thread, where.agent].filter(Boolean).join('-')}--${doc.key}`;
}

function documentCard(doc, ctx) {
  const { t, lang, scope } = ctx;
  const footnotes = new Footnotes();
  const where = elsewhere(doc, scope);
  const title = docTitle(doc, t);
  return h('article', { class: ['card', 'document', `doc-${doc.doc_kind}`, where ? 'doc-elsewhere' : null], id: docAnchor(doc, where),
    dataset: { key: doc.key, thread: (doc.scope && doc.scope.thread) || '', agent: (doc.scope && doc.scope.agent) || '' } },
    h('header', { class: 'document-header' },
      h('h2', {}, doc.doc_kind === 'topic' ? h('a', { href: docHref(doc, where) }, title) : title,
        where ? h('span', { class: 'doc-scope' }, ' · ', whereLabel(where, t)) : null),
      h('a', { class: 'button-link small', href: `#/edit/doc/${encodeURIComponent(doc.key)}${whereQuery(where)}`,
        'aria-label': t('topics.edit_label', { key: where ? `${doc.key} (${whereLabel(where, t)})` : doc.key }) }, t('topics.edit'))),
    h('p', { class: 'meta' }, t('topics.meta', { version: doc.version, time: formatTime(doc.updated_at, lang) }),
      ' · ', t('topics.bullets', { n: bulletCount(doc) })),
    (doc.content.sections || []).map((section) => h('section', { class: 'doc-section' },
      section.heading ? h('h3', {}, section.heading) : null,
      h('ul', { class: 'bullets' },
        (section.bullets || []).map((bullet) => h('li', { class: 'bullet', id: `bullet-${bullet.id}`, dataset: { id: bullet.id } },
          h('span', { class: 'stored-text' }, bullet.text), ' ',
          citationMarkers(bullet.citations, footnotes)))))));
}

/** Documents in the order a person reads them: the scope's own first, then each thread's. */
function ordered(docs, scope) {
  const place = (doc) => {
    const where = elsewhere(doc, scope);
    return where ? `1${where.thread || ''}\u0000${where.agent || ''}` : '0';
  };
  const title = (doc) => String(doc.content.title || doc.key);
  return [...docs].sort((a, b) => place(a).localeCompare(place(b)) || title(a).localeCompare(title(b)));
}

export async function render(root, ctx) {
  const { t, scope, signal, route } = ctx;
  const docs = (await documents(ctx.api, scope.query(), signal))
    .filter((doc) => doc.doc_kind === 'topic' || doc.doc_kind === 'essentials');
  const topics = ordered(docs.filter((doc) => doc.doc_kind === 'topic'), scope);
  const essentials = ordered(docs.filter((doc) => doc.doc_kind === 'essentials'), scope);
  if (route.params.key) {
    const thread = route.query.get('thread') || null;
    const agent = route.query.get('agent') || null;
    const named = (route.params.key === 'essentials' ? essentials : topics)
      .filter((d) => d.key === route.params.key);
    const at = (d) => elsewhere(d, scope) || { thread: null, agent: null };
    const doc = named.find((d) => at(d).thread === thread && at(d).agent === agent)
      || (thread || agent ? null : named[0]);
    mount(root,
      heading(doc ? docTitle(doc, t) : t('topics.title'),
        h('p', {}, h('a', { href: '#/topics' }, `← ${t('topics.all')}`))),
      doc ? documentCard(doc, ctx) : note(t('topics.missing', { key: route.params.key }), 'notice error'));
    return;
  }
  const all = [...essentials, ...topics];
  const own = all.filter((doc) => !elsewhere(doc, scope));
  const others = all.filter((doc) => elsewhere(doc, scope));
  mount(root,
    heading(t('topics.title'), h('p', { class: 'subtitle' }, t('topics.intro'))),
    all.length ? h('nav', { class: 'toc', 'aria-label': t('topics.toc') },
      h('ul', {}, all.map((doc) => {
        const where = elsewhere(doc, scope);
        return h('li', { dataset: { thread: (where && where.thread) || '' } },
          h('a', { href: docHref(doc, where) }, docTitle(doc, t)),
          where ? h('span', { class: 'doc-scope' }, ` (${whereLabel(where, t)})`) : null);
      }))) : null,
    own.filter((doc) => doc.doc_kind === 'essentials').map((doc) => documentCard(doc, ctx)),
    own.some((doc) => doc.doc_kind === 'topic')
      ? own.filter((doc) => doc.doc_kind === 'topic').map((doc) => documentCard(doc, ctx))
      : (others.length ? null : note(t(scope.thread ? 'topics.none_thread' : 'topics.none'))),
    others.length ? h('section', { class: 'docs-elsewhere' },
      h('p', { class: 'meta' }, t('topics.others')),
      others.map((doc) => documentCard(doc, ctx))) : null);
}
