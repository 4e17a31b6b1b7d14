"""Fixtures for the workbench's end-to-end tests: a real server with sample memory, one headless
Chromium for the web tests and a fresh page per test.

Fixtures (one for the whole ``tests/e2e/web`` package unless said; package-wide, not
session-wide, so Playwright's event loop is gone before the tests after them run, which may
start loops of their own):

* ``workbench``: a :class:`Workbench`: a live server (``tests/e2e/live.py``) on a temporary
  data directory, behind API keys, holding the bilingual sample memory of ``demo`` (curated:
  topic documents, essentials, facts) plus a superseded fact, a turn and a fact made of markup
  and a second user ``alice`` (see :func:`_fill`). ``workbench.base_url``, ``.admin_key``
  (every user), ``.reader_key`` (``demo`` only), ``.api`` (an HTTP client with the admin key,
  to read what the page should show), ``.memory`` and the ids the fill made (``.ids``).
* ``browser``: headless Chromium: Debian's ``chromium`` (``$MEMSTRATA_CHROMIUM``, else
  ``chromium`` or ``chromium-browser`` on the PATH) driven by Playwright with
  ``executable_path``, so no browser is ever downloaded (``playwright install`` is never
  needed). With no browser, or no Playwright, every test here skips and says why.
* ``page`` (per test): a new browser context (1280x800, English) and its page; a script
  error on the page fails the test. ``phone_page``: the same at 390x844.
* ``signed_in`` (per test): ``page`` signed in with the admin key, user ``demo`` picked, on
  ``#/overview``.
* ``shoot`` (per test): ``shoot(page, "name")`` saves a full-page screenshot to
  :data:`SCREENSHOTS` as ``<test>-<name>.png`` and returns its path (a test's name is unique in
  the run, so parallel workers never write the same file); the run's summary prints the
  directory (``tests/conftest.py``).

Helpers: :func:`sign_in` (through the form), :func:`goto` (a route, waiting for its view),
:func:`wait_for_view` (the view root's ``data-state`` is ``ready`` once ``render`` is done).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.model import Scope
from memstrata.server.auth import KeyAuth
from memstrata.server.http import create_app
from memstrata.settings import load_settings
from tests.conftest import SCREENSHOTS
from tests.e2e.live import live_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
#: a stored turn that would run script if it were ever put through innerHTML
MARKUP_TURN = '<img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> 看我'
MOVED_TURN = "We moved to Hangzhou. 我们搬到杭州了。"
MARKUP_FACT = "<b onmouseover=\"window.__pwned=3\">bold</b> & 'quoted' 事实"
#: a health fact with the time it speaks of and the state it sets
ALLERGY_FACT = "Lin Wei is allergic to shrimp (对虾过敏)"


def find_chromium() -> str | None:
    """The browser to drive: ``$MEMSTRATA_CHROMIUM``, else Debian's ``chromium``."""
    named = os.environ.get("MEMSTRATA_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


NO_BROWSER = (
    "no Chromium to drive: install Debian's chromium package (`make test` does it when run "
    "as root: apt-get install chromium) or set MEMSTRATA_CHROMIUM to a Chromium binary"
)


@dataclass
class Workbench:
    base_url: str
    admin_key: str
    reader_key: str
    api: httpx2.Client
    memory: Memory
    ids: dict[str, Any] = field(default_factory=dict)

    def get(self, path: str, **params: Any) -> Any:
        """What the API answers (admin key), as JSON; the page must show the same."""
        r = self.api.get(path, params=params)
        r.raise_for_status()
        return r.json()


def _fill(memory: Memory) -> dict[str, Any]:
    """Sample memory for ``demo`` (curated), then what the tests look for: a fact superseded by
    a newer one, a turn and a fact made of markup, a health fact with a time and a slot, and
    a second user."""
    memory.load_sample("demo")
    ids: dict[str, Any] = {}
    moved_at = datetime(2026, 6, 1, 8, 30, tzinfo=UTC)
    moved = memory.remember(
        [
            {
                "speaker": "Lin Wei",
                "text": "We moved to Hangzhou. 我们搬到杭州了。",
                "time": moved_at,
            },
            {"speaker": "Lin Wei", "text": MARKUP_TURN, "time": moved_at},
        ],
        Scope("demo", "onboarding"),
        session_id="2026-06-01",
    )
    first = memory.list("demo", "episode", limit=1)[0]
    demo = Scope("demo", "onboarding")
    old = memory.add_fact(
        "Lin Wei lives in Shenzhen (住在深圳)",
        demo,
        category="personal",
        topic="home",
        sources=[first.id],
        valid_from=first.time,
    )
    new = memory.add_fact(
        "Lin Wei lives in Hangzhou (住在杭州)",
        demo,
        category="personal",
        topic="home",
        sources=[moved[0].id],
        valid_from=moved_at,
    )
    memory.update(old.id, "demo", superseded_by=new.id, valid_to=moved_at)
    markup = memory.add_fact(MARKUP_FACT, demo, category="other", sources=[moved[1].id])
    allergy = memory.add_fact(
        ALLERGY_FACT,
        demo,
        category="health",
        sources=[moved[0].id],
        slot="allergy:shrimp",
        when={"text": "上个月 last month", "start": "2026-05-01", "end": "2026-06-01"},
    )
    ids.update(
        allergy=allergy.id,
        superseded=old.id,
        replacement=new.id,
        markup_turn=moved[1].id,
        markup_fact=markup.id,
        moved_session="2026-06-01",
    )
    memory.remember(
        ["I'm Alice; I teach maths in Chengdu. 我喜欢喝茶。", "I prefer replies in Chinese."],
        Scope("alice", "school"),
    )
    memory.extract("alice")
    memory.consolidate("alice")
    return ids


@pytest.fixture(scope="package")
def workbench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workbench]:
    base = tmp_path_factory.mktemp("workbench")
    config = base / "config.toml"
    config.write_text("", encoding="utf-8")
    settings = load_settings(config_file=config, data_dir=base / "data", trace=True)
    with Memory.open(settings=settings, embedder=HashingEmbedder(dim=64)) as memory:
        ids = _fill(memory)
        admin = memory.keys.create("admin", None, name="workbench tests").secret
        reader = memory.keys.create("reader", ["demo"], name="demo reader").secret
        app = create_app(memory, auth=KeyAuth(memory.keys))
        with live_server(app, headers={"Authorization": f"Bearer {admin}"}) as client:
            yield Workbench(str(client.base_url).rstrip("/"), admin, reader, client, memory, ids)


