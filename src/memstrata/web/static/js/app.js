// memstrata workbench: the shell (sign-in, scope picker, navigation, language) and the router.
//
// The view contract
// -----------------
// Each view is an ES module `js/views/<name>.js` that exports
//
//     export async function render(root, ctx) { ... }
//
// `root` is an empty element the view fills (with dom.js's h(), never innerHTML); `ctx` is
//
//     api       an Api (api.js): get/post/put/patch/delete(path, ...), request(method, path,
//               {query, body}), stream(path, {query, signal}) -> Response; errors are
//               ApiError (.status, .error, .message, .details), a 409 a ConflictError
//     t         t(key, params) of i18n.js (a view registers its strings with register())
//     navigate  navigate('facts') or navigate('episodes/s1?hl=ep_1', {replace: true})
//     scope     {user, thread}: the user and thread picked in the header (thread may be null);
//               scope.query() gives {user, thread} for a request's query
//     toast     toast(message, {kind: 'info' | 'error'}): a short note in a live region
//     route     {name, params, query}: params from the path (e.g. {key} for #/topics/<key>),
//               query a URLSearchParams of the part after '?'
//     signal    an AbortSignal aborted when the page moves to another view
//     lang      the interface language ('en' or 'zh')
//     me        what GET /v1/me said of the caller ({mode, role, users, key}), or null
//
// render may return a function; it is called when the page leaves the view (stop a stream,
// a timer). An error thrown by render is shown in place of the view (a 401 signs out).
// Dialogs: dialog.js openDialog(). Routes (location.hash):
//
//     #/overview  #/topics  #/topics/<key>  #/facts  #/episodes  #/episodes/<session>?hl=<ids>
//     #/cite/<episode ids>   (a citation: finds the cited turns' session and goes there)
//     #/search  #/runs  #/audit  #/edit/<kind>/<key-or-id>  #/forget/<kind>[/<id>]
//
// A route whose module is not installed shows that the part is not available.

import { Api, ApiError } from './api.js';
import { openDialog } from './dialog.js';
import { h, mount, withCode } from './dom.js';
import { getLang, onLangChange, register, setLang, t } from './i18n.js';

register({
  en: {
    'app.title': 'memstrata workbench',
    'app.skip': 'Skip to content',
    'nav.label': 'Sections',
    'nav.menu': 'Menu',
    'nav.overview': 'Overview',
    'nav.topics': 'Topics',
    'nav.facts': 'Facts',
    'nav.episodes': 'Episodes',
    'nav.search': 'Search & context',
    'nav.runs': 'Curation runs',
    'nav.audit': 'Audit',
    'scope.user': 'User',
    'scope.thread': 'Thread',
    'scope.all_threads': 'All threads',
    'scope.no_users': 'No user holds memory yet',
    'lang.switch': '中文',
    'lang.switch_label': 'Switch the interface to Chinese',
    'signin.title': 'Sign in',
    'signin.intro': 'Enter an API key of this server. The first start wrote an admin key to `admin.key` in the data directory; `memstrata keys create` makes more.',
    'signin.key': 'API key',
    'signin.submit': 'Sign in',
    'signin.refused': 'The key was refused: {message}',
    'signin.empty': 'Enter a key.',
    'signin.kept': 'The key is kept in this tab only and forgotten when it closes.',
    'signout': 'Sign out',
    'signin.local': 'Local mode: no key needed',
    'signin.who': '{role} key {name}',
    'help.open': 'About',
    'help.title': 'About this workbench',
    'help.body1': 'Browse an agent\'s memory layer by layer: the identity and essentials it wakes up with (Overview), the topic documents (Topics), every fact (Facts) and every turn verbatim (Episodes).',
    'help.body2': 'Every bullet and fact shows its citations: follow one to read the cited turns, highlighted in their session.',
    'help.body3': 'Keyboard: Tab moves between controls, Enter follows a link, Escape closes a dialog.',
    'view.not_found': 'There is no page at {path}.',
    'view.go_overview': 'Go to the overview',
    'view.pick_user': 'Pick a user to see their memory.',
    'boot.failed': 'The workbench could not start: {message}',
  },
  zh: {
    'app.title': 'memstrata 工作台',
    'app.skip': '跳到正文',
    'nav.label': '栏目',
    'nav.menu': '菜单',
    'nav.overview': '概览',
    'nav.topics': '主题',
    'nav.facts': '事实',
    'nav.episodes': '对话记录',
    'nav.search': '搜索与上下文',
    'nav.runs': '整理任务',
    'nav.audit': '审核',
    'scope.user': '用户',
    'scope.thread': '线程',
    'scope.all_threads': '全部线程',
    'scope.no_users': '还没有用户存有记忆',
    'lang.switch': 'English',
    'lang.switch_label': '将界面切换为英文',
    'signin.title': '登录',
    'signin.intro': '请输入此服务器的 API 密钥。首次启动时管理员密钥已写入数据目录中的 `admin.key`；`memstrata keys create` 可创建更多密钥。',
    'signin.key': 'API 密钥',
    'signin.submit': '登录',
    'signin.refused': '密钥被拒绝：{message}',
    'signin.empty': '请输入密钥。',
    'signin.kept': '密钥只保存在此标签页中，关闭后即被遗忘。',
    'signout': '退出登录',
    'signin.local': '本地模式：无需密钥',
    'signin.who': '{role} 密钥 {name}',
    'help.open': '说明',
    'help.title': '关于此工作台',
    'help.body1': '逐层浏览智能体的记忆：启动时载入的身份与要点（概览）、主题文档（主题）、每条事实（事实）以及逐字保存的每轮对话（对话记录）。',
    'help.body2': '每个要点和事实都标出其引用：点击引用即可在所在会话中查看被引用的对话，并高亮显示。',
    'help.body3': '键盘：Tab 在控件间移动，Enter 打开链接，Escape 关闭对话框。',
    'view.not_found': '没有 {path} 这个页面。',
    'view.go_overview': '前往概览',
    'view.pick_user': '请选择一个用户以查看其记忆。',
    'boot.failed': '工作台无法启动：{message}',
  },
});

