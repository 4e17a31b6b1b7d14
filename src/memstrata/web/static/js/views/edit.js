// Editing: a curated document (its whole markdown, or bullet by bullet) or a fact. Every
// change is previewed (the server's diff for a document, a field diff for a fact) and applied
// with the version it was read at; when someone else changed the item meanwhile (409) the
// page shows theirs beside ours and overwrites nothing.
//   #/edit/doc/<key>   #/edit/fact/<id>
import { h } from "../dom.js";
import { register } from "../i18n.js";
import { citationMarkers, Footnotes } from "../parts.js";
import {
  call,
  diffView,
  dialog,
  errorBox,
  field,
  fieldDiff,
  fill,
  isStatus,
  reasonSelect,
  route,
  scopeLabel,
  scopedTo,
  select,
  show,
} from "./toolkit.js";

register({
  en: {
    "edit.title.doc": "Edit document “{key}”",
    "edit.title.fact": "Edit fact",
    "edit.version": "version {version}",
    "edit.mode.markdown": "Markdown",
    "edit.mode.bullets": "Bullets",
    "edit.preview": "Preview changes",
    "edit.apply": "Apply",
    "edit.applied": "Saved as version {version}.",
    "edit.deleted": "Deleted.",
    "edit.diff": "What will change",
    "edit.operations": "{n} operation(s)",
    "edit.conflict.title": "Someone else changed this meanwhile",
    "edit.conflict.text":
      "It is now at version {version}; you edited version {base}. Nothing was saved. Compare, then reload to edit the current version.",
    "edit.conflict.mine": "Your change (not saved)",
    "edit.conflict.theirs": "Current (version {version})",
    "edit.conflict.gone": "The item has been deleted meanwhile.",
    "edit.bullet.delete": "Delete bullet",
    "edit.bullet.undo": "Keep bullet",
    "edit.bullet.text": "Bullet text",
    "edit.bullet.marked": "to be deleted ({reason})",
    "edit.add": "Add a bullet",
    "edit.add.section": "Section",
    "edit.add.text": "Text",
    "edit.add.button": "Add to the change",
    "edit.add.pending": "New in “{section}”: {text}",
    "edit.empty": "This document has no bullets yet.",
    "edit.fact.text": "Text",
    "edit.fact.category": "Category",
    "edit.fact.topic": "Topic",
    "edit.fact.confidence": "Confidence (0–1)",
    "edit.fact.importance": "Importance (0–1)",
    "edit.fact.delete": "Delete fact…",
    "edit.fact.delete.title": "Delete this fact?",
    "edit.fact.delete.text": "The fact is deleted; its history keeps the reason.",
    "edit.fact.delete.confirm": "Delete",
    "edit.fact.superseded": "Superseded by {id}",
    "edit.forget": "Forget everywhere…",
    "edit.bad": "Open a document (#/edit/doc/<key>) or a fact (#/edit/fact/<id>).",
    "edit.invalid": "{field} must be a number from 0 to 1.",
    "edit.cat.profile": "profile",
    "edit.cat.preference": "preference",
    "edit.cat.personal": "personal",
    "edit.cat.expertise": "expertise",
    "edit.cat.decision": "decision",
    "edit.cat.plan": "plan",
    "edit.cat.event": "event",
    "edit.cat.relationship": "relationship",
    "edit.cat.health": "health",
    "edit.cat.other": "other",
  },
  zh: {
    "edit.title.doc": "编辑文档“{key}”",
    "edit.title.fact": "编辑事实",
    "edit.version": "版本 {version}",
    "edit.mode.markdown": "Markdown",
    "edit.mode.bullets": "逐条",
    "edit.preview": "预览改动",
    "edit.apply": "应用",
    "edit.applied": "已保存为版本 {version}。",
    "edit.deleted": "已删除。",
    "edit.diff": "将要改动的内容",
    "edit.operations": "{n} 项操作",
    "edit.conflict.title": "此内容已被他人修改",
    "edit.conflict.text":
      "当前版本为 {version}，你编辑的是版本 {base}。没有保存任何内容。请对比后重新加载，再编辑当前版本。",
    "edit.conflict.mine": "你的改动（未保存）",
    "edit.conflict.theirs": "当前内容（版本 {version}）",
    "edit.conflict.gone": "该条目已被删除。",
    "edit.bullet.delete": "删除此条",
    "edit.bullet.undo": "保留此条",
    "edit.bullet.text": "条目内容",
    "edit.bullet.marked": "将被删除（{reason}）",
    "edit.add": "添加条目",
    "edit.add.section": "章节",
    "edit.add.text": "内容",
    "edit.add.button": "加入改动",
    "edit.add.pending": "新增于“{section}”：{text}",
    "edit.empty": "此文档还没有条目。",
    "edit.fact.text": "内容",
    "edit.fact.category": "类别",
    "edit.fact.topic": "主题",
    "edit.fact.confidence": "置信度（0–1）",
    "edit.fact.importance": "重要性（0–1）",
    "edit.fact.delete": "删除事实…",
    "edit.fact.delete.title": "删除这条事实？",
    "edit.fact.delete.text": "事实将被删除，其历史记录保留删除原因。",
    "edit.fact.delete.confirm": "删除",
    "edit.fact.superseded": "已被 {id} 取代",
    "edit.forget": "彻底遗忘…",
    "edit.bad": "请打开一个文档（#/edit/doc/<key>）或一条事实（#/edit/fact/<id>）。",
    "edit.invalid": "{field} 必须是 0 到 1 之间的数字。",
    "edit.cat.profile": "个人档案",
    "edit.cat.preference": "偏好",
    "edit.cat.personal": "个人情况",
    "edit.cat.expertise": "专长",
    "edit.cat.decision": "决定",
    "edit.cat.plan": "计划",
    "edit.cat.event": "事件",
    "edit.cat.relationship": "人际关系",
    "edit.cat.health": "健康",
    "edit.cat.other": "其他",
  },
});

