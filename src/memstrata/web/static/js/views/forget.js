// Forgetting: an item with everything derived from it, or a whole scope (the thread, or the
// user). The confirmation lists what the cascade will remove, from the server's dry run; a
// scope must be confirmed by typing its name. Then the result, as counts.
//   #/forget/item/<id>   #/forget/scope
import { h } from "../dom.js";
import { register } from "../i18n.js";
import { call, dialog, errorBox, field, fill, route, scopeLabel, scopeQuery } from "./toolkit.js";

register({
  en: {
    "forget.title.item": "Forget an item",
    "forget.title.scope": "Forget a whole scope",
    "forget.item.text":
      "Forgetting removes {id} and everything derived from it (facts and bullets citing it), in every copy and every version. It cannot be undone.",
    "forget.scope.text":
      "Forgetting removes everything {scope} holds: turns, facts, documents, their history and index entries. It cannot be undone.",
    "forget.scope.user": "The whole user (every thread)",
    "forget.scope.thread": "Only this thread",
    "forget.start": "Forget…",
    "forget.confirm.title": "Forget {n} item(s)?",
    "forget.confirm.lead": "These will be removed:",
    "forget.confirm.more": "… and {n} more",
    "forget.confirm.counts": "By kind",
    "forget.confirm.type": "Type “{name}” to confirm",
    "forget.confirm.button": "Forget for good",
    "forget.nothing": "There is nothing to forget.",
    "forget.done": "Forgotten: {n} item(s).",
    "forget.cascaded": "derived",
    "forget.target": "the item itself",
    "forget.nodryrun": "The server could not list what would be removed, so nothing was forgotten.",
    "forget.noitem": "Open an item to forget (#/forget/item/<id>).",
    "forget.list.episodes": "Turns ({n})",
    "forget.list.facts": "Facts ({n})",
    "forget.list.documents": "Documents ({n})",
    "forget.list.bullets": "Bullets of curated documents ({n})",
    "forget.list.profile_slots": "Profile entries ({n})",
    "forget.list.ids": "Items ({n})",
    "forget.how.deleted": "removed",
    "forget.how.cascaded": "removed (derived)",
    "forget.how.rewritten": "loses this citation, stays",
    "forget.how.document-deleted": "removed with its document",
    "forget.index": "{index} search index entries and {vectors} stored vectors go too.",
    "forget.count.episodes": "turns",
    "forget.count.facts": "facts",
    "forget.count.documents": "documents",
    "forget.count.bullets": "bullets",
    "forget.count.history": "history entries",
    "forget.count.trace_lines": "raw trace lines",
    "forget.count.profile_slots": "profile entries",
  },
  zh: {
    "forget.title.item": "遗忘条目",
    "forget.title.scope": "遗忘整个范围",
    "forget.item.text":
      "遗忘将删除 {id} 及由其派生的一切（引用它的事实和条目），包括所有副本和所有版本。此操作无法撤销。",
    "forget.scope.text":
      "遗忘将删除{scope}的全部内容：对话、事实、文档及其历史和索引。此操作无法撤销。",
    "forget.scope.user": "整个用户（所有会话线程）",
    "forget.scope.thread": "仅此会话线程",
    "forget.start": "遗忘…",
    "forget.confirm.title": "遗忘 {n} 个条目？",
    "forget.confirm.lead": "以下内容将被删除：",
    "forget.confirm.more": "……以及另外 {n} 个",
    "forget.confirm.counts": "按类型",
    "forget.confirm.type": "输入“{name}”以确认",
    "forget.confirm.button": "永久遗忘",
    "forget.nothing": "没有可遗忘的内容。",
    "forget.done": "已遗忘 {n} 个条目。",
    "forget.cascaded": "派生",
    "forget.target": "条目本身",
    "forget.nodryrun": "服务器无法列出将被删除的内容，因此没有遗忘任何内容。",
    "forget.noitem": "请打开要遗忘的条目（#/forget/item/<id>）。",
    "forget.list.episodes": "对话轮（{n}）",
    "forget.list.facts": "事实（{n}）",
    "forget.list.documents": "文档（{n}）",
    "forget.list.bullets": "整理文档中的条目（{n}）",
    "forget.list.profile_slots": "档案项（{n}）",
    "forget.list.ids": "条目（{n}）",
    "forget.how.deleted": "删除",
    "forget.how.cascaded": "删除（派生）",
    "forget.how.rewritten": "失去此引用，保留",
    "forget.how.document-deleted": "随文档一并删除",
    "forget.index": "另有 {index} 条检索索引和 {vectors} 个已存向量一并删除。",
    "forget.count.episodes": "对话轮",
    "forget.count.facts": "事实",
    "forget.count.documents": "文档",
    "forget.count.bullets": "条目",
    "forget.count.history": "历史记录",
    "forget.count.trace_lines": "原始记录行",
    "forget.count.profile_slots": "档案项",
  },
});