const KEY_STORAGE = 'memstrata.key'; // sessionStorage: the key lives as long as the tab
const SCOPE_STORAGE = 'memstrata.scope'; // localStorage: the last user and thread picked

/** name -> [module, parameter names]; the first path segment picks the route. */
const ROUTES = {
  overview: { module: 'overview', params: [] },
  topics: { module: 'topics', params: ['key'] },
  facts: { module: 'facts', params: [] },
  episodes: { module: 'episodes', params: ['session'] },
  cite: { module: 'cite', params: ['ids'] },
  search: { module: 'search', params: [] },
  runs: { module: 'runs', params: [] },
  audit: { module: 'audit', params: [] },
  edit: { module: 'edit', params: ['kind', 'key'] },
  forget: { module: 'forget', params: ['kind', 'id'] },
};
const NAV = ['overview', 'topics', 'facts', 'episodes', 'search', 'runs', 'audit'];
const NAV_KEYS = { search: 'nav.search', runs: 'nav.runs', audit: 'nav.audit' };

const state = {
  api: new Api({ key: readStored(sessionStorage, KEY_STORAGE) }),
  me: null,
  signedIn: false,
  users: [], // the users the caller may pick
  threads: [], // the picked user's threads
  scope: readScope(),
  leave: null, // the current view's clean-up
  controller: null,
};

function readStored(storage, name) {
  try {
    return storage.getItem(name);
  } catch (_) {
    return null;
  }
}

function writeStored(storage, name, value) {
  try {
    if (value === null) storage.removeItem(name);
    else storage.setItem(name, value);
  } catch (_) {
    // storage refused: the choice holds until the page is left
  }
}

function readScope() {
  try {
    const value = JSON.parse(readStored(localStorage, SCOPE_STORAGE) || '{}');
    return { user: value.user || null, thread: value.thread || null };
  } catch (_) {
    return { user: null, thread: null };
  }
}

function saveScope() {
  writeStored(localStorage, SCOPE_STORAGE, JSON.stringify(state.scope));
}

/** Parse location.hash: '#/episodes/s1?hl=a,b' -> {name, params, query, path}. */
export function parseHash(hash) {
  const text = (hash || '').replace(/^#\/?/, '');
  const [pathPart, queryPart = ''] = text.split('?', 2);
  const segments = pathPart.split('/').filter(Boolean).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch (_) {
      return s;
    }
  });
  const name = segments[0] || 'overview';
  const route = ROUTES[name];
  const query = new URLSearchParams(queryPart);
  if (!route || segments.length - 1 > route.params.length) {
    return { name: null, params: {}, query, path: pathPart };
  }
  const params = {};
  route.params.forEach((param, i) => {
    if (segments[i + 1] !== undefined) params[param] = segments[i + 1];
  });
  return { name, params, query, path: pathPart };
}

