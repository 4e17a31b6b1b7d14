"""The workbench's tools in headless Chromium against a running server over the sample
memory: editing with a preview and a version conflict, the search and context playground,
forgetting with the cascade listed first, a curation run watched live and cancelled, audit
flags resolved. Each test saves screenshots (laptop and phone; Chinese in some) to
build/screenshots/."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.server.auth import KeyAuth
from memstrata.server.http import create_app
from memstrata.settings import load_settings
from tests.e2e.live import live_server
from tests.e2e.web.conftest import LAPTOP, PHONE, SCREENSHOTS, sign_in

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

USER = {"user": "demo"}


@dataclass
class Server:
    """A live server of its own for one test (the tools change memory: edits, forgetting,
    runs), and screenshots named after the test."""

    base_url: str
    admin_key: str
    http: httpx2.Client
    memory: Memory
    test: str

    def shot(self, page: Page, name: str) -> list[Path]:
        """Full-page screenshots at a laptop's and at a phone's width."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        paths = []
        for size, viewport in (("laptop", LAPTOP), ("phone", PHONE)):
            path = SCREENSHOTS / f"{self.test}-{name}-{size}.png"
            page.set_viewport_size(viewport)
            page.screenshot(path=str(path), full_page=True)
            paths.append(path)
        page.set_viewport_size(LAPTOP)
        return paths


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    """A live server over a fresh copy of the sample memory of ``demo``, behind API keys."""
    settings = load_settings(data_dir=tmp_path / "data")
    with Memory.open(settings=settings, embedder=HashingEmbedder(dim=64)) as memory:
        memory.load_sample("demo")
        admin = memory.keys.create("admin", None, name="tools tests").secret
        app = create_app(memory, auth=KeyAuth(memory.keys))
        with live_server(app, headers={"Authorization": f"Bearer {admin}"}) as client:
            test = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")
            yield Server(str(client.base_url).rstrip("/"), admin, client, memory, test)


@pytest.fixture
def open_page(server: Server, browser: Browser) -> Iterator[Callable[..., Page]]:
    """``open_page(route, lang=, thread=)``: a new page signed in with the admin key, user
    ``demo`` (and ``thread``) picked, the interface in ``lang``, on ``#/<route>``; a script
    error on any page fails the test."""
    errors: list[str] = []
    contexts = []

    def open_(route: str, *, lang: str = "en", thread: str | None = None) -> Page:
        context = browser.new_context(viewport=LAPTOP, locale="en-US")
        contexts.append(context)
        scope = json.dumps({"user": "demo", "thread": thread})
        context.add_init_script(
            f"localStorage.setItem('memstrata.lang', {json.dumps(lang)});"
            f"localStorage.setItem('memstrata.scope', {json.dumps(scope)});"
        )
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        sign_in(page, server)
        page.goto(f"{server.base_url}/{route}")
        page.locator(".tools-view").wait_for()
        return page

    yield open_
    for context in contexts:
        context.close()
    assert not errors, f"script errors on the page: {errors}"


def doc(http: httpx2.Client, key: str) -> dict[str, Any]:
    r = http.get(f"/v1/docs/{key}", params=USER)
    assert r.status_code == 200, r.text
    return dict(r.json())


def first_bullet(markdown: str) -> tuple[str, str]:
    """The id and the line of the first bullet of a document's markdown."""
    for line in markdown.splitlines():
        found = re.search(r"<!--(m_[0-9A-Z]+)-->", line)
        if line.startswith("- ") and found:
            return found.group(1), line
    raise AssertionError(f"no bullet in {markdown!r}")