/** How many ids the confirmation lists by name (the counts cover the rest). */
const LISTED = 200;

export function render(root, ctx) {
  const { parts } = route();
  if (parts[1] === "item" && parts[2]) return renderItem(root, ctx, parts[2]);
  if (parts[1] === "scope") return renderScope(root, ctx);
  fill(root, h("p", {}, ctx.t("forget.noitem")));
  return undefined;
}

function renderItem(root, ctx, id) {
  const out = h("div", { class: "tools-status", "aria-live": "polite" });
  const start = h(
    "button",
    {
      type: "button",
      class: "danger",
      onclick: () =>
        forget(ctx, out, {
          dryRun: () =>
            call(ctx, "POST", `/v1/items/${encodeURIComponent(id)}/forget`, {
              query: { dry_run: "true" },
            }),
          run: () => call(ctx, "POST", `/v1/items/${encodeURIComponent(id)}/forget`),
          typed: null,
        }),
    },
    ctx.t("forget.start"),
  );
  fill(
    root,
    h(
      "section",
      { class: "tools-view tools-forget" },
      h("h1", {}, ctx.t("forget.title.item")),
      h("p", {}, ctx.t("forget.item.text", { id })),
      h("p", { class: "tools-muted" }, scopeLabel(ctx)),
      h("div", { class: "tools-actions" }, start),
      out,
    ),
  );
  return undefined;
}

function renderScope(root, ctx) {
  const scope = scopeQuery(ctx);
  const out = h("div", { class: "tools-status", "aria-live": "polite" });
  if (!scope.user) {
    fill(root, h("p", {}, ctx.t("tools.noscope")));
    return undefined;
  }
  const choices = [];
  if (scope.thread) choices.push({ key: "thread", query: { user: scope.user, thread: scope.thread }, name: scope.thread });
  choices.push({ key: "user", query: { user: scope.user }, name: scope.user });
  const radios = choices.map((c, i) => {
    const input = h("input", { type: "radio", name: "forget-scope", value: c.key });
    input.checked = i === 0;
    return { c, input };
  });
  const chosen = () => radios.find((r) => r.input.checked).c;
  const start = h(
    "button",
    {
      type: "button",
      class: "danger",
      onclick: () => {
        const c = chosen();
        forget(ctx, out, {
          dryRun: () =>
            call(ctx, "DELETE", "/v1/scopes", { query: { ...c.query, dry_run: "true" }, scoped: false }),
          run: () => call(ctx, "DELETE", "/v1/scopes", { query: c.query, scoped: false }),
          typed: c.name,
        });
      },
    },
    ctx.t("forget.start"),
  );
  fill(
    root,
    h(
      "section",
      { class: "tools-view tools-forget" },
      h("h1", {}, ctx.t("forget.title.scope")),
      h("p", {}, ctx.t("forget.scope.text", { scope: scopeLabel(ctx) })),
      h(
        "fieldset",
        { class: "tools-choices" },
        ...radios.map(({ c, input }) =>
          h("label", {}, input, " ", ctx.t(`forget.scope.${c.key}`), " ", h("code", {}, c.name)),
        ),
      ),
      h("div", { class: "tools-actions" }, start),
      out,
    ),
  );
  return undefined;
}

/** Ids of a deletion report, each with whether it was the target or cascaded. */
export function listed(report) {
  return [
    ...(report.deleted || []).map((id) => ({ id, cascaded: false })),
    ...(report.cascaded || []).map((id) => ({ id, cascaded: true })),
  ];
}

/** The name of a kind of record a deletion counts (its own name when unknown). */
function countName(ctx, kind) {
  const key = `forget.count.${kind}`;
  const text = ctx.t(key);
  return text === key ? kind : text;
}

/** One list of the dry run's records: a heading and an item per record. */
function section(ctx, name, rows, line) {
  if (!rows || !rows.length) return null;
  return h(
    "section",
    { class: "tools-cascade-part", "data-part": name },
    h("h3", {}, ctx.t(`forget.list.${name}`, { n: rows.length })),
    h("ul", { class: "tools-cascade" }, ...rows.slice(0, LISTED).map((row) => line(row))),
    rows.length > LISTED ? h("p", {}, ctx.t("forget.confirm.more", { n: rows.length - LISTED })) : null,
  );
}

function how(ctx, value) {
  return value ? h("span", { class: `tools-badge how-${value}` }, ctx.t(`forget.how.${value}`)) : null;
}

/** What the cascade touches, by kind, with the records' texts (the dry run's lists), or the
 * ids alone when the answer has no lists. */