export function navigate(path, { replace = false } = {}) {
  const target = `#/${String(path).replace(/^#?\/?/, '')}`;
  if (replace) {
    window.history.replaceState(null, '', target);
    route();
  } else if (window.location.hash === target) {
    route();
  } else {
    window.location.hash = target;
  }
}

// --- toasts ---------------------------------------------------------------------------

function toast(message, { kind = 'info' } = {}) {
  const region = document.getElementById('toasts');
  if (!region) return;
  const note = h('div', { class: ['toast', `toast-${kind}`], role: kind === 'error' ? 'alert' : null }, message);
  region.appendChild(note);
  window.setTimeout(() => note.remove(), kind === 'error' ? 10000 : 5000);
}

// --- the shell ------------------------------------------------------------------------

function shell() {
  return document.getElementById('app');
}

function renderSignIn(problem) {
  state.signedIn = false;
  document.title = t('app.title');
  const message = h('p', { class: 'form-error', id: 'signin-error', role: 'alert' }, problem || '');
  const input = h('input', {
    id: 'signin-key', name: 'key', type: 'password', autocomplete: 'off', spellcheck: 'false',
    required: true, 'aria-describedby': 'signin-error signin-kept',
  });
  const form = h('form', { class: 'signin-form', onsubmit: (event) => {
    event.preventDefault();
    signIn(input.value.trim(), message, button);
  } },
  h('label', { for: 'signin-key' }, t('signin.key')),
  input,
  message,
  h('p', { class: 'hint', id: 'signin-kept' }, t('signin.kept')));
  const button = h('button', { type: 'submit', class: 'primary' }, t('signin.submit'));
  form.appendChild(button);
  mount(shell(),
    h('header', { class: 'topbar' },
      h('span', { class: 'brand' }, 'memstrata'),
      h('div', { class: 'topbar-actions' }, langButton())),
    h('main', { id: 'main', tabindex: '-1', class: 'signin' },
      h('section', { class: 'card signin-card', 'aria-labelledby': 'signin-title' },
        h('h1', { id: 'signin-title' }, t('signin.title')),
        h('p', {}, withCode(t('signin.intro'))),
        form)));
  input.focus();
}

async function signIn(key, message, button) {
  if (!key) {
    message.textContent = t('signin.empty');
    return;
  }
  button.disabled = true;
  const api = new Api({ key });
  try {
    state.me = await whoAmI(api);
  } catch (exc) {
    button.disabled = false;
    message.textContent = exc instanceof ApiError && exc.status === 401
      ? t('signin.refused', { message: exc.message })
      : t('common.error', { message: describe(exc) });
    return;
  }
  state.api = api;
  writeStored(sessionStorage, KEY_STORAGE, key);
  await enter();
}

function signOut(problem) {
  writeStored(sessionStorage, KEY_STORAGE, null);
  state.api = new Api();
  state.me = null;
  leaveView();
  renderSignIn(problem);
}

/** GET /v1/me: who the caller is ({mode, role, users, key}). */
function whoAmI(api) {
  return api.get('/v1/me');
}

/** The users the caller may pick: the key's one user, else those holding memory. */
async function loadUsers() {
  const me = state.me;
  if (me && Array.isArray(me.users) && me.users.length === 1) return me.users;
  const items = await state.api.all('/v1/users', { limit: 1000 }, { max: 5000 });
  return items.map((item) => item.user);
}

/** The threads of a user that hold records. */
async function loadThreads(user) {
  if (!user) return [];
  const answer = await state.api.get('/v1/scopes', { user });
  return [...new Set(answer.items.map((item) => item.thread).filter(Boolean))].sort();
}

async function enter() {
  state.signedIn = true;
  state.users = await loadUsers();
  if (!state.users.includes(state.scope.user)) {
    state.scope = { user: state.users.length ? state.users[0] : null, thread: null };
  }
  state.threads = await loadThreads(state.scope.user);
  if (state.scope.thread && !state.threads.includes(state.scope.thread)) {
    state.scope.thread = null;
  }
  saveScope();
  renderShell();
  route();
}

function langButton() {
  const next = getLang() === 'en' ? 'zh' : 'en';
  return h('button', {
    type: 'button', class: 'lang-switch', id: 'lang-switch', lang: next === 'zh' ? 'zh-CN' : 'en',
    'aria-label': t('lang.switch_label'), onclick: () => setLang(next),
  }, t('lang.switch'));
}

