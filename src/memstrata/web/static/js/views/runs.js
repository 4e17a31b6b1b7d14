// Curation runs: start an extraction or a consolidation, watch its events live, cancel it;
// the scope's past runs with their results, each saying what started it (a person's request,
// or the automatic curation of a quiet thread), which thread it curated, why it failed, and
// what rules did because the chat model could not. The events come as server-sent events read with
// fetch (an EventSource cannot send the API key); a dropped stream reconnects from the last
// event seen.
//   #/runs   #/runs?run=<id>
import { formatTime, h } from "../dom.js";
import { register } from "../i18n.js";
import { call, errorBox, field, fill, href, route, scopeBody, scopeQuery, select } from "./toolkit.js";

register({
  en: {
    "runs.title": "Curation runs",
    "runs.kind": "Kind",
    "runs.kind.extract": "extract facts",
    "runs.kind.consolidate": "consolidate documents",
    "runs.mode": "Mode",
    "runs.mode.update": "update",
    "runs.mode.audit": "audit",
    "runs.mode.dedup": "dedup",
    "runs.start": "Start run",
    "runs.cancel": "Cancel run",
    "runs.cancelling": "Cancelling: the run stops before its next step.",
    "runs.watch": "Run {id}",
    "runs.state": "State: {state}",
    "runs.state.running": "running",
    "runs.state.done": "done",
    "runs.state.failed": "failed",
    "runs.state.cancelled": "cancelled",
    "runs.events": "Events",
    "runs.reconnect": "The event stream dropped; reconnecting from event {seq}…",
    "runs.missed": "{n} earlier event(s) are no longer kept.",
    "runs.past": "Past runs",
    "runs.none": "No runs yet in this scope.",
    "runs.refresh": "Refresh",
    "runs.open": "Open",
    "runs.started": "Started",
    "runs.finished": "Finished",
    "runs.result": "Result",
    "runs.busy": "A run is already going in this scope.",
    "runs.trigger.request": "on request",
    "runs.trigger.auto": "automatic",
    "runs.trigger.label": "Started: {trigger}",
    "runs.scope.user": "user {user}",
    "runs.scope.thread": "thread {thread}",
    "runs.scope.agent": "agent {agent}",
    "runs.error": "Failed: {error}",
    "runs.fallback": "The chat model failed at {steps}: {error}. Rules did that work instead.",
  },
  zh: {
    "runs.title": "整理任务",
    "runs.kind": "类型",
    "runs.kind.extract": "抽取事实",
    "runs.kind.consolidate": "整合文档",
    "runs.mode": "模式",
    "runs.mode.update": "更新",
    "runs.mode.audit": "审核",
    "runs.mode.dedup": "去重",
    "runs.start": "开始任务",
    "runs.cancel": "取消任务",
    "runs.cancelling": "正在取消：任务会在下一步之前停止。",
    "runs.watch": "任务 {id}",
    "runs.state": "状态：{state}",
    "runs.state.running": "运行中",
    "runs.state.done": "已完成",
    "runs.state.failed": "失败",
    "runs.state.cancelled": "已取消",
    "runs.events": "事件",
    "runs.reconnect": "事件流中断，正在从事件 {seq} 处重新连接…",
    "runs.missed": "有 {n} 个较早的事件已不再保留。",
    "runs.past": "历史任务",
    "runs.none": "此范围内还没有任务。",
    "runs.refresh": "刷新",
    "runs.open": "打开",
    "runs.started": "开始时间",
    "runs.finished": "结束时间",
    "runs.result": "结果",
    "runs.busy": "此范围内已有任务在运行。",
    "runs.trigger.request": "手动发起",
    "runs.trigger.auto": "自动",
    "runs.trigger.label": "发起方式：{trigger}",
    "runs.scope.user": "用户 {user}",
    "runs.scope.thread": "线程 {thread}",
    "runs.scope.agent": "智能体 {agent}",
    "runs.error": "失败：{error}",
    "runs.fallback": "聊天模型在 {steps} 失败：{error}。这些工作已改由规则完成。",
  },
});