export const CATEGORIES = [
  "profile",
  "preference",
  "personal",
  "expertise",
  "decision",
  "plan",
  "event",
  "relationship",
  "health",
  "other",
];
const FACT_FIELDS = ["text", "category", "topic", "confidence", "importance"];

export function render(root, ctx) {
  const { parts, query } = route();
  const [, kind, id] = parts;
  if (kind === "doc" && id) return renderDoc(root, scopedTo(ctx, query), id);
  if (kind === "fact" && id) return renderFact(root, ctx, id);
  fill(root, h("p", {}, ctx.t("edit.bad")));
  return undefined;
}

// documents -------------------------------------------------------------------------------

/** Undo the escaping of the document format in one text (CommonMark-style backslashes). */
export function unescapeText(text) {
  return text.replace(/\\(u[0-9a-fA-F]{4}|[nrt]|[!-/:-@[-`{-~])/g, (_, c) => {
    if (c.length === 5) return String.fromCharCode(parseInt(c.slice(1), 16));
    return { n: "\n", r: "\r", t: "\t" }[c] ?? c;
  });
}

/** The sections and bullets of a document's markdown (as the server writes it), each bullet
 * with its citations (``surface:episode``, from the footnote definitions). */
export function parseBullets(markdown) {
  const sections = [];
  const definitions = new Map();
  let current = null;
  let footnotes = false;
  for (const line of markdown.split("\n")) {
    const definition = /^\[\^([^\]\s]+)\]:\s*(\S+)\s*$/.exec(line);
    if (definition) {
      definitions.set(definition[1], definition[2]);
      footnotes = true;
      continue;
    }
    if (line === "---") footnotes = true;
    if (footnotes) continue;
    const heading = /^##(?:[ \t]+(.*))?$/.exec(line);
    if (heading) {
      current = { heading: unescapeText(heading[1] || ""), bullets: [] };
      sections.push(current);
      continue;
    }
    const bullet = /^[-*+](?:[ \t]+(.*))?$/.exec(line);
    if (bullet && current) {
      let rest = bullet[1] || "";
      const idMatch = /<!--\s*(m_[0-9A-Za-z_]+)\s*-->\s*$/.exec(rest);
      const bulletId = idMatch ? idMatch[1] : "";
      if (idMatch) rest = rest.slice(0, idMatch.index);
      const marks = rest.match(/(?:\[\^[^\]\s]+\][ \t]*)*$/);
      const labels = marks ? [...marks[0].matchAll(/\[\^([^\]\s]+)\]/g)].map((m) => m[1]) : [];
      if (marks) rest = rest.slice(0, rest.length - marks[0].length);
      current.bullets.push({ id: bulletId, text: unescapeText(rest.replace(/[ \t]+$/, "")), labels });
    }
  }
  for (const section of sections) {
    for (const b of section.bullets) {
      b.citations = b.labels.map((label) => definitions.get(label)).filter(Boolean);
      b.cites = b.citations.length;
    }
  }
  return sections;
}

function renderDoc(root, ctx, key) {
  const state = { base: null, mode: "bullets", edits: new Map(), deletes: new Map(), adds: [] };
  const status = h("div", { class: "tools-status", "aria-live": "polite" });
  const body = h("div", { class: "tools-editor" });
  const preview = h("section", { class: "tools-preview", "aria-live": "polite" });
  const head = h("p", { class: "tools-muted" });
  fill(
    root,
    h(
      "section",
      { class: "tools-view tools-edit" },
      h("h1", {}, ctx.t("edit.title.doc", { key })),
      head,
      status,
      body,
      preview,
    ),
  );

  async function load() {
    fill(status, h("p", {}, ctx.t("tools.loading")));
    try {
      state.base = await call(ctx, "GET", `/v1/docs/${encodeURIComponent(key)}`);
    } catch (err) {
      fill(status, errorBox(ctx, err));
      return;
    }
    state.edits.clear();
    state.deletes.clear();
    state.adds = [];
    fill(status);
    fill(preview);
    fill(head, `${scopeLabel(ctx)} · ${ctx.t("edit.version", { version: state.base.version })}`);
    draw();
  }

  function change() {
    if (state.mode === "markdown") return { markdown: state.markdownInput.value };
    const operations = [];
    for (const [bulletId, text] of state.edits) {
      if (!state.deletes.has(bulletId)) operations.push({ op: "edit", id: bulletId, text });
    }
    for (const [bulletId, reason] of state.deletes) {
      operations.push({ op: "delete", id: bulletId, reason });
    }
    for (const add of state.adds) operations.push({ op: "add", section: add.section, text: add.text });
    return { operations };
  }

  function draw() {
    const tabs = h(
      "div",
      { class: "tools-tabs", role: "group" },
      ...["bullets", "markdown"].map((mode) =>
        h(
          "button",
          {
            type: "button",
            class: "tools-tab",
            "aria-pressed": String(state.mode === mode),
            onclick: () => {
              state.mode = mode;
              fill(preview);
              draw();
            },
          },
          ctx.t(`edit.mode.${mode}`),
        ),
      ),
    );
    const editor = state.mode === "markdown" ? markdownEditor() : bulletEditor();
    const previewButton = h(
      "button",
      { type: "button", class: "primary", onclick: () => runPreview() },
      ctx.t("edit.preview"),
    );
    fill(body, tabs, editor, h("div", { class: "tools-actions" }, previewButton));
  }

  function markdownEditor() {
    state.markdownInput = h("textarea", {
      class: "tools-markdown",
      rows: "16",
      spellcheck: "false",
      "aria-label": ctx.t("edit.mode.markdown"),
    });
    state.markdownInput.value = state.base.markdown;
    return state.markdownInput;
  }

  function bulletEditor() {
    const sections = parseBullets(state.base.markdown);
    const footnotes = new Footnotes();
    const list = h("div", { class: "tools-bullets" });
    const bullets = sections.flatMap((s) => s.bullets);
    if (!bullets.length) list.append(h("p", { class: "tools-muted" }, ctx.t("edit.empty")));
    for (const section of sections) {
      if (!section.bullets.length) continue;
      list.append(h("h2", {}, section.heading));
      for (const bullet of section.bullets) list.append(bulletRow(bullet, footnotes));
    }
    const addSection = h("input", {
      type: "text",
      list: "tools-sections",
      value: sections.length ? sections[0].heading : "",
    });
    addSection.value = sections.length ? sections[0].heading : "";
    const addText = h("input", { type: "text" });
    const pending = h(
      "ul",
      { class: "tools-pending" },
      ...state.adds.map((a) => h("li", {}, ctx.t("edit.add.pending", a))),
    );
    const add = h(
      "fieldset",
      { class: "tools-add" },
      h("legend", {}, ctx.t("edit.add")),
      h("datalist", { id: "tools-sections" }, ...sections.map((s) => h("option", { value: s.heading }))),
      field(ctx.t("edit.add.section"), addSection),
      field(ctx.t("edit.add.text"), addText),
      h(
        "button",
        {
          type: "button",
          onclick: () => {
            const text = addText.value.trim();
            const section = addSection.value.trim();
            if (!text || !section) return;
            state.adds.push({ section, text });
            addText.value = "";
            pending.append(h("li", {}, ctx.t("edit.add.pending", { section, text })));
          },
        },
        ctx.t("edit.add.button"),
      ),
      pending,
    );
    return h("div", {}, list, add);
  }

  function bulletRow(bullet, footnotes) {
    const input = h("textarea", {
      class: "tools-bullet-text",
      rows: "2",
      "aria-label": ctx.t("edit.bullet.text"),
      "data-bullet": bullet.id,
    });
    input.value = state.edits.get(bullet.id) ?? bullet.text;
    input.addEventListener("input", () => {
      if (input.value === bullet.text) state.edits.delete(bullet.id);
      else state.edits.set(bullet.id, input.value);
    });
    const note = citationMarkers(bullet.citations, footnotes);
    const row = h("div", { class: "tools-bullet", "data-bullet": bullet.id });
    const drawRow = () => {
      const reason = state.deletes.get(bullet.id);
      row.classList.toggle("tools-marked", Boolean(reason));
      input.disabled = Boolean(reason);
      const button = reason
        ? h(
            "button",
            {
              type: "button",
              onclick: () => {
                state.deletes.delete(bullet.id);
                drawRow();
              },
            },
            ctx.t("edit.bullet.undo"),
          )
        : h(
            "button",
            {
              type: "button",
              class: "danger",
              onclick: async () => {
                const chosen = await askReason(ctx, ctx.t("edit.bullet.delete"), bullet.text);
                if (chosen) {
                  state.deletes.set(bullet.id, chosen);
                  drawRow();
                }
              },
            },
            ctx.t("edit.bullet.delete"),
          );
      fill(
        row,
        input,
        h(
          "div",
          { class: "tools-bullet-meta" },
          note,
          reason
            ? h(
                "span",
                { class: "tools-badge danger" },
                ctx.t("edit.bullet.marked", { reason: ctx.t(`tools.reason.${reason}`) }),
              )
            : null,
          button,
        ),
      );
    };
    drawRow();
    return row;
  }

  async function runPreview() {
    fill(status);
    const body = { ...change(), expected_version: state.base.version };
    fill(preview, h("p", {}, ctx.t("tools.loading")));
    let result;
    try {
      result = await call(ctx, "POST", `/v1/docs/${encodeURIComponent(key)}/diff`, { body });
    } catch (err) {
      if (isStatus(err, 409)) return showConflict(body);
      fill(preview, errorBox(ctx, err));
      return;
    }
    if (!result.operations.length) {
      fill(preview, h("p", { class: "tools-muted" }, ctx.t("tools.nochange")));
      return;
    }
    const apply = h(
      "button",
      { type: "button", class: "primary", onclick: () => runApply(body, apply) },
      ctx.t("edit.apply"),
    );
    fill(
      preview,
      h("h2", {}, ctx.t("edit.diff")),
      h("p", { class: "tools-muted" }, ctx.t("edit.operations", { n: result.operations.length })),
      diffView(result.diff),
      h("div", { class: "tools-actions" }, apply),
    );
    apply.focus();
  }

  function runApply(body, button) {
    const send = () => call(ctx, "POST", `/v1/docs/${encodeURIComponent(key)}/apply`, { body });
    return applyEdit(ctx, { button, send, conflict: () => showConflict(body), load, preview, status });
  }

  async function showConflict(body) {
    const current = await currentOf(ctx, `/v1/docs/${encodeURIComponent(key)}`, preview);
    if (current === undefined) return;
    let mine = body.markdown;
    if (mine === undefined) {
      try {
        // what our operations would make of the version we read (a preview, nothing stored)
        const ours = await call(ctx, "POST", `/v1/docs/${encodeURIComponent(key)}/diff`, {
          body: { operations: body.operations },
        });
        mine = ours.after;
      } catch {
        mine = body.operations.map((op) => JSON.stringify(op)).join("\n");
      }
    }
    const comparison = h(
      "div",
      { class: "tools-sidebyside" },
      h(
        "figure",
        { class: "tools-mine" },
        h("figcaption", {}, ctx.t("edit.conflict.mine")),
        h("pre", { tabindex: "0" }, mine),
      ),
      current
        ? h(
            "figure",
            { class: "tools-theirs" },
            h("figcaption", {}, ctx.t("edit.conflict.theirs", { version: current.version })),
            h("pre", { tabindex: "0" }, current.markdown),
          )
        : null,
    );
    fill(preview, conflictPanel(ctx, current, state.base.version, comparison, load));
  }

  load();
  return undefined;
}

/**
 * Send an edit from its Apply button (disabled while it runs). A 409 shows the conflict, any
 * other error its box in `preview`; success says the new version in a toast and in `status`
 * after reloading.
 */
async function applyEdit(ctx, { button, send, conflict, load, preview, status }) {
  button.disabled = true;
  let result;
  try {
    result = await send();
  } catch (err) {
    button.disabled = false;
    if (isStatus(err, 409)) return conflict();
    fill(preview, errorBox(ctx, err));
    return;
  }
  const applied = ctx.t("edit.applied", { version: result.version });
  ctx.toast(applied);
  await load();
  fill(status, h("p", { class: "tools-ok", role: "status" }, applied));
}

/**
 * The current version of what an edit conflicted with: null when it was deleted meanwhile,
 * undefined (with the error shown in `preview`) when it could not be read.
 */
async function currentOf(ctx, path, preview) {
  try {
    return await call(ctx, "GET", path);
  } catch (err) {
    if (isStatus(err, 404)) return null;
    fill(preview, errorBox(ctx, err));
    return undefined;
  }
}

/** The conflict panel: what changed meanwhile, the two versions compared, and Reload. */
function conflictPanel(ctx, current, baseVersion, comparison, load) {
  return h(
    "div",
    { class: "tools-conflict", role: "alert" },
    h("h2", {}, ctx.t("edit.conflict.title")),
    current
      ? h("p", {}, ctx.t("edit.conflict.text", { version: current.version, base: baseVersion }))
      : h("p", {}, ctx.t("edit.conflict.gone")),
    comparison,
    h(
      "div",
      { class: "tools-actions" },
      h("button", { type: "button", class: "primary", onclick: () => load() }, ctx.t("tools.reload")),
    ),
  );
}

/** Ask for a delete reason in a dialog; the reason, or undefined when cancelled. */
export function askReason(ctx, title, text, confirmLabel) {
  return dialog(ctx, title, (close) => {
    const reason = reasonSelect(ctx);
    return h(
      "form",
      {
        method: "dialog",
        onsubmit: (event) => {
          event.preventDefault();
          close(reason.value);
        },
      },
      h("blockquote", {}, text),
      field(ctx.t("tools.reason"), reason),
      h(
        "div",
        { class: "tools-actions" },
        h("button", { type: "button", onclick: () => close(undefined) }, ctx.t("tools.cancel")),
        h("button", { type: "submit", class: "danger" }, confirmLabel || ctx.t("edit.bullet.delete")),
      ),
    );
  });
}

// facts -----------------------------------------------------------------------------------

function renderFact(root, ctx, id) {
  /** A field's value as shown: a category by its name in the interface's language. */
  const value = (f, v) => (f === "category" && v ? ctx.t(`edit.cat.${v}`) : show(v));
  const state = { base: null };
  const status = h("div", { class: "tools-status", "aria-live": "polite" });
  const form = h("div", { class: "tools-editor" });
  const preview = h("section", { class: "tools-preview", "aria-live": "polite" });
  const head = h("p", { class: "tools-muted" });
  fill(
    root,
    h(
      "section",
      { class: "tools-view tools-edit" },
      h("h1", {}, ctx.t("edit.title.fact")),
      head,
      status,
      form,
      preview,
    ),
  );
  const inputs = {};

  async function load() {
    fill(status, h("p", {}, ctx.t("tools.loading")));
    try {
      state.base = await call(ctx, "GET", `/v1/items/${encodeURIComponent(id)}`);
    } catch (err) {
      fill(status, errorBox(ctx, err));
      return;
    }
    fill(status);
    fill(preview);
    const fact = state.base;
    fill(
      head,
      `${fact.id} · ${scopeLabel(ctx)} · ${ctx.t("edit.version", { version: fact.version })}`,
      fact.superseded_by ? ` · ${ctx.t("edit.fact.superseded", { id: fact.superseded_by })}` : "",
    );
    inputs.text = h("textarea", { rows: "3", name: "text" });
    inputs.category = select(CATEGORIES, fact.category, (c) => ctx.t(`edit.cat.${c}`), { name: "category" });
    inputs.topic = h("input", { type: "text", name: "topic" });
    inputs.confidence = h("input", { type: "number", min: "0", max: "1", step: "0.05", name: "confidence" });
    inputs.importance = h("input", { type: "number", min: "0", max: "1", step: "0.05", name: "importance" });
    inputs.text.value = fact.text;
    inputs.topic.value = fact.topic || "";
    inputs.confidence.value = String(fact.confidence);
    inputs.importance.value = String(fact.importance);
    fill(
      form,
      field(ctx.t("edit.fact.text"), inputs.text),
      h(
        "div",
        { class: "tools-row" },
        field(ctx.t("edit.fact.category"), inputs.category),
        field(ctx.t("edit.fact.topic"), inputs.topic),
        field(ctx.t("edit.fact.confidence"), inputs.confidence),
        field(ctx.t("edit.fact.importance"), inputs.importance),
      ),
      h(
        "div",
        { class: "tools-actions" },
        h("button", { type: "button", class: "primary", onclick: () => runPreview() }, ctx.t("edit.preview")),
        h("button", { type: "button", class: "danger", onclick: () => runDelete() }, ctx.t("edit.fact.delete")),
        h(
          "a",
          { class: "button-link danger", href: `#/forget/item/${encodeURIComponent(id)}` },
          ctx.t("edit.forget"),
        ),
      ),
    );
  }

  function edited() {
    const out = {
      text: inputs.text.value,
      category: inputs.category.value,
      topic: inputs.topic.value.trim() || null,
      confidence: Number(inputs.confidence.value),
      importance: Number(inputs.importance.value),
    };
    for (const name of ["confidence", "importance"]) {
      const v = out[name];
      if (inputs[name].value.trim() === "" || !Number.isFinite(v) || v < 0 || v > 1) {
        throw new Error(ctx.t("edit.invalid", { field: ctx.t(`edit.fact.${name}`) }));
      }
    }
    return out;
  }

  function changes(after) {
    const out = {};
    for (const f of FACT_FIELDS) if (show(after[f]) !== show(state.base[f])) out[f] = after[f];
    return out;
  }

  function runPreview() {
    fill(status);
    let after;
    try {
      after = edited();
    } catch (err) {
      fill(preview, errorBox(ctx, err));
      return;
    }
    const diff = changes(after);
    const apply = h(
      "button",
      { type: "button", class: "primary", onclick: () => runApply(diff, after, apply) },
      ctx.t("edit.apply"),
    );
    fill(
      preview,
      h("h2", {}, ctx.t("edit.diff")),
      fieldDiff(ctx, state.base, after, FACT_FIELDS, (f) => ctx.t(`edit.fact.${f}`), value),
      Object.keys(diff).length ? h("div", { class: "tools-actions" }, apply) : null,
    );
    if (Object.keys(diff).length) apply.focus();
  }

  function runApply(diff, after, button) {
    const send = () =>
      call(ctx, "PATCH", `/v1/items/${encodeURIComponent(id)}`, {
        body: { changes: diff, expected_version: state.base.version },
      });
    return applyEdit(ctx, { button, send, conflict: () => showConflict(after), load, preview, status });
  }

  async function showConflict(after) {
    const current = await currentOf(ctx, `/v1/items/${encodeURIComponent(id)}`, preview);
    if (current === undefined) return;
    const comparison = current
      ? h(
          "table",
          { class: "tools-fielddiff" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", { scope: "col" }, ctx.t("tools.field")),
              h("th", { scope: "col" }, ctx.t("edit.conflict.mine")),
              h("th", { scope: "col" }, ctx.t("edit.conflict.theirs", { version: current.version })),
            ),
          ),
          h(
            "tbody",
            {},
            ...FACT_FIELDS.map((f) =>
              h(
                "tr",
                { class: show(after[f]) === show(current[f]) ? "" : "tools-differs" },
                h("th", { scope: "row" }, ctx.t(`edit.fact.${f}`)),
                h("td", {}, value(f, after[f])),
                h("td", {}, value(f, current[f])),
              ),
            ),
          ),
        )
      : null;
    fill(preview, conflictPanel(ctx, current, state.base.version, comparison, load));
  }

  async function runDelete() {
    const reason = await askReason(
      ctx,
      ctx.t("edit.fact.delete.title"),
      state.base.text,
      ctx.t("edit.fact.delete.confirm"),
    );
    if (!reason) return;
    try {
      await call(ctx, "DELETE", `/v1/items/${encodeURIComponent(id)}`, { query: { reason } });
    } catch (err) {
      fill(preview, errorBox(ctx, err));
      return;
    }
    ctx.toast(ctx.t("edit.deleted"));
    fill(form);
    fill(preview);
    fill(status, h("p", { class: "tools-ok", role: "status" }, ctx.t("edit.deleted")));
  }

  load();
  return undefined;
}