function scopePicker() {
  const userField = h('select', { id: 'scope-user', name: 'user', disabled: state.users.length === 0 },
    state.users.length === 0 ? h('option', { value: '' }, t('scope.no_users')) : null,
    state.users.map((name) => h('option', { value: name, selected: name === state.scope.user }, name)));
  const threadField = h('select', { id: 'scope-thread', name: 'thread' },
    h('option', { value: '' }, t('scope.all_threads')),
    state.threads.map((name) => h('option', { value: name, selected: name === state.scope.thread }, name)));
  userField.addEventListener('change', async () => {
    state.scope = { user: userField.value || null, thread: null };
    try {
      state.threads = await loadThreads(state.scope.user);
    } catch (exc) {
      state.threads = [];
      toast(t('common.error', { message: describe(exc) }), { kind: 'error' });
    }
    saveScope();
    renderShell();
    route();
  });
  threadField.addEventListener('change', () => {
    state.scope = { ...state.scope, thread: threadField.value || null };
    saveScope();
    route();
  });
  return h('div', { class: 'scope-picker', role: 'group', 'aria-label': `${t('scope.user')} / ${t('scope.thread')}` },
    h('span', { class: 'field' }, h('label', { for: 'scope-user' }, t('scope.user')), userField),
    h('span', { class: 'field' }, h('label', { for: 'scope-thread' }, t('scope.thread')), threadField));
}

function whoLabel() {
  const me = state.me;
  if (!me) return null;
  if (me.mode === 'local') return h('span', { class: 'who' }, t('signin.local'));
  const name = me.key ? (me.key.name || me.key.prefix || me.key.id) : '';
  return h('span', { class: 'who' }, t('signin.who', { role: me.role, name }));
}

function renderShell() {
  document.title = t('app.title');
  const navList = h('ul', {},
    NAV.map((name) => h('li', {},
      h('a', { href: `#/${name}`, dataset: { route: name }, onclick: closeNav },
        t(NAV_KEYS[name] || `nav.${name}`)))));
  const local = state.me && state.me.mode === 'local';
  mount(shell(),
    h('header', { class: 'topbar' },
      h('button', { type: 'button', class: 'nav-toggle', id: 'nav-toggle', 'aria-expanded': 'false',
        'aria-controls': 'nav', onclick: toggleNav }, t('nav.menu')),
      h('a', { class: 'brand', href: '#/overview' }, 'memstrata'),
      scopePicker(),
      h('div', { class: 'topbar-actions' },
        whoLabel(),
        h('button', { type: 'button', id: 'help-open', onclick: showHelp }, t('help.open')),
        langButton(),
        local ? null : h('button', { type: 'button', id: 'sign-out', onclick: () => signOut() }, t('signout')))),
    h('div', { class: 'layout' },
      h('nav', { id: 'nav', class: 'sidebar', 'aria-label': t('nav.label') }, navList),
      h('main', { id: 'main', tabindex: '-1' }, h('div', { id: 'view' }))));
}

function toggleNav() {
  const open = !document.body.classList.contains('nav-open');
  document.body.classList.toggle('nav-open', open);
  const button = document.getElementById('nav-toggle');
  if (button) button.setAttribute('aria-expanded', String(open));
  if (open) {
    const first = document.querySelector('#nav a');
    if (first) first.focus();
  }
}

function closeNav() {
  document.body.classList.remove('nav-open');
  const button = document.getElementById('nav-toggle');
  if (button) button.setAttribute('aria-expanded', 'false');
}

function showHelp() {
  openDialog({
    title: t('help.title'),
    content: [h('p', {}, t('help.body1')), h('p', {}, t('help.body2')), h('p', {}, t('help.body3'))],
  });
}