const ENDS = new Set(["done", "failed", "cancelled"]);

/** What started the run, as a badge. */
function triggerBadge(ctx, run) {
  const trigger = run.trigger || "request";
  return h("span", { class: `tools-badge trigger-${trigger}`, "data-trigger": trigger }, ctx.t(`runs.trigger.${trigger}`));
}

/** Where the run curated: its thread (and agent), or the user's own memory. */
function scopeBadge(ctx, run) {
  const scope = run.scope || {};
  const parts = [];
  if (scope.thread) parts.push(ctx.t("runs.scope.thread", { thread: scope.thread }));
  if (scope.agent) parts.push(ctx.t("runs.scope.agent", { agent: scope.agent }));
  if (!parts.length) parts.push(ctx.t("runs.scope.user", { user: scope.user || "" }));
  return h("span", { class: "tools-badge run-scope", "data-thread": scope.thread || "" }, parts.join(" · "));
}

/** Why a failed run failed, and what rules did because the model could not. */
function runNotes(ctx, run) {
  const notes = [];
  if (run.error) notes.push(h("p", { class: "tools-error run-error" }, ctx.t("runs.error", { error: run.error })));
  const fallback = fallbackNote(ctx, run.result);
  if (fallback) notes.push(fallback);
  return notes;
}

function fallbackNote(ctx, result) {
  const fallback = result && result.fallback;
  if (!fallback) return null;
  return h(
    "p",
    { class: "tools-warning run-fallback", role: "status" },
    ctx.t("runs.fallback", { steps: (fallback.steps || []).join(", "), error: fallback.error || "?" }),
  );
}
/** How long to wait before reconnecting a dropped stream, in ms (doubling up to the last). */
const BACKOFF = [250, 500, 1000, 2000, 4000];

/**
 * Split server-sent events out of ``buffer``: the complete events, and what is left over
 * (an event not yet ended by a blank line).
 */
export function parseEvents(buffer) {
  const events = [];
  const normalized = buffer.replace(/\r\n?/g, "\n");
  const blocks = normalized.split("\n\n");
  const rest = blocks.pop();
  for (const block of blocks) {
    const event = { id: null, event: "message", data: "" };
    const data = [];
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (name === "id") event.id = value;
      else if (name === "event") event.event = value;
      else if (name === "data") data.push(value);
    }
    event.data = data.join("\n");
    events.push(event);
  }
  return { events, rest };
}