@pytest.fixture(scope="package")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - the dev extra installs it
        pytest.skip("Playwright is not installed: pip install -e '.[dev]'")
    executable = find_chromium()
    if executable is None:
        pytest.skip(NO_BROWSER)
    args = ["--disable-dev-shm-usage", "--disable-gpu"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to run as root inside its sandbox
    with pytest.MonkeyPatch.context() as env:
        # Playwright's own browsers would live here: an empty directory, so the run proves
        # that none is needed (`playwright install` is never run)
        env.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path_factory.mktemp("no-browsers")))
        env.setenv("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(
                executable_path=executable, headless=True, args=args
            )
            try:
                yield launched
            finally:
                launched.close()


def _new_page(browser: Browser, viewport: dict[str, int]) -> Iterator[Page]:
    context = browser.new_context(viewport=viewport, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"script errors on the page: {errors}"


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    yield from _new_page(browser, LAPTOP)


@pytest.fixture
def phone_page(browser: Browser) -> Iterator[Page]:
    yield from _new_page(browser, PHONE)


def wait_for_view(page: Page, name: str, user: str | None = None) -> None:
    """Wait until the view ``name`` (of ``user``, if given) has rendered."""
    who = f'[data-user="{user}"]' if user else ""
    page.wait_for_selector(f'.view[data-view="{name}"]{who}[data-state="ready"]')


def goto(page: Page, base_url: str, route: str, view: str | None = None) -> None:
    """Open ``#/<route>`` and wait for its view to have rendered."""
    page.goto(f"{base_url}/#/{route}")
    wait_for_view(page, view or route.split("/", 1)[0].split("?", 1)[0])


def sign_in(page: Page, workbench: Workbench, key: str | None = None, user: str = "demo") -> None:
    """Sign in through the form and pick ``user``; ends on the overview."""
    page.goto(f"{workbench.base_url}/#/overview")
    page.fill("#signin-key", key or workbench.admin_key)
    page.click(".signin-form button[type=submit]")
    page.wait_for_selector("#scope-user")
    if page.input_value("#scope-user") != user:
        page.select_option("#scope-user", user)
    wait_for_view(page, "overview", user)


@pytest.fixture
def signed_in(page: Page, workbench: Workbench) -> Page:
    sign_in(page, workbench)
    return page


@pytest.fixture
def shoot(request: pytest.FixtureRequest) -> Callable[[Page, str], Path]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    test = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")

    def save(page: Page, name: str) -> Path:
        path = SCREENSHOTS / f"{test}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``) every web test goes to one worker, so only one
    worker starts the workbench's server and browser."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.xdist_group("workbench"))