function markNav(name) {
  for (const link of document.querySelectorAll('#nav a')) {
    const current = link.dataset.route === name
      || (name === 'cite' && link.dataset.route === 'episodes');
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

// --- views ----------------------------------------------------------------------------

function leaveView() {
  if (state.controller) state.controller.abort();
  state.controller = null;
  if (typeof state.leave === 'function') {
    try {
      state.leave();
    } catch (exc) {
      console.error(exc);
    }
  }
  state.leave = null;
}

function describe(exc) {
  if (exc instanceof ApiError) return exc.status === 0 ? t('common.network') : exc.message;
  return String((exc && exc.message) || exc);
}

function errorBox(exc, retry) {
  return h('div', { class: 'error-box', role: 'alert' },
    h('p', {}, t('common.error', { message: describe(exc) })),
    retry ? h('button', { type: 'button', onclick: retry }, t('common.retry')) : null);
}

async function loadView(name) {
  try {
    return await import(`./views/${name}.js`);
  } catch (exc) {
    console.error(`the view ${name} could not be loaded`, exc);
    return null;
  }
}

let routing = 0;

async function route() {
  if (!state.signedIn) return;
  const hash = window.location.hash;
  if (hash && !hash.startsWith('#/')) return; // an in-page anchor such as the skip link
  const current = ++routing;
  const parsed = parseHash(hash);
  leaveView();
  closeNav();
  const host = document.getElementById('view');
  if (!host) return;
  const root = h('div', {
    class: 'view',
    dataset: { view: parsed.name || 'missing', user: state.scope.user || '', thread: state.scope.thread || '' },
  });
  mount(host, root);
  markNav(parsed.name);
  if (!parsed.name) {
    mount(root, h('h1', {}, t('view.not_found', { path: `#/${parsed.path}` })),
      h('p', {}, h('a', { href: '#/overview' }, t('view.go_overview'))));
    return;
  }
  if (!state.scope.user) {
    mount(root, h('p', { class: 'notice' }, t('view.pick_user')));
    return;
  }
  const module = await loadView(ROUTES[parsed.name].module);
  if (current !== routing) return;
  if (!module || typeof module.render !== 'function') {
    mount(root, h('p', { class: 'notice unavailable' }, t('common.unavailable')));
    return;
  }
  const controller = new AbortController();
  state.controller = controller;
  const scope = {
    user: state.scope.user,
    thread: state.scope.thread,
    query() {
      return { user: this.user, thread: this.thread };
    },
  };
  const ctx = {
    api: state.api, t, navigate, scope, toast, route: parsed, signal: controller.signal,
    lang: getLang(), me: state.me,
  };
  mount(root, h('p', { class: 'loading', role: 'status' }, t('common.loading')));
  try {
    root.replaceChildren();
    const leave = await module.render(root, ctx);
    if (current !== routing) {
      if (typeof leave === 'function') leave();
      return;
    }
    state.leave = leave;
    root.dataset.state = 'ready'; // rendered (tests wait for it)
  } catch (exc) {
    if (current !== routing || (exc && exc.name === 'AbortError')) return;
    if (exc instanceof ApiError && exc.status === 401 && state.me && state.me.mode !== 'local') {
      signOut(t('common.signin_again'));
      return;
    }
    console.error(exc);
    mount(root, errorBox(exc, () => route()));
    root.dataset.state = 'failed';
  }
}

// --- start ----------------------------------------------------------------------------

let booted = false;

async function boot() {
  document.title = t('app.title');
  if (!booted) {
    booted = true;
    listen();
  }
  try {
    state.me = await whoAmI(state.api);
  } catch (exc) {
    if (exc instanceof ApiError && exc.status === 401) {
      const hadKey = Boolean(state.api.key);
      writeStored(sessionStorage, KEY_STORAGE, null);
      state.api = new Api();
      renderSignIn(hadKey ? t('common.signin_again') : '');
      return;
    }
    mount(shell(), h('main', { id: 'main', tabindex: '-1' }, errorBox(exc, () => boot())));
    return;
  }
  await enter().catch((exc) => {
    mount(shell(), h('main', { id: 'main', tabindex: '-1' },
      h('p', { role: 'alert' }, t('boot.failed', { message: describe(exc) })),
      h('button', { type: 'button', onclick: () => boot() }, t('common.retry'))));
  });
}

/** The page's listeners, once: the hash, Escape for the menu, the language. */
function listen() {
  const skip = document.querySelector('.skip-link');
  if (skip) {
    skip.textContent = t('app.skip');
    skip.addEventListener('click', (event) => {
      event.preventDefault();
      const main = document.getElementById('main');
      if (main) main.focus();
    });
  }
  window.addEventListener('hashchange', () => route());
  window.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && document.body.classList.contains('nav-open')) {
      closeNav();
      const button = document.getElementById('nav-toggle');
      if (button) button.focus();
    }
  });
  onLangChange(() => {
    if (skip) skip.textContent = t('app.skip');
    if (state.signedIn) {
      renderShell();
      route();
    } else {
      const problem = document.getElementById('signin-error');
      renderSignIn(problem ? problem.textContent : '');
    }
  });
}

boot();
