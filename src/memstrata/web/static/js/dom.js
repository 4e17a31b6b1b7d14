// Building the page's elements. Every piece of text reaches the page as a text node
// (textContent): stored text is never parsed as HTML, so a turn such as
// `<img src=x onerror=alert(1)>` shows as those characters. Nothing here, or in any view,
// uses innerHTML, outerHTML, insertAdjacentHTML or document.write (a test checks).

/**
 * h(tag, attrs, ...children): a new element.
 *  attrs: `class` (string or array), `on<event>` (a function: an event listener),
 *  `dataset` (an object), a boolean value (true: the attribute present, false: absent),
 *  `value`/`checked`/`selected`/`disabled` (set as properties), anything else as an attribute;
 *  null or undefined values are left out.
 *  children: strings and numbers become text nodes, nodes are appended, arrays are
 *  flattened, null/undefined/false are skipped.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === 'class') {
      const names = Array.isArray(value) ? value.filter(Boolean) : String(value).split(/\s+/);
      for (const cls of names) if (cls) el.classList.add(cls);
    } else if (name === 'dataset') {
      for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
    } else if (name === 'value' || name === 'checked' || name === 'selected' || name === 'disabled') {
      el[name] = value;
    } else if (value === true) {
      el.setAttribute(name, '');
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

/**
 * A string's text with its `backticked` parts (a command, a file name) as <code> elements:
 * an array of strings and nodes for h or append (text nodes only, never parsed as HTML). A
 * backtick without its pair stays as it is.
 */
export function withCode(text) {
  const parts = String(text).split('`');
  if (parts.length % 2 === 0) {
    const last = parts.pop();
    parts.push(`${parts.pop()}\`${last}`); // the unpaired backtick is text
  }
  return parts.map((part, i) => (i % 2 ? h('code', {}, part) : part)).filter((part) => part !== '');
}

/** Append children (as h does) to el; returns el. */
export function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
  return el;
}

/** Replace el's children with these (as h takes them); returns el. */
export function mount(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** A date and time in the reader's locale, from the API's ISO 8601 text ('' for none). */
export function formatTime(iso, lang) {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-GB', {
    year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit',
  });
}

/** The date part only. */
export function formatDate(iso, lang) {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleDateString(lang === 'zh' ? 'zh-CN' : 'en-GB', {
    year: 'numeric', month: 'short', day: 'numeric',
  });
}
