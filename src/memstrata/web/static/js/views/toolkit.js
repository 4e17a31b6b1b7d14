// Shared pieces of the tool views (edit, forget, search, runs, audit): API calls in the
// current scope, modal dialogs, diffs, score bars, routes' parameters. Stored text is only
// ever set as textContent (through h()).
import { h } from "../dom.js";
import { register } from "../i18n.js";

register({
  en: {
    "tools.cancel": "Cancel",
    "tools.close": "Close",
    "tools.reload": "Reload",
    "tools.loading": "Loading…",
    "tools.error": "Error: {message}",
    "tools.reason": "Reason",
    "tools.reason.contradicted": "contradicted",
    "tools.reason.superseded": "superseded",
    "tools.reason.stale": "stale",
    "tools.reason.low-signal": "low signal",
    "tools.reason.user-request": "user request",
    "tools.noscope": "Pick a user first.",
    "tools.field": "Field",
    "tools.before": "Before",
    "tools.after": "After",
    "tools.nochange": "Nothing changed.",
    "tools.scope.user": "user {user}",
    "tools.scope.thread": "user {user}, thread {thread}",
    "tools.scope.agent": ", agent {agent}",
  },
  zh: {
    "tools.cancel": "取消",
    "tools.close": "关闭",
    "tools.reload": "重新加载",
    "tools.loading": "加载中…",
    "tools.error": "出错：{message}",
    "tools.reason": "原因",
    "tools.reason.contradicted": "与事实矛盾",
    "tools.reason.superseded": "已被取代",
    "tools.reason.stale": "已过时",
    "tools.reason.low-signal": "信息量低",
    "tools.reason.user-request": "用户要求",
    "tools.noscope": "请先选择用户。",
    "tools.field": "字段",
    "tools.before": "修改前",
    "tools.after": "修改后",
    "tools.nochange": "没有改动。",
    "tools.scope.user": "用户 {user}",
    "tools.scope.thread": "用户 {user}，会话线程 {thread}",
    "tools.scope.agent": "，智能体 {agent}",
  },
});

/** The reasons the API accepts for deleting a bullet or a fact. */
export const REASONS = ["user-request", "contradicted", "superseded", "stale", "low-signal"];

/** The scope of the page as query parameters (the parts that are set). */
export function scopeQuery(ctx) {
  const out = {};
  if (ctx.scope && ctx.scope.user) out.user = ctx.scope.user;
  if (ctx.scope && ctx.scope.thread) out.thread = ctx.scope.thread;
  if (ctx.scope && ctx.scope.agent) out.agent = ctx.scope.agent;
  return out;
}

/**
 * ``ctx`` narrowed to the thread and agent a route's query names (``?thread=t1&agent=a``): a
 * link to one thread's document, followed from the user's view, acts on that document.
 */
export function scopedTo(ctx, query) {
  const thread = query.get("thread");
  const agent = query.get("agent");
  if (!thread && !agent) return ctx;
  const scope = { user: ctx.scope.user, thread: thread || ctx.scope.thread || null, agent: agent || null };
  scope.query = () => ({ user: scope.user, thread: scope.thread, agent: scope.agent });
  return { ...ctx, scope };
}

/** The scope of the page as a request body's scope. */
export function scopeBody(ctx) {
  return scopeQuery(ctx);
}

/** The scope, said for a person. */
export function scopeLabel(ctx) {
  const s = scopeQuery(ctx);
  const label = s.thread ? ctx.t("tools.scope.thread", s) : ctx.t("tools.scope.user", s);
  return s.agent ? `${label}${ctx.t("tools.scope.agent", s)}` : label;
}

/** Call the API in the page's scope: ``query`` joins the scope's parameters. */
export function call(ctx, method, path, { query = {}, body, scoped = true } = {}) {
  const params = scoped ? { ...scopeQuery(ctx), ...query } : query;
  return ctx.api.request(method, path, { query: params, body });
}