# editing ----------------------------------------------------------------------------------
def test_edit_document_preview_then_apply(server: Server, open_page: Callable[..., Page]) -> None:
    before = doc(server.http, "work")
    bullet_id, _ = first_bullet(before["markdown"])
    page = open_page("#/edit/doc/work")
    box = page.locator(f'textarea[data-bullet="{bullet_id}"]')
    box.fill("Lin Wei 是深圳一家物流创业公司的后端工程师，写 Python 和 Go")
    page.get_by_role("button", name="Preview changes").click()
    diff = page.locator(".tools-diff")
    diff.wait_for()
    assert "+- Lin Wei 是深圳一家物流创业公司的后端工程师" in diff.inner_text()
    assert doc(server.http, "work")["version"] == before["version"]  # a preview stores nothing
    server.shot(page, "edit-preview")
    page.get_by_role("button", name="Apply").click()
    page.locator(".tools-ok").wait_for()
    after = doc(server.http, "work")
    assert after["version"] == before["version"] + 1
    assert "Lin Wei 是深圳一家物流创业公司的后端工程师，写 Python 和 Go" in after["markdown"]
    assert page.locator(".tools-muted", has_text=f"version {after['version']}").count() == 1


def test_edit_document_as_markdown(server: Server, open_page: Callable[..., Page]) -> None:
    before = doc(server.http, "work")
    page = open_page("#/edit/doc/work", lang="zh")
    page.get_by_role("button", name="Markdown").click()
    editor = page.locator("textarea.tools-markdown")
    assert editor.input_value() == before["markdown"]
    edited = before["markdown"].replace(
        "## Plans\n", "## Plans\n- 下周去杭州出差 (a trip to Hangzhou)\n", 1
    )
    editor.fill(edited)
    page.get_by_role("button", name="预览改动").click()
    assert "+- 下周去杭州出差 (a trip to Hangzhou)" in page.locator(".tools-diff").inner_text()
    server.shot(page, "edit-markdown-zh")
    page.get_by_role("button", name="应用").click()
    page.locator(".tools-ok").wait_for()
    after = doc(server.http, "work")
    assert after["version"] == before["version"] + 1
    assert re.search(r"\n- 下周去杭州出差 \(a trip to Hangzhou\) .*<!--m_", after["markdown"])


def test_edit_conflict_overwrites_nothing(server: Server, open_page: Callable[..., Page]) -> None:
    base = doc(server.http, "work")
    bullet_id, _ = first_bullet(base["markdown"])
    page = open_page("#/edit/doc/work")
    page.locator(f'textarea[data-bullet="{bullet_id}"]').fill("My edit, made on a stale version")
    page.get_by_role("button", name="Preview changes").click()
    page.locator(".tools-diff").wait_for()
    # someone else changes the document between the preview and the apply
    theirs = base["markdown"].replace("Shenzhen", "Shenzhen (changed elsewhere)", 1)
    r = server.http.post(
        "/v1/docs/work/apply",
        params=USER,
        json={"markdown": theirs, "expected_version": base["version"]},
    )
    assert r.status_code == 200, r.text
    page.get_by_role("button", name="Apply").click()
    conflict = page.locator(".tools-conflict")
    conflict.wait_for()
    assert f"now at version {base['version'] + 1}" in conflict.inner_text()
    assert "My edit, made on a stale version" in conflict.locator(".tools-mine").inner_text()
    assert "changed elsewhere" in conflict.locator(".tools-theirs").inner_text()
    stored = doc(server.http, "work")
    assert stored["version"] == base["version"] + 1
    assert "changed elsewhere" in stored["markdown"]
    assert "stale version" not in stored["markdown"]
    server.shot(page, "edit-conflict")
    page.get_by_role("button", name="Reload").click()
    page.locator(".tools-conflict").wait_for(state="detached")
    assert "changed elsewhere" in page.locator(f'textarea[data-bullet="{bullet_id}"]').input_value()


