// The search and context playground: a query with filters, the ranked hits with their score
// parts (numbers and bars) and their citations (links to the cited turns in their session);
// and the <memory> block a query would get at a chosen token budget, with why each item is in
// and what was cut.
//   #/search?q=...
import { h } from "../dom.js";
import { register } from "../i18n.js";
import {
  bar,
  call,
  episodesHref,
  errorBox,
  field,
  fill,
  formatNumber,
  href,
  route,
  select,
} from "./toolkit.js";

register({
  en: {
    "search.title": "Search and context",
    "search.query": "Query",
    "search.granularity": "Granularity",
    "search.g.turn": "turns",
    "search.g.session": "sessions",
    "search.g.fact": "facts",
    "search.g.topic": "topics",
    "search.k": "Hits",
    "search.run": "Search",
    "search.hits": "Ranked hits",
    "search.none": "No hits.",
    "search.partial": "{n} record(s) still wait for their vectors: ranked by their words alone.",
    "search.score": "score",
    "search.cites": "Cited turns",
    "search.open": "Open turns",
    "search.session": "session {session}",
    "search.nocites": "no citations",
    "search.doc": "Open document",
    "search.context": "Context for this query",
    "search.budget": "Token budget",
    "search.assemble": "Assemble context",
    "search.tokens": "{tokens} of {budget} tokens",
    "search.route.none": "small talk: no memory needed",
    "search.route.profile": "a question about the user: their profile and essentials",
    "search.route.topic": "about a topic memory keeps a document on",
    "search.route.detail": "details looked up in past conversations and facts",
    "search.topic": "topic {topic}",
    "search.thread": "thread {thread}",
    "search.agent": "agent {agent}",
    "search.explain": "Why each item is in, and what was cut",
    "search.in": "in",
    "search.cut": "cut",
    "search.kind": "Kind",
    "search.item": "Item",
    "search.why": "Why",
    "search.empty": "Type a query first.",
    "search.c.lexical": "lexical",
    "search.c.dense": "dense",
    "search.c.fused": "fused",
    "search.c.llm_rank": "LLM rank",
  },
  zh: {
    "search.title": "检索与上下文",
    "search.query": "查询",
    "search.granularity": "粒度",
    "search.g.turn": "对话轮",
    "search.g.session": "会话",
    "search.g.fact": "事实",
    "search.g.topic": "主题",
    "search.k": "结果数",
    "search.run": "检索",
    "search.hits": "排序结果",
    "search.none": "没有结果。",
    "search.partial": "还有 {n} 条记录在等待向量：仅按词语排序。",
    "search.score": "得分",
    "search.cites": "引用的对话轮",
    "search.open": "打开对话轮",
    "search.session": "会话 {session}",
    "search.nocites": "无引用",
    "search.doc": "打开文档",
    "search.context": "此查询的上下文",
    "search.budget": "令牌预算",
    "search.assemble": "组装上下文",
    "search.tokens": "{tokens} / {budget} 个令牌",
    "search.route.none": "闲聊：不需要记忆",
    "search.route.profile": "关于用户本人的问题：用其档案和要点",
    "search.route.topic": "关于记忆中有文档的主题",
    "search.route.detail": "从过往对话和事实中查找细节",
    "search.topic": "主题 {topic}",
    "search.thread": "线程 {thread}",
    "search.agent": "智能体 {agent}",
    "search.explain": "每项为何入选，哪些被截去",
    "search.in": "入选",
    "search.cut": "截去",
    "search.kind": "类型",
    "search.item": "条目",
    "search.why": "原因",
    "search.empty": "请先输入查询。",
    "search.c.lexical": "词语",
    "search.c.dense": "语义",
    "search.c.fused": "融合",
    "search.c.llm_rank": "模型排序",
  },
});

const GRANULARITIES = ["turn", "session", "fact", "topic"];

