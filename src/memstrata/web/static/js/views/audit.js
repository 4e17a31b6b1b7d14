// The audit: bullets of the curated documents whose cited evidence is gone or barely
// supports them, each with the bullet, its problem and the turns it cites; resolve each by
// keeping it, editing it, or deleting it with a reason.
//   #/audit
import { h } from "../dom.js";
import { register } from "../i18n.js";
import { askReason } from "./edit.js";
import {
  call,
  episodesHref,
  errorBox,
  field,
  fill,
  formatNumber,
  href,
} from "./toolkit.js";

register({
  en: {
    "audit.title": "Audit",
    "audit.lead": "Bullets whose cited turns are gone or barely support what they say.",
    "audit.none": "No findings: every bullet is supported by the turns it cites.",
    "audit.refresh": "Check again",
    "audit.problem.missing-evidence": "its cited turns are gone",
    "audit.problem.unsupported": "its cited turns barely support it",
    "audit.support": "support {support}",
    "audit.document": "in “{document}”",
    "audit.evidence": "Cited evidence",
    "audit.noevidence": "No cited turn remains.",
    "audit.keep": "Keep",
    "audit.edit": "Edit",
    "audit.delete": "Delete…",
    "audit.save": "Save edit",
    "audit.edit.label": "New text",
    "audit.resolved.keep": "Kept.",
    "audit.resolved.edit": "Edited.",
    "audit.resolved.delete": "Deleted.",
    "audit.open": "Open the session",
    "audit.doc": "Open the document",
  },
  zh: {
    "audit.title": "审核",
    "audit.lead": "引用的对话已不存在、或几乎不支持其内容的条目。",
    "audit.none": "没有问题：每个条目都有其引用的对话支持。",
    "audit.refresh": "重新检查",
    "audit.problem.missing-evidence": "引用的对话已不存在",
    "audit.problem.unsupported": "引用的对话几乎不支持该内容",
    "audit.support": "支持度 {support}",
    "audit.document": "位于“{document}”",
    "audit.evidence": "引用的证据",
    "audit.noevidence": "引用的对话都已不存在。",
    "audit.keep": "保留",
    "audit.edit": "编辑",
    "audit.delete": "删除…",
    "audit.save": "保存修改",
    "audit.edit.label": "新内容",
    "audit.resolved.keep": "已保留。",
    "audit.resolved.edit": "已修改。",
    "audit.resolved.delete": "已删除。",
    "audit.open": "打开会话",
    "audit.doc": "打开文档",
  },
});

/** A finding with the names this view uses, whichever the server gives (``key`` or
 * ``document``, ``bullet_id`` or ``bullet``). */
export function normalize(f) {
  return {
    ...f,
    document: f.document ?? f.key,
    bullet: f.bullet ?? f.bullet_id,
    evidence: f.evidence ?? f.citations ?? [],
  };
}

/** The cited turns of a finding: given whole, or as citations (``surface:ep_...``) read
 * from the API; a turn that is gone is said so. */
async function showEvidence(ctx, f, node) {
  const cited = f.evidence.map((c) => {
    if (typeof c === "string") return { id: c.slice(c.indexOf(":") + 1) };
    if (c && c.episode && typeof c.episode === "object") return c.episode;
    return { ...c, id: c.id ?? c.episode_id };
  });
  const episodes = await Promise.all(
    cited.map((c) =>
      c.text !== undefined || c.id === undefined
        ? c
        : call(ctx, "GET", `/v1/items/${encodeURIComponent(c.id)}`).catch(() => ({ id: c.id, gone: true })),
    ),
  );
  const present = episodes.filter((ep) => ep && !ep.gone && ep.text !== undefined && ep.text !== null);
  if (!present.length) {
    fill(node, h("p", { class: "tools-muted" }, ctx.t("audit.noevidence")));
    return;
  }
  fill(
    node,
    h(
      "ul",
      { class: "tools-evidence" },
      ...present.map((ep) =>
        h(
          "li",
          { "data-id": ep.id },
          h("q", {}, ep.text),
          " ",
          h(
            "span",
            { class: "tools-muted" },
            [ep.speaker, ep.time ? ep.time.slice(0, 10) : null].filter(Boolean).join(" · "),
          ),
          " ",
          ep.session_id ? h("a", { href: episodesHref(ep.session_id, [ep.id]) }, ctx.t("audit.open")) : null,
        ),
      ),
    ),
  );
}