export function cascadeLists(ctx, plan) {
  const parts = [
    section(ctx, "episodes", plan.episodes, (e) =>
      h(
        "li",
        { "data-id": e.id },
        h("q", {}, e.text),
        " ",
        h("span", { class: "tools-muted" }, [...new Set([e.speaker, e.session_id, (e.time || "").slice(0, 10)].filter(Boolean))].join(" · ")),
      ),
    ),
    section(ctx, "facts", plan.facts, (f) => h("li", { "data-id": f.id }, h("span", {}, f.text), " ", how(ctx, f.how))),
    section(ctx, "documents", plan.documents, (d) =>
      h("li", { "data-id": d.id }, h("code", {}, d.key), " ", h("span", { class: "tools-muted" }, d.kind)),
    ),
    section(ctx, "bullets", plan.bullets, (b) =>
      h(
        "li",
        { "data-id": b.bullet_id },
        h("span", {}, b.text ?? b.bullet_id),
        " ",
        h("span", { class: "tools-muted" }, b.document),
        " ",
        how(ctx, b.how),
      ),
    ),
    section(ctx, "profile_slots", plan.profile_slots, (p) =>
      h("li", {}, h("span", {}, `${p.section}.${p.slot}: ${p.value}`), " ", how(ctx, p.how)),
    ),
  ].filter(Boolean);
  if (!parts.length) {
    const ids = listed(plan);
    parts.push(
      section(ctx, "ids", ids, (entry) =>
        h(
          "li",
          { "data-id": entry.id },
          h("code", {}, entry.id),
          " ",
          h("span", { class: "tools-muted" }, entry.cascaded ? ctx.t("forget.cascaded") : ctx.t("forget.target")),
        ),
      ),
    );
  }
  if (plan.index_entries || plan.embedded_texts) {
    parts.push(
      h("p", { class: "tools-muted" }, ctx.t("forget.index", { index: plan.index_entries || 0, vectors: plan.embedded_texts || 0 })),
    );
  }
  return parts;
}

/** The sum of a deletion report's counts. */
function sumCounts(report) {
  return Object.values(report.counts || {}).reduce((a, b) => a + b, 0);
}

async function forget(ctx, out, { dryRun, run, typed }) {
  let plan;
  try {
    plan = await dryRun();
  } catch (err) {
    fill(out, errorBox(ctx, err), h("p", {}, ctx.t("forget.nodryrun")));
    return;
  }
  const ids = listed(plan);
  const total = ids.length || sumCounts(plan);
  if (!total) {
    fill(out, h("p", { role: "status" }, ctx.t("forget.nothing")));
    return;
  }
  const confirmed = await dialog(ctx, ctx.t("forget.confirm.title", { n: total }), (close) => {
    const confirmInput = typed ? h("input", { type: "text", autocomplete: "off", spellcheck: "false" }) : null;
    const go = h("button", { type: "submit", class: "danger" }, ctx.t("forget.confirm.button"));
    if (confirmInput) {
      go.disabled = true;
      confirmInput.addEventListener("input", () => {
        go.disabled = confirmInput.value !== typed;
      });
    }
    const counts = Object.entries(plan.counts || {});
    return h(
      "form",
      {
        class: "tools-forget-confirm",
        onsubmit: (event) => {
          event.preventDefault();
          if (!confirmInput || confirmInput.value === typed) close(true);
        },
      },
      h("p", {}, ctx.t("forget.confirm.lead")),
      counts.length
        ? h(
            "dl",
            { class: "tools-counts", "aria-label": ctx.t("forget.confirm.counts") },
            ...counts.flatMap(([kind, n]) => [h("dt", {}, countName(ctx, kind)), h("dd", {}, String(n))]),
          )
        : null,
      cascadeLists(ctx, plan),
      (plan.notes || []).map((note) => h("p", { class: "tools-muted" }, note)),
      confirmInput ? field(ctx.t("forget.confirm.type", { name: typed }), confirmInput) : null,
      h(
        "div",
        { class: "tools-actions" },
        h("button", { type: "button", onclick: () => close(false) }, ctx.t("tools.cancel")),
        go,
      ),
    );
  });
  if (!confirmed) return;
  let result;
  try {
    result = await run();
  } catch (err) {
    fill(out, errorBox(ctx, err));
    return;
  }
  const n = listed(result).length || sumCounts(result);
  ctx.toast(ctx.t("forget.done", { n }));
  fill(
    out,
    h(
      "div",
      { class: "tools-ok", role: "status" },
      h("p", {}, ctx.t("forget.done", { n })),
      h(
        "dl",
        { class: "tools-counts" },
        ...Object.entries(result.counts || {}).flatMap(([kind, count]) => [
          h("dt", {}, countName(ctx, kind)),
          h("dd", {}, String(count)),
        ]),
      ),
    ),
  );
}