export function render(root, ctx) {
  const { query } = route();
  const q = h("input", { type: "search", name: "q", required: "required", autocomplete: "off" });
  q.value = query.get("q") || "";
  const granularity = select(GRANULARITIES, query.get("granularity") || "turn", (g) => ctx.t(`search.g.${g}`), {
    name: "granularity",
  });
  const k = h("input", { type: "number", name: "k", min: "1", max: "50" });
  k.value = query.get("k") || "10";
  const budgetRange = h("input", { type: "range", min: "50", max: "4000", step: "50", "aria-label": ctx.t("search.budget") });
  const budgetNumber = h("input", {
    type: "number",
    name: "budget",
    min: "50",
    max: "100000",
    "aria-label": ctx.t("search.budget"),
  });
  budgetRange.value = budgetNumber.value = query.get("budget") || "600";
  budgetRange.addEventListener("input", () => {
    budgetNumber.value = budgetRange.value;
  });
  budgetNumber.addEventListener("input", () => {
    budgetRange.value = budgetNumber.value;
  });
  const hitsOut = h("section", { class: "tools-hits", "aria-live": "polite" });
  const contextOut = h("section", { class: "tools-context", "aria-live": "polite" });

  // only the answer to the latest request is shown (an earlier one may arrive later)
  let searchSeq = 0;
  let contextSeq = 0;

  async function runSearch() {
    const seq = ++searchSeq;
    const text = q.value.trim();
    if (!text) {
      fill(hitsOut, h("p", {}, ctx.t("search.empty")));
      return;
    }
    fill(hitsOut, h("p", {}, ctx.t("tools.loading")));
    let page;
    try {
      page = await call(ctx, "GET", "/v1/search", {
        query: { q: text, k: k.value || "10", granularity: granularity.value },
      });
    } catch (err) {
      if (seq === searchSeq) fill(hitsOut, errorBox(ctx, err));
      return;
    }
    if (seq !== searchSeq) return;
    fill(hitsOut, h("h2", {}, ctx.t("search.hits")), ...hitList(ctx, page));
  }

  async function runContext() {
    const seq = ++contextSeq;
    const text = q.value.trim();
    if (!text) {
      fill(contextOut, h("p", {}, ctx.t("search.empty")));
      return;
    }
    fill(contextOut, h("p", {}, ctx.t("tools.loading")));
    let result;
    try {
      result = await call(ctx, "GET", "/v1/context", {
        query: { q: text, budget: budgetNumber.value || "600", explain: "true" },
      });
    } catch (err) {
      if (seq === contextSeq) fill(contextOut, errorBox(ctx, err));
      return;
    }
    if (seq !== contextSeq) return;
    fill(contextOut, ...contextView(ctx, result));
  }

  const form = h(
    "form",
    {
      class: "tools-search-form",
      role: "search",
      onsubmit: (event) => {
        event.preventDefault();
        runSearch();
        runContext();
      },
    },
    field(ctx.t("search.query"), q, { class: "tools-field tools-grow" }),
    h(
      "div",
      { class: "tools-row" },
      field(ctx.t("search.granularity"), granularity),
      field(ctx.t("search.k"), k),
      h("button", { type: "submit", class: "primary" }, ctx.t("search.run")),
    ),
    h(
      "div",
      { class: "tools-row" },
      field(ctx.t("search.budget"), h("span", { class: "tools-budget" }, budgetRange, budgetNumber)),
      h("button", { type: "button", onclick: () => runContext() }, ctx.t("search.assemble")),
    ),
  );
  fill(
    root,
    h(
      "section",
      { class: "tools-view tools-search" },
      h("h1", {}, ctx.t("search.title")),
      form,
      h("div", { class: "tools-columns" }, hitsOut, contextOut),
    ),
  );
  if (q.value.trim()) {
    runSearch();
    runContext();
  } else {
    q.focus();
  }
  return undefined;

  function hitList(ctx, page) {
    const hits = page.items || [];
    const out = [];
    if (page.partial) out.push(h("p", { class: "tools-muted" }, ctx.t("search.partial", { n: page.pending })));
    if (!hits.length) {
      out.push(h("p", {}, ctx.t("search.none")));
      return out;
    }
    const names = [...new Set(hits.flatMap((hit) => Object.keys(hit.components || {})))];
    const maxOf = Object.fromEntries(
      names.map((n) => [n, Math.max(0, ...hits.map((hit) => Math.abs(hit.components[n] ?? 0)))]),
    );
    const maxScore = Math.max(0, ...hits.map((hit) => Math.abs(hit.score)));
    out.push(
      h(
        "ol",
        { class: "tools-hitlist" },
        ...hits.map((hit) => {
          const cites = h("div", { class: "tools-cites" });
          fillCites(ctx, hit, cites);
          const where = elsewhere(ctx, hit.scope);
          const meta = [
            hit.speaker,
            hit.time ? hit.time.slice(0, 16).replace("T", " ") : null,
            hit.topic ? ctx.t("search.topic", { topic: hit.topic }) : null,
            where && where.thread ? ctx.t("search.thread", { thread: where.thread }) : null,
            where && where.agent ? ctx.t("search.agent", { agent: where.agent }) : null,
          ]
            .filter(Boolean)
            .join(" · ");
          return h(
            "li",
            { class: "tools-hit", "data-id": hit.id },
            h("p", { class: "tools-hit-text" }, hit.text),
            meta ? h("p", { class: "tools-muted" }, meta) : null,
            h(
              "div",
              { class: "tools-scores" },
              bar(hit.score, maxScore, ctx.t("search.score")),
              ...names.map((n) => bar(hit.components[n] ?? 0, maxOf[n], componentName(ctx, n))),
            ),
            cites,
          );
        }),
      ),
    );
    return out;
  }
}

