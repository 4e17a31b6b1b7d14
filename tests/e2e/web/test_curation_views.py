"""The workbench's runs and topics views in headless Chromium, against a server whose chat model
fails every call: automatic runs are listed and marked beside the runs a person starts, a run
says what the model could not do and that rules did it, and the topics of one thread (a
consolidation asked for on the thread) are named apart from the user's own, in the topics
view and in search, their links acting on the thread's document."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.llm.fake import ByPrompt, fake_openai_server
from memstrata.model import Scope
from memstrata.server.auth import KeyAuth
from memstrata.server.http import create_app
from memstrata.settings import OpenAILLMSettings, load_settings
from tests.e2e.live import live_server
from tests.e2e.web.test_tools import Server, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["open_page"]  # the page fixture, over this module's server

TRIP = Scope("demo", "trip")


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    """A live server over the sample memory of ``demo`` whose chat model answers 500."""
    with fake_openai_server(ByPrompt(fail_after=0)) as url:  # type: ignore[arg-type]
        settings = load_settings(
            data_dir=tmp_path / "data",
            llm=OpenAILLMSettings(base_url=url, model="fake", max_retries=0),
        )
        with Memory.open(settings=settings, embedder=HashingEmbedder(dim=64)) as memory:
            memory.load_sample("demo")
            admin = memory.keys.create("admin", None, name="views tests").secret
            app = create_app(memory, auth=KeyAuth(memory.keys))
            with live_server(app, headers={"Authorization": f"Bearer {admin}"}) as client:
                test = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")
                yield Server(str(client.base_url).rstrip("/"), admin, client, memory, test)


def test_automatic_runs_are_marked_and_say_what_the_model_could_not_do(
    server: Server, open_page: Callable[..., Page]
) -> None:
    server.memory.remember(
        [{"speaker": "Lin Wei", "text": "I'm planning to visit Kyoto next spring."}], TRIP
    )
    server.memory.curate_quiet(TRIP)  # what the server's queue does once the thread is quiet
    page = open_page("#/runs")
    past = page.locator(".tools-pastrun")
    past.nth(1).wait_for()
    assert past.count() == 2
    assert page.locator('.tools-pastrun [data-trigger="auto"]').count() == 2
    extraction = page.locator(".tools-pastrun", has=page.locator('[data-thread="trip"]'))
    assert extraction.count() == 1
    note = extraction.locator(".run-fallback").inner_text()
    assert note.startswith("The chat model failed at extract: ")
    assert note.endswith("Rules did that work instead.")
    server.shot(page, "runs-automatic")
    page.locator('select[name="kind"]').select_option("extract")
    page.get_by_role("button", name="Start run").click()
    page.locator('.tools-run [data-state="done"]').wait_for()
    assert page.locator('.tools-run [data-trigger="request"]').count() == 1
    page.locator(".tools-run .run-fallback", has_text="Rules did that work instead.").wait_for()
    page.locator('.tools-pastrun [data-trigger="request"]').wait_for()
    server.shot(page, "run-request-fallback")
    chinese = open_page("#/runs", lang="zh")
    chinese.locator('.tools-pastrun [data-trigger="auto"]', has_text="自动").first.wait_for()
    chinese.locator(".run-fallback", has_text="这些工作已改由规则完成").first.wait_for()
    server.shot(chinese, "runs-zh")


def test_a_failed_run_says_why(
    server: Server, open_page: Callable[..., Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(server.memory, "consolidate", broken)
    server.memory.remember([{"speaker": "Lin Wei", "text": "I love Kyoto."}], TRIP)
    with pytest.raises(RuntimeError):
        server.memory.curate_quiet(TRIP)
    page = open_page("#/runs")
    error = page.locator(".tools-pastrun:has(.state-failed) .run-error")
    error.wait_for()
    assert error.inner_text() == "Failed: RuntimeError: disk on fire"


def topics(page: Page, server: Server, route: str = "topics") -> Page:
    """``page`` (signed in) moved to the topics view, once it is drawn."""
    page.goto(f"{server.base_url}/#/{route}")
    page.locator('.view[data-view="topics"][data-state="ready"]').wait_for()
    return page


def test_a_thread_s_documents_are_named_apart_from_the_user_s(
    server: Server, open_page: Callable[..., Page]
) -> None:
    server.memory.remember(
        [{"speaker": "Lin Wei", "text": "I really love hiking in the mountains."}], TRIP
    )
    server.memory.curate(TRIP, use_llm=False)  # asked for on the thread: its own set
    page = topics(open_page("#/runs"), server)  # all threads
    cards = page.locator("article.document.doc-essentials")
    assert cards.count() == 2
    assert cards.nth(0).get_attribute("data-thread") == ""  # the user's own first
    assert cards.nth(0).locator(".doc-scope").count() == 0
    theirs = cards.nth(1)
    assert theirs.get_attribute("data-thread") == "trip"
    assert theirs.locator(".doc-scope").inner_text() == " · thread trip"
    toc = page.locator("nav.toc li[data-thread='trip']").all_inner_texts()
    assert toc and all(text.endswith("(thread trip)") for text in toc)
    server.shot(page, "topics-threads")
    theirs.get_by_role("link", name=re.compile("Edit the document essentials")).click()
    page.locator(".tools-edit .tools-muted", has_text="user demo, thread trip").wait_for()
    page.locator(".tools-editor textarea, .tools-editor input").first.wait_for()
    values = page.locator(".tools-editor textarea, .tools-editor input").evaluate_all(
        "els => els.map(e => e.value)"
    )
    assert any("hiking" in v for v in values)  # the thread's document, not the user's
    topics(page, server, "topics/essentials?thread=trip")
    page.locator("article.document[data-thread='trip']").wait_for()
    assert page.locator("article.document").count() == 1
    search = open_page("#/search?q=hiking%20mountains&granularity=topic")
    hit = search.locator(".tools-hit", has_text="thread trip").first
    hit.wait_for()  # a topic of the thread, found from the user's view, says whose it is
    opened = hit.locator("a.tools-link").first
    opened.wait_for()
    assert opened.get_attribute("href") == "#/edit/doc/preferences?thread=trip"
    threaded = topics(open_page("#/runs", thread="trip", lang="zh"), server)  # its own
    assert threaded.locator("article.document .doc-scope").count() == 0
    server.shot(threaded, "topics-thread-zh")
    server.memory.remember(
        [{"speaker": "Lin Wei", "text": "I love Kyoto."}], Scope("demo", "kyoto")
    )
    server.memory.curate_quiet(Scope("demo", "kyoto"))  # curated into the user's documents
    elsewhere = topics(open_page("#/runs", thread="kyoto"), server)
    elsewhere.locator(".notice", has_text="no documents of its own").wait_for()