export function render(root, ctx) {
  const { query } = route();
  const kind = select(["extract", "consolidate"], "extract", (k) => ctx.t(`runs.kind.${k}`), { name: "kind" });
  const mode = select(["update", "audit", "dedup"], "update", (m) => ctx.t(`runs.mode.${m}`), { name: "mode" });
  const syncMode = () => {
    mode.disabled = kind.value !== "consolidate";
  };
  kind.addEventListener("change", syncMode);
  syncMode();
  const watchOut = h("section", { class: "tools-run" });
  const pastOut = h("section", { class: "tools-past" });
  const startOut = h("div", { class: "tools-status", "aria-live": "polite" });
  // stop following the stream once the page leaves the view
  const controller = new AbortController();
  if (ctx.signal) ctx.signal.addEventListener("abort", () => controller.abort(), { once: true });
  let watching = null; // the stream of the run shown, stopped when another is shown

  async function start(event) {
    event.preventDefault();
    fill(startOut);
    const body = { scope: scopeBody(ctx), kind: kind.value };
    if (kind.value === "consolidate") body.mode = mode.value;
    let run;
    try {
      run = await call(ctx, "POST", "/v1/runs", { body, scoped: false });
    } catch (err) {
      fill(startOut, err && err.status === 409 ? h("p", { role: "alert" }, ctx.t("runs.busy")) : null, errorBox(ctx, err));
      return;
    }
    watch(run);
    loadPast();
  }

  function watch(run) {
    if (watching) watching.abort();
    const current = new AbortController();
    watching = current;
    controller.signal.addEventListener("abort", () => current.abort(), { once: true });
    const state = h("span", { class: `tools-badge state-${run.state}`, "data-state": run.state }, ctx.t(`runs.state.${run.state}`));
    const events = h("ol", { class: "tools-events", "aria-live": "polite" });
    const note = h("p", { class: "tools-muted", "aria-live": "polite" });
    const result = h("div", { class: "tools-result" });
    const cancel = h(
      "button",
      {
        type: "button",
        class: "danger",
        onclick: async () => {
          cancel.disabled = true;
          try {
            await call(ctx, "POST", `/v1/runs/${encodeURIComponent(run.id)}/cancel`);
            fill(note, ctx.t("runs.cancelling"));
          } catch (err) {
            cancel.disabled = false;
            fill(note, errorBox(ctx, err));
          }
        },
      },
      ctx.t("runs.cancel"),
    );
    cancel.disabled = run.state !== "running";
    const setState = (value) => {
      state.dataset.state = value;
      state.className = `tools-badge state-${value}`;
      fill(state, ctx.t(`runs.state.${value}`));
      if (ENDS.has(value)) cancel.disabled = true;
    };
    const ended = h("div", { class: "tools-run-notes", "aria-live": "polite" }, ...runNotes(ctx, run));
    fill(
      watchOut,
      h("h2", {}, ctx.t("runs.watch", { id: run.id })),
      h("p", { class: "tools-row" }, h("span", {}, ctx.t("runs.state", { state: "" })), state, triggerBadge(ctx, run), scopeBadge(ctx, run)),
      ended,
      h("div", { class: "tools-actions" }, cancel),
      note,
      h("h3", {}, ctx.t("runs.events")),
      events,
      result,
    );
    follow(ctx, run.id, current.signal, {
      onEvent(e) {
        if (e.event === "missed") {
          const n = JSON.parse(e.data || "{}").missed;
          events.append(h("li", { class: "tools-muted" }, ctx.t("runs.missed", { n })));
          return;
        }
        let data = {};
        try {
          data = JSON.parse(e.data);
        } catch {
          data = { data: { text: e.data } };
        }
        events.append(eventItem(data));
        if (data.run_id === run.id && ENDS.has(data.kind)) setState(data.kind);
        if (data.kind === "report" && data.run_id === run.id) {
          fill(result, h("h3", {}, ctx.t("runs.result")), json(data.data.result));
          fill(ended, fallbackNote(ctx, data.data.result));
        }
        if (data.kind === "failed" && data.run_id === run.id) {
          const error = data.data.error ? `${data.data.error}: ${data.data.message || ""}` : data.data.message;
          fill(ended, h("p", { class: "tools-error run-error" }, ctx.t("runs.error", { error: error || "?" })));
        }
      },
      onReconnect(seq) {
        fill(note, ctx.t("runs.reconnect", { seq }));
      },
      onEnd() {
        fill(note);
        loadPast();
      },
      onError(err) {
        fill(note, errorBox(ctx, err));
      },
    });
  }

  async function loadPast() {
    let page;
    try {
      page = await call(ctx, "GET", "/v1/runs");
    } catch (err) {
      fill(pastOut, h("h2", {}, ctx.t("runs.past")), errorBox(ctx, err));
      return;
    }
    const runs = [...(page.items || [])].reverse();
    fill(
      pastOut,
      h(
        "div",
        { class: "tools-row" },
        h("h2", {}, ctx.t("runs.past")),
        h("button", { type: "button", onclick: () => loadPast() }, ctx.t("runs.refresh")),
      ),
      runs.length
        ? h(
            "ul",
            { class: "tools-runlist" },
            ...runs.map((r) =>
              h(
                "li",
                { class: "tools-pastrun", "data-id": r.id },
                h(
                  "div",
                  { class: "tools-row" },
                  h("a", { href: href(["runs"], { run: r.id }) }, h("code", {}, r.id)),
                  h("span", { class: `tools-badge state-${r.state}` }, ctx.t(`runs.state.${r.state}`)),
                  triggerBadge(ctx, r),
                  scopeBadge(ctx, r),
                  r.result && r.result.kind ? h("span", {}, ctx.t(`runs.kind.${r.result.kind}`)) : null,
                ),
                ...runNotes(ctx, r),
                h(
                  "p",
                  { class: "tools-muted" },
                  `${ctx.t("runs.started")}: ${formatTime(r.started_at, ctx.lang)}`,
                  r.finished_at ? ` · ${ctx.t("runs.finished")}: ${formatTime(r.finished_at, ctx.lang)}` : "",
                ),
                r.result
                  ? h("details", {}, h("summary", {}, ctx.t("runs.result")), json(r.result))
                  : null,
              ),
            ),
          )
        : h("p", { class: "tools-muted" }, ctx.t("runs.none")),
    );
  }

  fill(
    root,
    h(
      "section",
      { class: "tools-view tools-runs" },
      h("h1", {}, ctx.t("runs.title")),
      h(
        "form",
        { class: "tools-row", onsubmit: start },
        field(ctx.t("runs.kind"), kind),
        field(ctx.t("runs.mode"), mode),
        h("button", { type: "submit", class: "primary" }, ctx.t("runs.start")),
      ),
      startOut,
      watchOut,
      pastOut,
    ),
  );
  loadPast();
  const wanted = query.get("run");
  if (wanted) {
    call(ctx, "GET", `/v1/runs/${encodeURIComponent(wanted)}`)
      .then((run) => watch(run))
      .catch((err) => fill(watchOut, errorBox(ctx, err)));
  }
  return () => controller.abort();
}

