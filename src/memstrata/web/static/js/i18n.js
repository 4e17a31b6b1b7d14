// The interface's words in English and Chinese. t(key, params) looks a key up in the chosen
// language, then in English, then gives the key itself (a missing string shows, and a test
// can see it); `{name}` in a string is replaced by params.name. Each module registers its
// own strings with register({en: {...}, zh: {...}}). The choice is kept in localStorage and
// sets <html lang>; a change tells every listener of onLangChange (the shell re-renders).

export const LANGS = ['en', 'zh'];
const STORAGE_KEY = 'memstrata.lang';
const HTML_LANG = { en: 'en', zh: 'zh-CN' };
const catalogs = { en: {}, zh: {} };
const listeners = new Set();
let current = initialLang();

function initialLang() {
  let stored = null;
  try {
    stored = window.localStorage.getItem(STORAGE_KEY);
  } catch (_) {
    stored = null; // storage refused (private mode): the browser's language decides
  }
  if (LANGS.includes(stored)) return stored;
  const nav = (navigator.language || 'en').toLowerCase();
  return nav.startsWith('zh') ? 'zh' : 'en';
}

/** Add strings: register({en: {key: 'text'}, zh: {key: '文字'}}). */
export function register(strings) {
  for (const lang of LANGS) Object.assign(catalogs[lang], (strings && strings[lang]) || {});
}

/** The string for key in the current language, with {name} replaced from params. */
export function t(key, params) {
  const text = catalogs[current][key] ?? catalogs.en[key] ?? key;
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name) =>
    Object.prototype.hasOwnProperty.call(params, name) ? String(params[name]) : whole);
}

export function getLang() {
  return current;
}

/** Switch the language: kept in localStorage, <html lang> set, listeners told. */
export function setLang(lang) {
  if (!LANGS.includes(lang)) throw new Error(`unknown language ${lang}`);
  current = lang;
  try {
    window.localStorage.setItem(STORAGE_KEY, lang);
  } catch (_) {
    // not kept across visits when storage is refused; the page still switches
  }
  document.documentElement.lang = HTML_LANG[lang];
  for (const fn of listeners) fn(lang);
}

/** Keys registered in one language and not the other: {en: [...], zh: [...]} lacking. */
export function missing() {
  const lacking = {};
  for (const lang of LANGS) {
    const others = LANGS.filter((other) => other !== lang);
    lacking[lang] = others.flatMap((other) => Object.keys(catalogs[other]))
      .filter((key) => !(key in catalogs[lang]));
  }
  return lacking;
}

/** Call fn(lang) after every switch; returns a function that stops it. */
export function onLangChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

document.documentElement.lang = HTML_LANG[current];

register({
  en: {
    'common.loading': 'Loading…',
    'common.retry': 'Try again',
    'common.close': 'Close',
    'common.none': 'Nothing here yet.',
    'common.error': 'Something went wrong: {message}',
    'common.network': 'The server cannot be reached. Is memstrata running?',
    'common.unavailable': 'This part of the workbench is not available in this installation.',
    'common.signin_again': 'Your key was refused. Sign in again.',
  },
  zh: {
    'common.loading': '加载中…',
    'common.retry': '重试',
    'common.close': '关闭',
    'common.none': '这里还没有内容。',
    'common.error': '出错了：{message}',
    'common.network': '无法连接服务器。memstrata 是否在运行？',
    'common.unavailable': '此安装中没有工作台的这一部分。',
    'common.signin_again': '密钥被拒绝，请重新登录。',
  },
});
