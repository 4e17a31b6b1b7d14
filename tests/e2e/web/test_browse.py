"""The workbench in headless Chromium against a live server: signing in, browsing each layer,
following a citation to its highlighted turns, stored markup shown as text, the keyboard."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.web.conftest import (
    ALLERGY_FACT,
    MARKUP_FACT,
    MARKUP_TURN,
    MOVED_TURN,
    Workbench,
    goto,
    sign_in,
    wait_for_view,
)

Shoot = Callable[[Page, str], Path]


def test_a_bad_key_is_refused_with_the_reason_and_a_good_one_signs_in(
    page: Page, workbench: Workbench, shoot: Shoot
) -> None:
    page.goto(workbench.base_url + "/")
    expect(page.locator("h1")).to_have_text("Sign in")
    page.fill("#signin-key", "ms_" + "x" * 43)
    page.click(".signin-form button[type=submit]")
    expect(page.locator("#signin-error")).to_contain_text("The key was refused")
    assert page.evaluate("sessionStorage.getItem('memstrata.key')") is None
    shoot(page, "refused")
    page.fill("#signin-key", workbench.admin_key)
    page.click(".signin-form button[type=submit]")
    expect(page.locator("#nav a[aria-current=page]")).to_have_text("Overview")
    assert page.evaluate("sessionStorage.getItem('memstrata.key')") == workbench.admin_key
    # a reload keeps the tab signed in; signing out forgets the key
    page.reload()
    expect(page.locator("#sign-out")).to_be_visible()
    page.click("#sign-out")
    expect(page.locator("#signin-key")).to_be_visible()
    assert page.evaluate("sessionStorage.getItem('memstrata.key')") is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sign_in_page_shows_the_command_and_the_file_as_code(
    page: Page, workbench: Workbench, shoot: Shoot, lang: str
) -> None:
    page.goto(workbench.base_url + "/")
    if lang == "zh":
        page.click("#lang-switch")
    expect(page.locator("h1")).to_have_text({"en": "Sign in", "zh": "登录"}[lang])
    intro = page.locator(".signin-card > p").first
    assert "`" not in intro.inner_text()
    expect(intro.locator("code")).to_have_text(["admin.key", "memstrata keys create"])
    shoot(page, f"signin-{lang}")


def test_a_key_bound_to_one_user_sees_that_user_only(page: Page, workbench: Workbench) -> None:
    sign_in(page, workbench, key=workbench.reader_key)
    options = page.locator("#scope-user option").all_inner_texts()
    assert options == ["demo"]
    expect(page.locator(".who")).to_contain_text("reader")


def test_overview_shows_the_wake_up_block_exactly_with_its_tokens_and_the_counts(
    signed_in: Page, workbench: Workbench, shoot: Shoot
) -> None:
    page = signed_in
    wake = workbench.get("/v1/wake-up", user="demo", budget=800)
    assert page.locator("#wake-text").text_content() == wake["text"]
    expect(page.locator("#wake-tokens")).to_have_text(f"{wake['tokens']} of 800 tokens")
    identity = workbench.get("/v1/identity", user="demo")
    expect(page.locator(".identity-text")).to_have_text(identity["text"])
    stats = workbench.get("/v1/stats", user="demo")
    counts = dict(
        zip(
            page.locator(".stats dt").all_inner_texts(),
            page.locator(".stats dd").all_inner_texts(),
            strict=True,
        )
    )
    assert counts["Turns (episodes)"] == str(stats["episodes"])
    assert counts["Current facts"] == str(stats["facts_current"])
    assert counts["Superseded facts"] == str(stats["facts_superseded"]) == "1"
    sizes = dict(
        zip(
            page.locator(".sizes dt").all_inner_texts(),
            page.locator(".sizes dd").all_inner_texts(),
            strict=True,
        )
    )
    turns = stats["bytes"]["episode"]
    assert sizes["turns"] == (f"{turns} bytes" if turns < 1024 else f"{turns / 1024:.1f} KiB")
    assert len(sizes) == len(stats["bytes"])
    shoot(page, "overview")
    # a smaller budget: the block the API gives at that budget
    page.fill("#wake-budget", "120")
    page.press("#wake-budget", "Enter")
    page.wait_for_url(lambda url: url.endswith("#/overview?budget=120"))
    wait_for_view(page, "overview")
    small = workbench.get("/v1/wake-up", user="demo", budget=120)
    expect(page.locator("#wake-tokens")).to_have_text(f"{small['tokens']} of 120 tokens")
    assert page.locator("#wake-text").text_content() == small["text"]


def _documents(workbench: Workbench) -> list[dict[str, object]]:
    page = workbench.get("/v1/list", user="demo", kind="document", limit=1000)
    return [d for d in page["items"] if d["doc_kind"] in ("topic", "essentials")]


def test_topics_show_every_bullet_with_its_citations(
    signed_in: Page, workbench: Workbench, shoot: Shoot
) -> None:
    page = signed_in
    goto(page, workbench.base_url, "topics")
    docs = _documents(workbench)
    assert any(d["doc_kind"] == "topic" for d in docs)
    for doc in docs:
        card = page.locator(f'article.document[data-key="{doc["key"]}"]')
        expect(card).to_have_count(1)
        bullets = [b for s in doc["content"]["sections"] for b in s["bullets"]]  # type: ignore[index]
        expect(card.locator("li.bullet")).to_have_count(len(bullets))
        for bullet in bullets:
            item = card.locator(f'li.bullet[data-id="{bullet["id"]}"]')
            expect(item.locator(".stored-text")).to_have_text(bullet["text"])
            cited = [c.rsplit(":", 1)[-1] for c in bullet["citations"]]
            markers = item.locator("a.cite")
            assert [
                markers.nth(i).get_attribute("data-episode") for i in range(len(cited))
            ] == cited
    shoot(page, "topics")
    # one document on its own page
    page.click('article.document[data-key="work"] h2 a')
    wait_for_view(page, "topics")
    expect(page.locator("h1")).to_have_text("work")
    expect(page.locator("article.document")).to_have_count(1)


def test_a_citation_opens_the_cited_turns_in_their_session_highlighted(
    signed_in: Page, workbench: Workbench, shoot: Shoot
) -> None:
    page = signed_in
    goto(page, workbench.base_url, "topics")
    work = next(d for d in _documents(workbench) if d["key"] == "work")
    bullet = next(
        b
        for s in work["content"]["sections"]  # type: ignore[index]
        for b in s["bullets"]
        if len(b["citations"]) > 1
    )
    cited = bullet["citations"][-1].rsplit(":", 1)[-1]
    episode = workbench.get(f"/v1/items/{cited}", user="demo")
    page.locator(f'li.bullet[data-id="{bullet["id"]}"] a.cite').last.click()
    page.wait_for_url(lambda url: url.endswith(f"#/episodes/{episode['session_id']}?hl={cited}"))
    wait_for_view(page, "episodes")
    turn = page.locator(f"#turn-{cited}")
    expect(turn).to_have_class(
        "turn role-user highlight".replace("role-user", f"role-{episode['role']}")
    )
    expect(turn.locator(".turn-text")).to_have_text(episode["text"])
    expect(turn).to_be_focused()
    expect(turn).to_be_in_viewport()
    expect(page.locator(".turn.highlight")).to_have_count(1)
    expect(page.locator("#nav a[aria-current=page]")).to_have_text("Episodes")
    shoot(page, "cited-turn")
    # a fact's sources lead to the same place
    goto(page, workbench.base_url, "facts")
    fact_id = workbench.ids["replacement"]
    page.locator(f'li.fact[data-id="{fact_id}"] a.cite').first.click()
    page.wait_for_url(lambda url: f"#/episodes/{workbench.ids['moved_session']}?hl=" in url)
    wait_for_view(page, "episodes")
    expect(page.locator(".turn.highlight .turn-text")).to_have_text(MOVED_TURN)


def test_facts_filter_by_category_topic_and_validity(
    signed_in: Page, workbench: Workbench, shoot: Shoot
) -> None:
    page = signed_in
    goto(page, workbench.base_url, "facts")
    current = workbench.get("/v1/list", user="demo", kind="fact", limit=1000)["items"]
    live = [f for f in current if not f["superseded_by"] and not f["valid_to"]]
    expect(page.locator("li.fact")).to_have_count(len(live))
    assert workbench.ids["superseded"] not in page.locator("li.fact").evaluate_all(
        "items => items.map(i => i.dataset.id)"
    )
    shoot(page, "current")
    page.select_option("#facts-category", "personal")
    page.click(".filters button[type=submit]")
    page.wait_for_url(lambda url: url.endswith("#/facts?category=personal"))
    wait_for_view(page, "facts")
    personal = [f for f in live if f["category"] == "personal"]
    expect(page.locator("li.fact")).to_have_count(len(personal))
    page.select_option("#facts-category", "")
    page.select_option("#facts-topic", "home")
    page.select_option("#facts-valid", "superseded")
    page.click(".filters button[type=submit]")
    page.wait_for_url(lambda url: url.endswith("#/facts?topic=home&valid=superseded"))
    wait_for_view(page, "facts")
    old = page.locator(f'li.fact[data-id="{workbench.ids["superseded"]}"]')
    expect(page.locator("li.fact")).to_have_count(1)
    expect(old.locator(".fact-text")).to_have_text("Lin Wei lives in Shenzhen (住在深圳)")
    expect(old.locator(".superseded")).to_contain_text("Superseded on 1 Jun 2026")
    expect(old.locator(".replacement")).to_have_text("Lin Wei lives in Hangzhou (住在杭州)")
    shoot(page, "superseded")
    # the replacement opens among all facts, highlighted
    old.locator(".replacement a").click()
    replacement = page.locator(f'li.fact[data-id="{workbench.ids["replacement"]}"]')
    expect(replacement).to_have_class("card fact highlight")
    expect(replacement).to_be_focused()


def test_a_fact_shows_the_time_it_speaks_of_and_its_slot_and_filters_by_health_and_slot(
    signed_in: Page, workbench: Workbench, shoot: Shoot
) -> None:
    page = signed_in
    goto(page, workbench.base_url, "facts")
    page.select_option("#facts-category", "health")
    page.click(".filters button[type=submit]")
    page.wait_for_url(lambda url: url.endswith("#/facts?category=health"))
    wait_for_view(page, "facts")
    fact = page.locator(f'li.fact[data-id="{workbench.ids["allergy"]}"]')
    health = workbench.get("/v1/facts", user="demo", category="health")["items"]
    assert len(health) == 2  # the sample's allergy and the one with a time
    expect(page.locator("li.fact")).to_have_count(2)
    expect(fact.locator(".fact-text")).to_have_text(ALLERGY_FACT)
    expect(fact.locator(".badge").first).to_have_text("health")
    expect(fact.locator(".badge.slot")).to_have_text("allergy:shrimp")
    expect(fact.locator(".fact-when")).to_have_text(
        "Speaks of: 上个月 last month (1 May 2026 – 31 May 2026)"
    )
    assert fact.locator(".when-text").text_content() == "上个月 last month"
    when_title = fact.locator(".fact-when").get_attribute("title") or ""
    assert "2026-05-01T00:00:00.000000Z" in when_title
    shoot(page, "health")
    # the slot filter: a kind, then a whole slot, kept in the address
    page.select_option("#facts-category", "")
    page.fill("#facts-slot", "allergy")
    page.click(".filters button[type=submit]")
    page.wait_for_url(lambda url: url.endswith("#/facts?slot=allergy"))
    wait_for_view(page, "facts")
    expect(page.locator("li.fact")).to_have_count(2)  # allergy:peanuts, allergy:shrimp
    expect(page.locator("#facts-slot")).to_have_value("allergy")
    goto(page, workbench.base_url, "facts?slot=allergy:dust", view="facts")
    expect(page.locator("li.fact")).to_have_count(0)
    goto(page, workbench.base_url, "facts?slot=allergy:shrimp", view="facts")
    expect(page.locator("li.fact")).to_have_count(1)
    # in Chinese
    page.click("#lang-switch")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    wait_for_view(page, "facts")
    fact = page.locator(f'li.fact[data-id="{workbench.ids["allergy"]}"]')
    expect(fact.locator(".badge").first).to_have_text("健康")
    expect(fact.locator(".fact-when")).to_contain_text("所指时间")
    expect(page.locator('#facts-category option[value="health"]')).to_have_text("健康")
    shoot(page, "health-zh")
    page.click("#lang-switch")


def test_episodes_list_sessions_by_date_and_show_turns_verbatim(
    signed_in: Page, workbench: Workbench, shoot: Shoot
) -> None:
    page = signed_in
    goto(page, workbench.base_url, "episodes")
    episodes = workbench.get("/v1/list", user="demo", kind="episode", limit=1000)["items"]
    sessions = {e["session_id"] for e in episodes}
    expect(page.locator("li.session")).to_have_count(len(sessions))
    days = page.locator(".day h2").all_inner_texts()
    assert days[0] == "1 Jun 2026"  # newest first
    shoot(page, "sessions")
    page.click("a.session-link >> text=Session 2026-03-02")
    wait_for_view(page, "episodes")
    expect(page.locator("h1")).to_have_text("Session 2026-03-02")
    turns = sorted(
        (e for e in episodes if e["session_id"] == "2026-03-02"), key=lambda e: (e["time"], e["id"])
    )
    expect(page.locator("li.turn")).to_have_count(len(turns))
    assert page.locator("li.turn .turn-text").all_text_contents() == [t["text"] for t in turns]
    expect(page.locator("li.turn.highlight")).to_have_count(0)


def test_stored_markup_is_shown_as_text_and_never_runs(
    signed_in: Page, workbench: Workbench, shoot: Shoot
) -> None:
    page = signed_in
    turn_id = workbench.ids["markup_turn"]
    goto(page, workbench.base_url, f"episodes/2026-06-01?hl={turn_id}", view="episodes")
    turn = page.locator(f"#turn-{turn_id}")
    assert turn.locator(".turn-text").text_content() == MARKUP_TURN
    expect(turn.locator("img, script")).to_have_count(0)
    goto(page, workbench.base_url, "facts?category=other", view="facts")
    fact = page.locator(f'li.fact[data-id="{workbench.ids["markup_fact"]}"]')
    assert fact.locator(".fact-text").text_content() == MARKUP_FACT
    expect(fact.locator("b")).to_have_count(0)
    fact.locator(".fact-text").hover()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src=x]").count() == 0
    shoot(page, "markup-fact")


def test_the_keyboard_reaches_everything_and_dialogs_keep_and_return_focus(
    signed_in: Page, workbench: Workbench
) -> None:
    page = signed_in
    page.reload()
    wait_for_view(page, "overview")
    page.keyboard.press("Tab")
    expect(page.locator(".skip-link")).to_be_focused()
    expect(page.locator(".skip-link")).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.locator("#main")).to_be_focused()
    # the navigation is made of links, reachable in order
    page.focus("#nav a[data-route=facts]")
    page.keyboard.press("Enter")
    wait_for_view(page, "facts")
    # the About dialog: focus inside, Tab stays inside, Escape closes and returns focus
    page.focus("#help-open")
    page.keyboard.press("Enter")
    dialog = page.locator("dialog.dialog")
    expect(dialog).to_be_visible()
    for _ in range(4):
        page.keyboard.press("Tab")
        assert page.evaluate("document.querySelector('dialog').contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(page.locator("#help-open")).to_be_focused()
    # a visible focus ring
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"


def test_an_unknown_route_and_a_missing_topic_say_so(signed_in: Page, workbench: Workbench) -> None:
    page = signed_in
    page.goto(f"{workbench.base_url}/#/nowhere")
    expect(page.locator("h1")).to_have_text("There is no page at #/nowhere.")
    goto(page, workbench.base_url, "topics/no-such-topic", view="topics")
    expect(page.locator(".notice.error")).to_have_text(
        "There is no topic document no-such-topic in this scope."
    )


def test_another_user_and_a_thread_are_picked_in_the_header(
    signed_in: Page, workbench: Workbench
) -> None:
    page = signed_in
    page.select_option("#scope-user", "alice")
    wait_for_view(page, "overview", "alice")
    expect(page.locator(".subtitle")).to_have_text("Memory of alice")
    threads = page.locator("#scope-thread option").all_inner_texts()
    assert threads == ["All threads", "school"]
    goto(page, workbench.base_url, "episodes")
    alice = workbench.get("/v1/list", user="alice", kind="episode")["items"]
    expect(page.locator("li.session")).to_have_count(len({e["session_id"] for e in alice}))
    # the choice is kept for the next visit
    page.reload()
    wait_for_view(page, "episodes", "alice")
    expect(page.locator("#scope-user")).to_have_value("alice")
    page.select_option("#scope-user", "demo")
    wait_for_view(page, "episodes", "demo")
    page.select_option("#scope-thread", "project-routes")
    page.wait_for_selector('.view[data-thread="project-routes"][data-state="ready"]')
    routes = workbench.get("/v1/list", user="demo", thread="project-routes", kind="episode")
    sessions = {e["session_id"] for e in routes["items"]}
    expect(page.locator("li.session")).to_have_count(len(sessions))


def test_a_key_revoked_while_signed_in_returns_to_the_sign_in_form(
    page: Page, workbench: Workbench
) -> None:
    created = workbench.memory.keys.create("reader", ["demo"], name="revoked in a test")
    sign_in(page, workbench, key=created.secret)
    workbench.memory.keys.revoke(created.key.id)
    goto_facts = f"{workbench.base_url}/#/facts"
    page.goto(goto_facts)
    expect(page.locator("#signin-error")).to_have_text("Your key was refused. Sign in again.")
    assert page.evaluate("sessionStorage.getItem('memstrata.key')") is None


def test_a_tool_whose_module_is_not_installed_says_it_is_not_available(
    signed_in: Page, workbench: Workbench
) -> None:
    page = signed_in
    page.route("**/js/views/runs.js", lambda route: route.fulfill(status=404, body="Not Found"))
    page.goto(f"{workbench.base_url}/#/runs")
    expect(page.locator(".view[data-view=runs] .unavailable")).to_have_text(
        "This part of the workbench is not available in this installation."
    )
    expect(page.locator("#nav a[aria-current=page]")).to_have_text("Curation runs")