def test_delete_bullet_with_reason(server: Server, open_page: Callable[..., Page]) -> None:
    base = doc(server.http, "work")
    bullet_id, line = first_bullet(base["markdown"])
    page = open_page("#/edit/doc/work")
    row = page.locator(f'.tools-bullet[data-bullet="{bullet_id}"]')
    opener = row.get_by_role("button", name="Delete bullet")
    opener.click()
    dialog = page.locator("dialog[open]")
    dialog.wait_for()
    page.keyboard.press("Escape")  # closes without deleting, focus back on the opener
    dialog.wait_for(state="detached")
    assert page.evaluate("document.activeElement.textContent") == "Delete bullet"
    opener.click()
    dialog.locator("select").select_option("stale")
    dialog.get_by_role("button", name="Delete bullet").click()
    assert "to be deleted (stale)" in row.inner_text()
    server.shot(page, "bullet-marked")
    page.get_by_role("button", name="Preview changes").click()
    assert f"-{line}" in page.locator(".tools-diff").inner_text()
    page.get_by_role("button", name="Apply").click()
    page.locator(".tools-ok").wait_for()
    assert bullet_id not in doc(server.http, "work")["markdown"]


def test_edit_fact_field_diff_and_conflict(server: Server, open_page: Callable[..., Page]) -> None:
    facts = server.http.get("/v1/list", params={**USER, "kind": "fact"}).json()["items"]
    fact = next(f for f in facts if f["topic"] == "health")
    page = open_page(f"#/edit/fact/{fact['id']}", lang="zh")
    page.locator('textarea[name="text"]').fill("对花生严重过敏 (severe peanut allergy)")
    category = "event" if fact["category"] != "event" else "other"
    page.locator('select[name="category"]').select_option(category)
    page.get_by_role("button", name="预览改动").click()
    table = page.locator(".tools-fielddiff")
    table.wait_for()
    rows = table.locator("tbody tr")
    assert rows.count() == 2  # text and category changed, nothing else
    assert "severe peanut allergy" in table.inner_text()
    server.shot(page, "edit-fact-zh")
    # the fact changes elsewhere before the apply
    r = server.http.patch(
        f"/v1/items/{fact['id']}",
        params=USER,
        json={"changes": {"importance": 0.2}, "expected_version": fact["version"]},
    )
    assert r.status_code == 200, r.text
    page.get_by_role("button", name="应用").click()
    page.locator(".tools-conflict").wait_for()
    stored = server.http.get(f"/v1/items/{fact['id']}", params=USER).json()
    assert stored["text"] == fact["text"] and stored["category"] == fact["category"]
    page.get_by_role("button", name="重新加载").click()
    page.locator(".tools-conflict").wait_for(state="detached")  # the current version read
    assert page.locator('input[name="importance"]').input_value() == "0.2"
    page.locator('textarea[name="text"]').fill("对花生严重过敏 (severe peanut allergy)")
    page.get_by_role("button", name="预览改动").click()
    page.get_by_role("button", name="应用").click()
    page.locator(".tools-ok").wait_for()
    stored = server.http.get(f"/v1/items/{fact['id']}", params=USER).json()
    assert stored["text"] == "对花生严重过敏 (severe peanut allergy)"
    assert stored["importance"] == 0.2  # the other writer's change is kept


def test_delete_fact_with_reason(server: Server, open_page: Callable[..., Page]) -> None:
    facts = server.http.get("/v1/list", params={**USER, "kind": "fact"}).json()["items"]
    fact = next(f for f in facts if f["topic"] == "hobbies")
    page = open_page(f"#/edit/fact/{fact['id']}")
    page.get_by_role("button", name="Delete fact…").click()
    dialog = page.locator("dialog[open]")
    dialog.locator("select").select_option("contradicted")
    server.shot(page, "fact-delete-reason")
    dialog.get_by_role("button", name="Delete", exact=True).click()
    page.locator(".tools-ok", has_text="Deleted.").wait_for()
    assert server.http.get(f"/v1/items/{fact['id']}", params=USER).status_code == 404
    history = server.http.get(f"/v1/items/{fact['id']}/history", params=USER).json()["items"]
    assert history[-1]["reason"] == "contradicted"