/** The thread and agent of a record's scope that the page's scope does not name, as a
 * route's query ({thread, agent}), or undefined when the record is the page's own. */
function elsewhere(ctx, scope) {
  const of = scope || {};
  const out = {};
  if (of.thread && of.thread !== ctx.scope.thread) out.thread = of.thread;
  if (of.agent) out.agent = of.agent;
  return Object.keys(out).length ? out : undefined;
}

/** A score component's name in the interface's language (its own name when unknown). */
function componentName(ctx, name) {
  const key = `search.c.${name}`;
  const text = ctx.t(key);
  return text === key ? name : text;
}

/** Links to the turns a hit rests on, grouped by session: its own turn or session at once;
 * a fact's sources or a topic's bullets' citations looked up first. */
async function fillCites(ctx, hit, node) {
  if (hit.granularity === "turn" && hit.session_id) {
    fill(node, citeLink(ctx, hit.session_id, [hit.id]));
    return;
  }
  if (hit.granularity === "session" && hit.session_id) {
    fill(node, citeLink(ctx, hit.session_id, hit.episodes || []));
    return;
  }
  try {
    let episodeIds = [];
    const extra = [];
    if (hit.granularity === "fact") {
      const fact = await call(ctx, "GET", `/v1/items/${encodeURIComponent(hit.id)}`);
      episodeIds = fact.sources || [];
      extra.push(h("a", { href: href(["edit", "fact", hit.id]), class: "tools-link" }, "✎"));
    } else if (hit.granularity === "topic") {
      const doc = await call(ctx, "GET", `/v1/items/${encodeURIComponent(hit.id)}`);
      const wanted = new Set(hit.bullets || []);
      for (const section of (doc.content && doc.content.sections) || []) {
        for (const bullet of section.bullets || []) {
          if (wanted.size && !wanted.has(bullet.id)) continue;
          for (const c of bullet.citations || []) episodeIds.push(c.slice(c.indexOf(":") + 1));
        }
      }
      // a thread's own document (under all threads) is edited in that thread, not the user's
      extra.push(h("a", { href: href(["edit", "doc", doc.key], elsewhere(ctx, doc.scope)), class: "tools-link" }, ctx.t("search.doc")));
    }
    const sessions = await sessionsOf(ctx, [...new Set(episodeIds)].slice(0, 30));
    const links = [...sessions.entries()].map(([session, ids]) => citeLink(ctx, session, ids));
    fill(node, ...(links.length ? links : [h("span", { class: "tools-muted" }, ctx.t("search.nocites"))]), ...extra);
  } catch (err) {
    fill(node, errorBox(ctx, err));
  }
}