export function render(root, ctx) {
  const list = h("div", { class: "tools-findings", "aria-live": "polite" });
  // each document's version as last seen: a resolution moves it on for the other flags
  const versions = new Map();

  async function load() {
    fill(list, h("p", {}, ctx.t("tools.loading")));
    let page;
    try {
      page = await call(ctx, "GET", "/v1/audit");
    } catch (err) {
      fill(list, errorBox(ctx, err));
      return;
    }
    versions.clear();
    const findings = page.items || page.findings || [];
    if (!findings.length) {
      fill(list, h("p", { class: "tools-ok", role: "status" }, ctx.t("audit.none")));
      return;
    }
    fill(list, h("ul", { class: "tools-findinglist" }, ...findings.map((f) => finding(normalize(f)))));
  }

  function finding(f) {
    const item = h("li", { class: "tools-finding", "data-bullet": f.bullet });
    const out = h("div", { class: "tools-status", "aria-live": "polite" });
    const evidenceBox = h("div", { class: "tools-evidence-box" });
    showEvidence(ctx, f, evidenceBox);
    async function resolve(body, done) {
      const request = { key: f.document, bullet_id: f.bullet, ...body };
      const version = versions.get(f.document) ?? f.version;
      if (version !== undefined && version !== null) request.expected_version = version;
      let result;
      try {
        result = await call(ctx, "POST", "/v1/audit/resolve", { body: request });
      } catch (err) {
        fill(
          out,
          errorBox(ctx, err),
          err && err.status === 409
            ? h("button", { type: "button", onclick: () => load() }, ctx.t("audit.refresh"))
            : null,
        );
        return;
      }
      if (result && typeof result.version === "number") versions.set(f.document, result.version);
      const message = ctx.t(`audit.resolved.${body.action}`);
      ctx.toast(message);
      item.classList.add("tools-resolved");
      fill(actions);
      fill(out, h("p", { class: "tools-ok", role: "status" }, message));
      if (done) done();
    }
    const editBox = h("div", { class: "tools-audit-edit" });
    const actions = h(
      "div",
      { class: "tools-actions" },
      h("button", { type: "button", onclick: () => resolve({ action: "keep" }) }, ctx.t("audit.keep")),
      h(
        "button",
        {
          type: "button",
          onclick: () => {
            const input = h("textarea", { rows: "2" });
            input.value = f.text || "";
            fill(
              editBox,
              field(ctx.t("audit.edit.label"), input),
              h(
                "button",
                {
                  type: "button",
                  class: "primary",
                  onclick: () => resolve({ action: "edit", text: input.value }, () => fill(editBox)),
                },
                ctx.t("audit.save"),
              ),
            );
            input.focus();
          },
        },
        ctx.t("audit.edit"),
      ),
      h(
        "button",
        {
          type: "button",
          class: "danger",
          onclick: async () => {
            const reason = await askReason(ctx, ctx.t("audit.delete"), f.text || f.bullet, ctx.t("audit.delete"));
            if (reason) resolve({ action: "delete", reason });
          },
        },
        ctx.t("audit.delete"),
      ),
    );
    fill(
      item,
      h("blockquote", { class: "tools-bullet-quote" }, f.text || f.bullet),
      h(
        "p",
        { class: "tools-muted" },
        h("strong", { class: "tools-badge danger" }, ctx.t(`audit.problem.${f.problem}`)),
        " ",
        ctx.t("audit.support", { support: formatNumber(f.support ?? 0) }),
        " · ",
        h("a", { href: href(["edit", "doc", f.document]) }, ctx.t("audit.document", { document: f.document })),
      ),
      h("details", { open: "open" }, h("summary", {}, ctx.t("audit.evidence")), evidenceBox),
      actions,
      editBox,
      out,
    );
    return item;
  }

  fill(
    root,
    h(
      "section",
      { class: "tools-view tools-audit" },
      h(
        "div",
        { class: "tools-row" },
        h("h1", {}, ctx.t("audit.title")),
        h("button", { type: "button", onclick: () => load() }, ctx.t("audit.refresh")),
      ),
      h("p", { class: "tools-muted" }, ctx.t("audit.lead")),
      list,
    ),
  );
  load();
  return undefined;
}
