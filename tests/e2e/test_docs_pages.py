"""`/docs` and `/redoc` load only from this server: every URL in the pages is same-origin and
answers, so the pages work offline."""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.errors import ConfigError
from memstrata.server.docs_assets import install_docs

URL_IN_PAGE = re.compile(r"""(?:src|href|spec-url)="([^"]*)"|url: '([^']*)'""")
CONTENT_TYPES = {
    ".js": ("javascript",),
    ".css": ("text/css",),
    ".png": ("image/png",),
    ".json": ("application/json",),
}


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_pages_load_everything_from_this_server(client: TestClient, page: str) -> None:
    r = client.get(page)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    html = r.text
    assert "http://" not in html and "https://" not in html and "//cdn" not in html
    urls = [a or b for a, b in URL_IN_PAGE.findall(html)]
    assert "/openapi.json" in urls and len(urls) >= 3, urls
    for url in urls:
        assert url.startswith("/") and not url.startswith("//"), url
        got = client.get(url)
        assert got.status_code == 200, url
        suffix = url[url.rfind(".") :]
        assert any(t in got.headers["content-type"] for t in CONTENT_TYPES[suffix]), url
        assert len(got.content) > 100, url


def test_swagger_ui_reads_openapi_31_and_sends_nothing_to_a_validator(client: TestClient) -> None:
    assert client.get("/openapi.json").json()["openapi"].startswith("3.1")
    html = client.get("/docs").text
    assert '"validatorUrl": null' in html
    bundle = client.get("/docs/assets/swagger-ui-bundle.js").text
    # Swagger UI 5 (OpenAPI 3.1 support) names its version in the bundle
    assert re.search(r'"5\.\d+\.\d+"', bundle)


def test_assets_are_counted_under_their_mount(client: TestClient) -> None:
    client.get("/docs/assets/swagger-ui.css")
    client.get("/openapi.json")
    metrics = client.get("/metrics").text
    assert 'route="/docs/assets",status="200"' in metrics
    assert 'route="/openapi.json",status="200"' in metrics
    assert 'route="unmatched",status="200"' not in metrics


def test_docs_pages_and_assets_are_not_in_the_api_schema(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith(("/docs", "/redoc"))]


def test_a_missing_asset_is_a_404_in_the_one_error_shape(client: TestClient) -> None:
    r = client.get("/docs/assets/no-such-file.js")
    assert r.status_code == 404 and r.json()["error"] == "NotFoundError"


def test_an_app_with_the_cdn_pages_is_refused() -> None:
    with pytest.raises(ConfigError, match="/docs"):
        install_docs(FastAPI())


def test_the_pages_and_their_assets_need_no_key_and_metrics_does(memory: Memory) -> None:
    from fastapi.testclient import TestClient

    from tests.keyed import keyed_app

    with TestClient(keyed_app(memory)) as anonymous:
        for url in ("/docs", "/redoc", "/docs/assets/swagger-ui-bundle.js", "/openapi.json"):
            assert anonymous.get(url).status_code == 200, url
        assert anonymous.get("/metrics").status_code == 401
        assert anonymous.get("/docs/assets/../v1/stats?user=alice").status_code in (401, 404)