/** The session of each episode, as session -> episode ids (episodes gone are skipped). */
async function sessionsOf(ctx, episodeIds) {
  const found = await Promise.all(
    episodeIds.map((id) => call(ctx, "GET", `/v1/items/${encodeURIComponent(id)}`).catch(() => null)),
  );
  const out = new Map();
  for (const ep of found) {
    if (!ep || !ep.session_id) continue;
    if (!out.has(ep.session_id)) out.set(ep.session_id, []);
    out.get(ep.session_id).push(ep.id);
  }
  return out;
}

function citeLink(ctx, session, ids) {
  return h(
    "a",
    { class: "tools-cite", href: episodesHref(session, ids.slice(0, 50)) },
    ctx.t("search.session", { session }),
  );
}

/** How the query was served (the router's choice), in the interface's words, after a " · ";
 * nothing for a choice the page has no words for (the router's own name is not shown). */
function routeWords(ctx, name) {
  const key = `search.route.${name}`;
  const text = ctx.t(key);
  return text === key ? "" : ` · ${text}`;
}

/** An item of the explanation: its words, shortened (the id as their tooltip), and its id
 * in a small line below; the id alone when the server sent no words. */
function itemCell(entry) {
  const id = h("code", { class: "tools-item-id" }, entry.id);
  if (!entry.text) return id;
  return [h("span", { class: "tools-item-text", title: entry.id }, shorten(entry.text, ITEM_CHARS)), id];
}

/** The characters of an item's words the explanation shows. */
const ITEM_CHARS = 80;

/** ``text`` on one line, cut to ``limit`` characters (whole code points) with an ellipsis. */
function shorten(text, limit) {
  const chars = Array.from(String(text).replace(/\s+/g, " ").trim());
  return chars.length <= limit ? chars.join("") : `${chars.slice(0, limit - 1).join("").trimEnd()}…`;
}

/** The assembled block, its size against the budget, and the explanation table. */
function contextView(ctx, result) {
  const explain = result.explain || [];
  return [
    h("h2", {}, ctx.t("search.context")),
    h(
      "p",
      { class: "tools-muted" },
      ctx.t("search.tokens", { tokens: result.tokens, budget: result.budget }),
      routeWords(ctx, result.route),
      result.topic ? ` · ${ctx.t("search.topic", { topic: result.topic })}` : "",
    ),
    bar(result.tokens, result.budget, ctx.t("search.budget"), { fit: true }),
    h("pre", { class: "tools-memory", tabindex: "0" }, result.text),
    h("h3", {}, ctx.t("search.explain")),
    h(
      "table",
      { class: "tools-explain" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, ""),
          h("th", { scope: "col" }, ctx.t("search.kind")),
          h("th", { scope: "col" }, ctx.t("search.item")),
          h("th", { scope: "col" }, ctx.t("search.why")),
        ),
      ),
      h(
        "tbody",
        {},
        ...explain.map((e) =>
          h(
            "tr",
            { class: e.included ? "tools-in" : "tools-cut", "data-id": e.id },
            h("td", {}, e.included ? ctx.t("search.in") : ctx.t("search.cut")),
            h("td", {}, e.kind),
            h("td", {}, itemCell(e)),
            h("td", {}, e.why),
          ),
        ),
      ),
    ),
  ];
}