# forgetting -------------------------------------------------------------------------------
def test_forget_item_lists_the_cascade_first(
    server: Server, open_page: Callable[..., Page]
) -> None:
    episodes = server.http.get("/v1/list", params={**USER, "kind": "episode"}).json()["items"]
    turn = next(e for e in episodes if "花生" in e["text"])
    facts = server.http.get("/v1/list", params={**USER, "kind": "fact"}).json()["items"]
    citing = [f for f in facts if turn["id"] in f["sources"]]
    assert citing, "the sample has a fact citing the turn"
    page = open_page(f"#/forget/item/{turn['id']}")
    page.get_by_role("button", name="Forget…").click()
    dialog = page.locator("dialog[open]")
    dialog.wait_for()
    listed = dialog.inner_text()
    assert "另外，我对花生过敏" in listed  # the turn itself, verbatim
    for fact in citing:  # and each fact derived from it
        assert dialog.locator(f'[data-id="{fact["id"]}"]').count() == 1
    server.shot(page, "forget-confirm")
    # cancelling forgets nothing
    dialog.get_by_role("button", name="Cancel").click()
    assert server.http.get(f"/v1/items/{turn['id']}", params=USER).status_code == 200
    page.get_by_role("button", name="Forget…").click()
    page.locator("dialog[open]").get_by_role("button", name="Forget for good").click()
    page.locator(".tools-ok").wait_for()
    assert server.http.get(f"/v1/items/{turn['id']}", params=USER).status_code == 404
    for fact in citing:
        assert server.http.get(f"/v1/items/{fact['id']}", params=USER).status_code == 404


def test_forget_thread_needs_its_name_typed(server: Server, open_page: Callable[..., Page]) -> None:
    page = open_page("#/forget/scope", thread="project-routes", lang="zh")
    page.get_by_role("button", name="遗忘…").click()
    dialog = page.locator("dialog[open]")
    dialog.wait_for()
    confirm = dialog.get_by_role("button", name="永久遗忘")
    assert confirm.is_disabled()
    dialog.locator("input[type=text]").fill("project")
    assert confirm.is_disabled()
    dialog.locator("input[type=text]").fill("project-routes")
    server.shot(page, "forget-scope-zh")
    confirm.click()
    page.locator(".tools-ok").wait_for()
    left = server.http.get(
        "/v1/list", params={**USER, "thread": "project-routes", "kind": "episode"}
    ).json()["items"]
    assert left == []
    other = server.http.get(
        "/v1/list", params={**USER, "thread": "onboarding", "kind": "episode"}
    ).json()["items"]
    assert other  # the other thread is untouched