/** The path of the route and its query, from the location's hash (``#/edit/doc/x?a=1``). */
export function route() {
  const raw = window.location.hash.replace(/^#\/?/, "");
  const [path, search = ""] = raw.split("?", 2);
  return {
    parts: path.split("/").filter(Boolean).map((p) => decodeURIComponent(p)),
    query: new URLSearchParams(search),
  };
}

/** A hash link to the route made of ``parts`` (each encoded) and ``query``. */
export function href(parts, query) {
  const path = parts.map((p) => encodeURIComponent(p)).join("/");
  const qs = query ? new URLSearchParams(query).toString() : "";
  return `#/${path}${qs ? `?${qs}` : ""}`;
}

/** The link that opens an episode's session with the turns ``ids`` highlighted. */
export function episodesHref(sessionId, ids) {
  return href(["episodes", sessionId], ids && ids.length ? { hl: ids.join(",") } : undefined);
}

/** A message of an API error, for a person. */
export function errorText(ctx, err) {
  const message = (err && (err.message || String(err))) || "?";
  return ctx.t("tools.error", { message });
}

/** A box saying what went wrong (role alert, so screen readers announce it). */
export function errorBox(ctx, err) {
  return h("p", { class: "tools-error", role: "alert" }, errorText(ctx, err));
}

/** Whether ``err`` is an API answer of ``status``. */
export function isStatus(err, status) {
  return Boolean(err) && err.status === status;
}

/** Replace the children of ``node`` with ``children``. */
export function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/** A select of ``values`` (labels from ``label(v)``), ``value`` chosen. */
export function select(values, value, label, attrs = {}) {
  const node = h(
    "select",
    attrs,
    ...values.map((v) => h("option", { value: v }, label ? label(v) : v)),
  );
  node.value = value;
  return node;
}

/** A labelled form field: the label wraps its control (so a click focuses it). */
export function field(labelText, control, attrs = {}) {
  return h("label", { class: "tools-field", ...attrs }, h("span", {}, labelText), control);
}

/** A select of delete reasons. */
export function reasonSelect(ctx, value = "user-request") {
  return select(REASONS, value, (r) => ctx.t(`tools.reason.${r}`), { name: "reason" });
}

/**
 * A modal dialog: ``build(close)`` makes its content; Escape or a Cancel closes it, and the
 * focus goes back to what had it. Resolves with what ``close`` was given (undefined on
 * Escape).
 */
export function dialog(ctx, title, build) {
  const opener = document.activeElement;
  return new Promise((resolve) => {
    const node = h("dialog", { class: "dialog tools-dialog", "aria-labelledby": "tools-dialog-title" });
    let done = false;
    const close = (value) => {
      if (done) return;
      done = true;
      if (node.open) node.close();
      node.remove();
      if (opener && typeof opener.focus === "function" && document.contains(opener)) {
        opener.focus();
      }
      resolve(value);
    };
    node.addEventListener("cancel", (event) => {
      event.preventDefault();
      close(undefined);
    });
    node.addEventListener("close", () => close(undefined));
    fill(node, h("h2", { id: "tools-dialog-title" }, title), build(close));
    document.body.append(node);
    node.showModal();
  });
}

/** Lines of a unified diff, each marked added, removed or context. */
export function diffView(diffText) {
  const lines = diffText ? diffText.replace(/\n$/, "").split("\n") : [];
  return h(
    "pre",
    { class: "tools-diff", tabindex: "0" },
    ...lines.map((line) => {
      let kind = "ctx";
      if (line.startsWith("+++") || line.startsWith("---")) kind = "file";
      else if (line.startsWith("@@")) kind = "hunk";
      else if (line.startsWith("+")) kind = "add";
      else if (line.startsWith("-")) kind = "del";
      return h("span", { class: `tools-diff-${kind}` }, `${line}\n`);
    }),
  );
}

/** A table of the fields that differ between ``before`` and ``after`` (objects). */
export function fieldDiff(ctx, before, after, fields, label = (f) => f, format = (_, v) => show(v)) {
  const changed = fields.filter((f) => show(before[f]) !== show(after[f]));
  if (!changed.length) return h("p", { class: "tools-muted" }, ctx.t("tools.nochange"));
  return h(
    "table",
    { class: "tools-fielddiff" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, ctx.t("tools.field")),
        h("th", { scope: "col" }, ctx.t("tools.before")),
        h("th", { scope: "col" }, ctx.t("tools.after")),
      ),
    ),
    h(
      "tbody",
      {},
      ...changed.map((f) =>
        h(
          "tr",
          {},
          h("th", { scope: "row" }, label(f)),
          h("td", { class: "tools-diff-del" }, format(f, before[f])),
          h("td", { class: "tools-diff-add" }, format(f, after[f])),
        ),
      ),
    ),
  );
}

/** A value as text in a diff. */
export function show(value) {
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value)) return value.join(", ");
  return String(value);
}

/** A small horizontal bar for ``value`` out of ``max`` (0 when max is 0), with its number.
 * Bars stacked in a list share one label width (a long label is cut); a bar standing alone
 * (``fit``) makes its label's column as wide as the label. */
export function bar(value, max, label, { fit = false } = {}) {
  const share = max > 0 ? Math.max(0, Math.min(1, Math.abs(value) / max)) : 0;
  const fillNode = h("span", { class: "tools-bar-fill" });
  fillNode.style.width = `${(share * 100).toFixed(1)}%`;
  return h(
    "span",
    { class: ["tools-bar-row", fit && "tools-bar-fit"] },
    h("span", { class: "tools-bar-label" }, label),
    h("span", { class: "tools-bar", "aria-hidden": "true" }, fillNode),
    h("span", { class: "tools-bar-value" }, formatNumber(value)),
  );
}

/** A score as text: four significant digits at most. */
export function formatNumber(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return String(value);
  return Number(value.toPrecision(4)).toString();
}