function eventItem(e) {
  const data = e.data || {};
  const text = Object.entries(data)
    .filter(([k]) => k !== "result")
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(" ");
  return h(
    "li",
    { class: "tools-event", "data-kind": e.kind || "" },
    h("code", {}, `#${e.seq ?? "?"}`),
    " ",
    h("strong", {}, e.kind || "?"),
    " ",
    h("span", { class: "tools-muted" }, (e.at || "").slice(11, 19)),
    text ? ` ${text}` : "",
  );
}

function json(value) {
  return h("pre", { class: "tools-json", tabindex: "0" }, JSON.stringify(value, null, 2));
}

/**
 * Follow a run's events: read the stream, hand each event on, and when the stream drops
 * before the run's end, reconnect from the last event seen (with a growing pause).
 */
async function follow(ctx, runId, signal, handlers) {
  let cursor = 0;
  let attempt = 0;
  for (;;) {
    let ended = false;
    try {
      const response = await ctx.api.stream(`/v1/runs/${encodeURIComponent(runId)}/events`, {
        query: { ...scopeQuery(ctx), cursor: String(cursor) },
        signal,
      });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        const { events, rest } = parseEvents(buffer);
        buffer = rest;
        for (const e of events) {
          if (e.id !== null && /^\d+$/.test(e.id)) cursor = Number(e.id);
          attempt = 0;
          handlers.onEvent(e);
          if (ENDS.has(e.event)) {
            try {
              const data = JSON.parse(e.data);
              if (data.run_id === runId) ended = true;
            } catch {
              /* not one of ours */
            }
          }
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err && err.status && err.status < 500) {
        handlers.onError(err);
        return;
      }
    }
    if (signal.aborted) return;
    if (ended) {
      handlers.onEnd();
      return;
    }
    // the stream closed without the run's end: ask whether it ended meanwhile
    try {
      const run = await call(ctx, "GET", `/v1/runs/${encodeURIComponent(runId)}`);
      if (run.state !== "running" && attempt > 0) {
        handlers.onEnd();
        return;
      }
    } catch (err) {
      if (err && err.status && err.status < 500) {
        handlers.onError(err);
        return;
      }
    }
    const pause = BACKOFF[Math.min(attempt, BACKOFF.length - 1)];
    attempt += 1;
    handlers.onReconnect(cursor);
    await new Promise((resolve) => setTimeout(resolve, pause));
    if (signal.aborted) return;
  }
}
