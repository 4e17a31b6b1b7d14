// Pieces the browsing views share: citation markers, headings, notes, small formatting.

import { h } from './dom.js';
import { register, t } from './i18n.js';

register({
  en: {
    'cite.label': 'Source {n}: turn {id}',
    'cite.sources': 'Sources',
    'cite.none': 'no source cited',
  },
  zh: {
    'cite.label': '来源 {n}：对话 {id}',
    'cite.sources': '来源',
    'cite.none': '未引用来源',
  },
});

/** 'chat:ep_01..' or 'ep_01..' -> {surface, id}. */
export function parseCitation(text) {
  const value = String(text);
  const at = value.lastIndexOf(':');
  return at < 0 ? { surface: null, id: value } : { surface: value.slice(0, at), id: value.slice(at + 1) };
}

/** The route that opens these cited episodes in their session. */
export function citeHref(ids) {
  return `#/cite/${ids.map(encodeURIComponent).join(',')}`;
}

/**
 * Footnote numbers shared within one document: the first citation of a source gets the next
 * number, later ones the same (as the markdown form numbers them).
 */
export class Footnotes {
  constructor() {
    this.numbers = new Map();
  }

  number(id) {
    if (!this.numbers.has(id)) this.numbers.set(id, this.numbers.size + 1);
    return this.numbers.get(id);
  }
}

/** Citation markers [1][2], each a link to the cited turn in its session. */
export function citationMarkers(citations, footnotes = new Footnotes()) {
  const parsed = (citations || []).map(parseCitation);
  if (!parsed.length) return h('span', { class: 'citations none' }, t('cite.none'));
  return h('span', { class: 'citations' },
    parsed.map(({ surface, id }) => {
      const n = footnotes.number(id);
      return h('a', {
        class: 'cite', href: citeHref([id]), dataset: { episode: id },
        title: surface ? `${surface}:${id}` : id, 'aria-label': t('cite.label', { n, id }),
      }, `[${n}]`);
    }));
}

/** A view's heading, focusable so moving to the view can put focus there. */
export function heading(text, ...extra) {
  return h('header', { class: 'view-header' }, h('h1', { tabindex: '-1' }, text), ...extra);
}

export function note(text, kind = 'notice') {
  return h('p', { class: kind }, text);
}

/** A definition list of [label, value] pairs. */
export function pairs(items, className = 'pairs') {
  return h('dl', { class: className },
    items.filter(([, value]) => value !== null && value !== undefined && value !== '')
      .map(([label, value]) => h('div', {}, h('dt', {}, label), h('dd', {}, value))));
}

export function number(value, lang) {
  return Number(value).toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-GB');
}
