"""The workbench page as the server serves it (no browser): at `/` on the API's origin,
without a key, with a strict Content-Security-Policy, fixed MIME types and revalidation;
everything it loads comes from this server; its scripts never parse stored text as HTML."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.routing import Mount

from memstrata.api import Memory
from memstrata.server.auth import LocalAuth
from memstrata.server.http import create_app
from memstrata.server.routes.web import WebFiles
from memstrata.web import static_dir
from tests.keyed import keyed_app

STATIC = static_dir()
SCRIPTS = sorted(STATIC.rglob("*.js"))
#: static imports of an ES module: `import ... from './x.js'` and `import('./x.js')`
IMPORT = re.compile(r"""(?:from\s+|import\s*\(\s*)['"](\.{1,2}/[^'"]+)['"]""")
#: ways of turning text into markup, or code into code, none of which the page may use
HTML_SINKS = re.compile(
    r"\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\s*\(|new\s+Function\b"
    r"|createContextualFragment|DOMParser"
)


@pytest.fixture
def anonymous(memory: Memory) -> Iterator[TestClient]:
    """A client with no key, of the app behind API keys."""
    with TestClient(keyed_app(memory)) as client:
        yield client


def test_the_page_is_served_at_the_root_without_a_key(anonymous: TestClient) -> None:
    r = anonymous.get("/")
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script type="module" src="/js/app.js">' in r.text
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["cache-control"] == "no-cache" and r.headers["etag"]
    # the memory itself still needs a key
    refused = anonymous.get("/v1/stats", params={"user": "demo"})
    assert refused.status_code == 401 and refused.json()["error"] == "UnauthenticatedError"


def test_a_query_string_on_the_page_is_not_refused_and_the_page_is_not_an_api_operation(
    anonymous: TestClient,
) -> None:
    assert anonymous.get("/", params={"lang": "zh"}).status_code == 200
    assert anonymous.head("/").status_code == 200
    paths = anonymous.get("/openapi.json").json()["paths"]
    assert "/" not in paths and not any(p.startswith(("/js", "/css")) for p in paths)


def test_an_unchanged_file_is_revalidated_not_sent_again(anonymous: TestClient) -> None:
    first = anonymous.get("/js/app.js")
    assert first.status_code == 200
    again = anonymous.get("/js/app.js", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and not again.content


def _urls_in_page(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"#][^"]*)"', html)


def test_everything_the_page_loads_comes_from_this_server_with_its_type(
    anonymous: TestClient,
) -> None:
    html = anonymous.get("/").text
    urls = _urls_in_page(html)
    assert {"/css/app.css", "/js/app.js", "/favicon.svg"} <= set(urls), urls
    types = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}
    for url in urls:
        if url == "/docs":  # the noscript pointer to the API's pages
            continue
        assert url.startswith("/") and not url.startswith("//"), url
        got = anonymous.get(url)
        assert got.status_code == 200, url
        assert got.headers["content-type"].startswith(types[Path(url).suffix]), url
        assert "content-security-policy" in got.headers, url


def test_every_module_the_scripts_import_is_served_as_javascript(anonymous: TestClient) -> None:
    seen = 0
    for script in SCRIPTS:
        url = "/" + script.relative_to(STATIC).as_posix()
        for target in IMPORT.findall(script.read_text(encoding="utf-8")):
            if "${" in target:  # a view loaded by name: each view is checked as a script
                continue
            resolved = (Path(url).parent / target).resolve().as_posix()
            got = anonymous.get(resolved)
            assert got.status_code == 200, f"{url} imports {target} ({resolved})"
            assert got.headers["content-type"] == "text/javascript; charset=utf-8"
            seen += 1
    assert seen >= 10


@pytest.mark.parametrize(
    "path",
    [
        "/js/../../__init__.py",
        "/js/%2e%2e/%2e%2e/__init__.py",
        "/css/",
        "/js/nothing.js",
        "/index.html.bak",
        "/static/index.html",
    ],
)
def test_nothing_outside_the_page_s_files_is_served(anonymous: TestClient, path: str) -> None:
    assert anonymous.get(path).status_code in (401, 404), path


def test_only_the_page_s_kinds_of_file_are_served(tmp_path: Path) -> None:
    (tmp_path / "app.js").write_text("export const x = 1;\n", encoding="utf-8")
    (tmp_path / "notes.py").write_text("SECRET = 1\n", encoding="utf-8")
    (tmp_path / "data.json").write_text("{}\n", encoding="utf-8")
    app = Starlette(routes=[Mount("/js", WebFiles(directory=tmp_path))])
    with TestClient(app) as client:
        served = client.get("/js/app.js")
        assert served.status_code == 200
        assert served.headers["content-type"] == "text/javascript; charset=utf-8"
        assert client.get("/js/notes.py").status_code == 404
        assert client.get("/js/data.json").status_code == 404


def test_local_mode_serves_the_page_to_the_loopback_only(memory: Memory) -> None:
    with TestClient(create_app(memory, auth=LocalAuth()), base_url="http://127.0.0.1:8765") as c:
        assert c.get("/").status_code == 200
        assert c.get("/v1/stats", params={"user": "demo"}).status_code == 200
        rebound = c.get("/", headers={"Host": "evil.example"})
        assert rebound.status_code == 403


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(STATIC).as_posix())
def test_no_script_turns_text_into_markup(script: Path) -> None:
    code = script.read_text(encoding="utf-8")
    # comments may name the sinks (dom.js says it never uses them)
    code = re.sub(r"^\s*//.*$", "", code, flags=re.MULTILINE)
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.DOTALL)
    found = HTML_SINKS.findall(code)
    assert not found, f"{script.name} uses {found}: build elements with dom.js h()"


def test_the_page_has_no_inline_script_or_style_and_names_no_other_site() -> None:
    for path in [*STATIC.rglob("*.html"), *STATIC.rglob("*.css"), *SCRIPTS]:
        text = path.read_text(encoding="utf-8")
        text = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert not re.search(r"https?://", text), path
        if path.suffix == ".css":  # nothing fetched from a stylesheet: no fonts, no images
            assert "@import" not in text and "url(" not in text, path
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, flags=re.DOTALL)
    assert scripts and all('src="' in attrs and not body.strip() for attrs, body in scripts)
    assert "<style" not in html and " style=" not in html
    assert not re.search(r"\son[a-z]+\s*=", html), "inline event handler"