# search and context -----------------------------------------------------------------------
def test_search_hits_scores_citations_and_context_explain(
    server: Server, open_page: Callable[..., Page]
) -> None:
    page = open_page("#/search?q=PostgreSQL")
    hits = page.locator(".tools-hit")
    hits.first.wait_for()
    top = hits.first
    assert "PostgreSQL" in top.locator(".tools-hit-text").inner_text()
    labels = top.locator(".tools-bar-label").all_inner_texts()
    assert {"score", "lexical", "dense", "fused"} <= set(labels)
    values = [float(v) for v in top.locator(".tools-bar-value").all_inner_texts()]
    assert values[0] > 0
    cite = top.locator("a.tools-cite").first
    href = cite.get_attribute("href") or ""
    assert re.fullmatch(r"#/episodes/2026-04-14\?hl=ep_[0-9A-Z]+", href), href
    # the context block at a small budget: what is in, and what was cut
    page.locator('input[name="budget"]').fill("120")
    page.get_by_role("button", name="Assemble context").click()
    page.locator(".tools-context", has_text="of 120 tokens").wait_for()
    block = page.locator(".tools-memory").inner_text()
    assert block.startswith("<memory>")
    assert page.locator(".tools-explain tr.tools-in").count() >= 1
    assert page.locator(".tools-explain tr.tools-cut").count() >= 1
    assert "over the budget" in page.locator(".tools-explain tr.tools-cut").first.inner_text()
    server.shot(page, "search-explain")
    cite.click()
    page.wait_for_url(re.compile(r".*#/episodes/2026-04-14\?hl=ep_.*"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_context_panel_speaks_a_users_words_and_lists_items_by_their_text(
    server: Server, open_page: Callable[..., Page], lang: str
) -> None:
    page = open_page("#/search?q=PostgreSQL", lang=lang)
    panel = page.locator(".tools-context")
    rows = panel.locator(".tools-explain tbody tr")
    rows.first.wait_for()
    answer = server.http.get("/v1/context", params={**USER, "q": "PostgreSQL", "budget": 600})
    route_name = answer.json()["route"]
    # how the query was served, in words: not the router's name for it
    summary = panel.locator("p.tools-muted").first.inner_text()
    assert not re.search(rf"\b(route|{route_name})\b|路由", summary), summary
    assert re.search(r"\w", summary.split("·", 1)[1]), summary
    # the budget bar's label is whole, in both languages
    label = panel.locator(".tools-bar-label")
    assert label.inner_text() == {"en": "Token budget", "zh": "令牌预算"}[lang]
    assert label.evaluate("el => el.scrollWidth <= el.clientWidth"), "the label is cut"
    # each item by its words (an episode's as stored), its id at hand but not in their place
    episodes = [row for row in rows.all() if (row.get_attribute("data-id") or "").startswith("ep_")]
    assert episodes
    for row in episodes[:3]:
        item_id = row.get_attribute("data-id") or ""
        stored = server.http.get(f"/v1/items/{item_id}", params=USER).json()["text"]
        words = row.locator(".tools-item-text")
        shown = words.inner_text()
        assert shown.startswith(stored[:30]) or stored[:30] in shown, (shown, stored)
        assert item_id not in shown
        assert words.get_attribute("title") == item_id
        assert row.locator(".tools-item-id").inner_text() == item_id
    server.shot(page, f"context-explain-{lang}")


def test_search_fact_hits_link_their_sources(
    server: Server, open_page: Callable[..., Page]
) -> None:
    page = open_page("#/search?q=花生&granularity=fact", lang="zh")
    hit = page.locator(".tools-hit").first
    hit.wait_for()
    link = hit.locator("a.tools-cite")
    link.first.wait_for()  # looked up from the fact's sources
    assert re.fullmatch(
        r"#/episodes/2026-03-09\?hl=ep_[0-9A-Z]+", link.first.get_attribute("href") or ""
    )
    server.shot(page, "search-facts-zh")


# runs -------------------------------------------------------------------------------------
@pytest.fixture
def held_extraction(server: Server) -> Iterator[threading.Event]:
    """Hold a run's extraction step until the event is set: a run stays at its first step
    while the test cancels it (released at the end in any case)."""
    memory: Memory = server.memory
    release = threading.Event()
    extract = memory.extract

    def held(*args: Any, **kwargs: Any) -> Any:
        release.wait(60)
        return extract(*args, **kwargs)

    memory.extract = held  # type: ignore[method-assign]
    try:
        yield release
    finally:
        release.set()
        memory.extract = extract  # type: ignore[method-assign]


def test_run_watched_live_then_cancelled(
    server: Server, open_page: Callable[..., Page], held_extraction: threading.Event
) -> None:
    page = open_page("#/runs")
    page.locator('select[name="kind"]').select_option("consolidate")
    page.get_by_role("button", name="Start run").click()
    page.locator('.tools-event[data-kind="started"]').wait_for()
    page.locator('.tools-event[data-kind="step"]', has_text="step=extract").wait_for()
    state = page.locator(".tools-run [data-state]")
    assert state.get_attribute("data-state") == "running"
    server.shot(page, "run-live")
    page.get_by_role("button", name="Cancel run").click()
    page.locator(".tools-run", has_text="Cancelling").wait_for()
    held_extraction.set()  # the step ends; the run stops before consolidating
    page.locator('.tools-run [data-state="cancelled"]').wait_for()
    kinds = page.locator(".tools-event").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert kinds[0] == "started" and kinds[-1] == "cancelled"
    assert "consolidate" not in page.locator(".tools-events").inner_text()
    page.locator(".tools-pastrun .state-cancelled").first.wait_for()
    runs = server.http.get("/v1/runs", params=USER).json()["items"]
    assert [r["state"] for r in runs] == ["cancelled"]
    server.shot(page, "run-cancelled")


def test_run_events_reconnect_from_the_last_event_seen(
    server: Server, open_page: Callable[..., Page], held_extraction: threading.Event
) -> None:
    """A stream that drops before the run's end is opened again from the last event seen,
    and no event shows twice."""
    page = open_page("#/runs")
    asked: list[str] = []

    def drop_first(route: Any, request: Any) -> None:
        asked.append(request.url)
        if len(asked) > 1:
            route.continue_()
            return
        # the first stream ends after the run's first event (a dropped connection)
        run_id = request.url.split("/v1/runs/")[1].split("/")[0]
        r = server.http.get(
            f"/v1/runs/{run_id}/events", params={**USER, "follow": "false", "cursor": "0"}
        )
        first = r.text.split("\n\n")[0] + "\n\n"
        route.fulfill(status=200, headers={"content-type": "text/event-stream"}, body=first)

    page.route("**/v1/runs/*/events*", drop_first)
    page.locator('select[name="kind"]').select_option("extract")
    page.get_by_role("button", name="Start run").click()
    page.locator('.tools-event[data-kind="step"]').wait_for()
    held_extraction.set()
    page.locator('.tools-run [data-state="done"]').wait_for()
    first_seq = page.locator(".tools-event code").first.inner_text().lstrip("#")
    assert len(asked) >= 2 and f"cursor={first_seq}" in asked[1], asked
    kinds = page.locator(".tools-event").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert kinds == ["started", "step", "report", "done"]
    server.shot(page, "run-reconnected")


def test_run_done_with_its_report(server: Server, open_page: Callable[..., Page]) -> None:
    page = open_page("#/runs", lang="zh")
    page.locator('select[name="kind"]').select_option("extract")
    page.get_by_role("button", name="开始任务").click()
    page.locator(".tools-result", has_text='"kind": "extract"').wait_for()  # the run's report
    assert page.locator(".tools-run [data-state]").get_attribute("data-state") == "done"
    kinds = page.locator(".tools-event").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert kinds == ["started", "step", "report", "done"]
    page.locator(".tools-pastrun").first.wait_for()
    server.shot(page, "run-done-zh")


# audit -------------------------------------------------------------------------------------
UNSUPPORTED = "Owns a purple submarine called Nautilus"


def add_unsupported_bullet(http: httpx2.Client) -> str:
    """A bullet of the work document citing a turn that says nothing of it; its id."""
    base = doc(http, "work")
    cited = re.search(r"\[\^1\]: (\S+)", base["markdown"])
    assert cited, base["markdown"]
    r = http.post(
        "/v1/docs/work/apply",
        params=USER,
        json={
            "operations": [
                {"op": "add", "section": "Profile", "text": UNSUPPORTED, "citations": [cited[1]]}
            ],
            "expected_version": base["version"],
        },
    )
    assert r.status_code == 200, r.text
    found = re.search(rf"{UNSUPPORTED}.*<!--(m_[0-9A-Z]+)-->", r.json()["after"])
    assert found, r.json()["after"]
    return found[1]


def finding_of(page: Page, bullet_id: str) -> Any:
    item = page.locator(f'.tools-finding[data-bullet="{bullet_id}"]')
    item.wait_for()
    return item


def test_audit_finding_deleted_with_a_reason(
    server: Server, open_page: Callable[..., Page]
) -> None:
    bullet_id = add_unsupported_bullet(server.http)
    page = open_page("#/audit")
    item = finding_of(page, bullet_id)
    text = item.inner_text()
    assert UNSUPPORTED in text and "barely support" in text
    assert "Lin Wei" in item.locator(".tools-evidence").inner_text()  # the cited turn
    server.shot(page, "audit")
    item.get_by_role("button", name="Delete…").click()
    dialog = page.locator("dialog[open]")
    dialog.locator("select").select_option("low-signal")
    dialog.get_by_role("button", name="Delete…").click()
    item.locator(".tools-ok").wait_for()
    assert bullet_id not in doc(server.http, "work")["markdown"]


def test_audit_finding_kept_is_not_flagged_again(
    server: Server, open_page: Callable[..., Page]
) -> None:
    bullet_id = add_unsupported_bullet(server.http)
    page = open_page("#/audit")
    item = finding_of(page, bullet_id)
    item.get_by_role("button", name="Keep").click()
    item.locator(".tools-ok").wait_for()
    server.shot(page, "audit-kept")
    assert UNSUPPORTED in doc(server.http, "work")["markdown"]
    page.get_by_role("button", name="Check again").click()
    page.locator(".tools-findings", has_text="Loading").wait_for(state="detached")
    assert page.locator(f'.tools-finding[data-bullet="{bullet_id}"]').count() == 0


def test_audit_finding_edited(server: Server, open_page: Callable[..., Page]) -> None:
    bullet_id = add_unsupported_bullet(server.http)
    page = open_page("#/audit", lang="zh")
    item = finding_of(page, bullet_id)
    item.get_by_role("button", name="编辑").click()
    item.locator("textarea").fill("Lin Wei 是后端工程师")
    server.shot(page, "audit-edit-zh")
    item.get_by_role("button", name="保存修改").click()
    item.locator(".tools-ok").wait_for()
    markdown = doc(server.http, "work")["markdown"]
    assert re.search(rf"- Lin Wei 是后端工程师 .*<!--{bullet_id}-->", markdown), markdown
    assert UNSUPPORTED not in markdown


# every tool at a phone's width ------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_tool_fits_a_phone_in_each_language(
    server: Server, open_page: Callable[..., Page], lang: str
) -> None:
    """Each tool view with content, 390 px wide: nothing overflows sideways, and every string
    the views used exists in English and in Chinese."""
    bullet_id = add_unsupported_bullet(server.http)
    facts = server.http.get("/v1/list", params={**USER, "kind": "fact"}).json()["items"]
    episodes = server.http.get("/v1/list", params={**USER, "kind": "episode"}).json()["items"]
    tour = [
        ("search", "#/search?q=PostgreSQL", ".tools-explain tbody tr"),
        ("edit-doc", "#/edit/doc/work", ".tools-bullet textarea"),
        ("edit-fact", f"#/edit/fact/{facts[0]['id']}", 'textarea[name="text"]'),
        ("forget-item", f"#/forget/item/{episodes[0]['id']}", ".tools-forget button"),
        ("forget-scope", "#/forget/scope", ".tools-choices"),
        ("runs", "#/runs", ".tools-past h2"),
        ("audit", "#/audit", f'.tools-finding[data-bullet="{bullet_id}"] .tools-evidence'),
    ]
    page = open_page(tour[0][1], lang=lang)
    page.set_viewport_size(PHONE)
    for name, route, ready in tour:
        page.goto(f"{server.base_url}/{route}")
        page.locator(ready).first.wait_for()
        width = page.evaluate("document.documentElement.clientWidth")
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"{name}: the page is {scroll}px wide in a {width}px window"
        page.screenshot(path=str(SCREENSHOTS / f"{server.test}-{name}-phone.png"), full_page=True)
    lacking = page.evaluate("import('/js/i18n.js').then(m => m.missing())")
    assert lacking == {"en": [], "zh": []}, lacking
