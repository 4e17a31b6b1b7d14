"""Every browsing view on a laptop and a phone-sized window, in English and in Chinese: it
renders, nothing overflows sideways, the navigation collapses on the phone, Chinese text has a
real font, every string exists in both languages; and local mode signs in without a key.
Each view's screenshot is saved (see conftest: build/screenshots/)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from memstrata.server.auth import LocalAuth
from memstrata.server.http import create_app
from tests.e2e.live import live_server
from tests.e2e.web.conftest import LAPTOP, PHONE, Workbench, goto, sign_in, wait_for_view

Shoot = Callable[[Page, str], Path]

#: every browsing view, with a route that shows it with content
TOUR = (
    ("overview", "overview"),
    ("topics", "topics"),
    ("topic", "topics/work"),
    ("facts", "facts?valid=all"),
    ("sessions", "episodes"),
    ("session", "episodes/2026-03-02"),
)
NAV_ZH = ["概览", "主题", "事实", "对话记录", "搜索与上下文", "整理任务", "审核"]


@pytest.fixture(params=["laptop", "phone"])
def sized_page(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    size = LAPTOP if request.param == "laptop" else PHONE
    context = browser.new_context(viewport=size, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, errors


def _no_sideways_overflow(page: Page) -> None:
    width = page.evaluate("document.documentElement.clientWidth")
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the page is {scroll}px wide in a {width}px window"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_view_renders_at_each_size_and_language(
    sized_page: Page, workbench: Workbench, shoot: Shoot, lang: str
) -> None:
    page = sized_page
    sign_in(page, workbench)
    phone = page.viewport_size == PHONE
    if lang == "zh":
        page.click("#lang-switch")
        expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
        wait_for_view(page, "overview", "demo")
    for name, route in TOUR:
        goto(page, workbench.base_url, route)
        _no_sideways_overflow(page)
        shoot(page, name)
    if phone:
        nav = page.locator("#nav")
        expect(nav).to_be_hidden()
        toggle = page.locator("#nav-toggle")
        expect(toggle).to_have_attribute("aria-expanded", "false")
        toggle.click()
        expect(nav).to_be_visible()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        expect(page.locator("#nav a").first).to_be_focused()
        shoot(page, "menu-open")
        page.keyboard.press("Escape")
        expect(nav).to_be_hidden()
        expect(toggle).to_be_focused()
        toggle.click()
        page.locator("#nav a[data-route=facts]").click()
        wait_for_view(page, "facts")
        expect(nav).to_be_hidden()
    else:
        expect(page.locator("#nav")).to_be_visible()
        expect(page.locator("#nav-toggle")).to_be_hidden()
    if lang == "zh":
        texts = page.locator("#nav a").all_inner_texts()
        assert texts == NAV_ZH
    # every string the visited views use exists in both languages
    lacking = page.evaluate("import('/js/i18n.js').then(m => m.missing())")
    assert lacking == {"en": [], "zh": []}, lacking


def test_chinese_is_kept_across_visits_and_renders_with_a_cjk_font(
    page: Page, workbench: Workbench, shoot: Shoot
) -> None:
    sign_in(page, workbench)
    page.click("#lang-switch")
    wait_for_view(page, "overview", "demo")
    expect(page.locator("h1")).to_have_text("概览")
    expect(page.locator("#wake-tokens")).to_contain_text("个 token")
    page.reload()
    wait_for_view(page, "overview", "demo")
    expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
    expect(page.locator("#lang-switch")).to_have_text("English")
    goto(page, workbench.base_url, "topics/work")
    # a Chinese run of text is drawn with a font that has the glyphs (no tofu): its width
    # differs from the same count of a character no font has
    widths = page.evaluate(
        """() => {
            const probe = (text) => {
                const s = document.createElement('span');
                s.textContent = text;
                document.querySelector('#main').appendChild(s);
                const w = s.getBoundingClientRect().width;
                s.remove();
                return w;
            };
            return [probe('张敏张敏张敏'), probe('\\u{10FFFD}'.repeat(6)), probe('WWWWWW')];
        }"""
    )
    cjk, missing_glyph, latin = widths
    assert cjk > 0 and abs(cjk - missing_glyph) > 1, widths
    assert cjk != latin
    shoot(page, "zh-topic")
    page.click("#lang-switch")
    wait_for_view(page, "topics")
    expect(page.locator("html")).to_have_attribute("lang", "en")


def test_local_mode_signs_in_without_a_key(page: Page, workbench: Workbench, shoot: Shoot) -> None:
    app = create_app(workbench.memory, auth=LocalAuth())
    with live_server(app) as client:
        page.goto(f"{client.base_url}/#/overview")
        wait_for_view(page, "overview")
        expect(page.locator(".who")).to_have_text("Local mode: no key needed")
        expect(page.locator("#sign-out")).to_have_count(0)
        expect(page.locator("#signin-key")).to_have_count(0)
        shoot(page, "local")
