"""The web workbench on the API's origin: ``/`` serves the page, ``/css/``, ``/js/`` and
``/favicon.svg`` its files (from :func:`memstrata.web.static_dir`).

The files carry no memory, so they are served without a key (``memstrata.web.WEB_PATHS`` and
``WEB_PREFIXES`` are public in :mod:`memstrata.server.auth`); the page then calls the API with
the key the person signs in with. Every answer carries a strict Content-Security-Policy
(only this origin's scripts, styles and connections; no inline script, no frames, no plugins),
``nosniff`` and a fixed MIME type per suffix (a module script must be served as JavaScript);
``Cache-Control: no-cache`` with an ETag, so a browser revalidates and an upgrade shows at the
next load. Other suffixes, directories and paths outside the directory are 404.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from memstrata.web import WEB_PREFIXES, static_dir

CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
#: the MIME type of each suffix served; any other suffix is not served
MEDIA_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
SECURITY_HEADERS: Final = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-cache",
}


def _dress(response: Response, path: str | os.PathLike[str]) -> Response:
    media_type = MEDIA_TYPES[Path(path).suffix]
    if response.status_code == 200:
        response.headers["content-type"] = media_type
    response.headers.update(SECURITY_HEADERS)
    return response


class WebFiles(StaticFiles):
    """Static files with the workbench's headers, only of the suffixes of
    :data:`MEDIA_TYPES`."""

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        if Path(full_path).suffix not in MEDIA_TYPES:
            return Response("Not Found", status_code=404, media_type="text/plain")
        return _dress(super().file_response(full_path, stat_result, scope, status_code), full_path)


def install_web(app: FastAPI) -> None:
    """Serve the workbench on ``app``: the page at ``/``, its files under ``/css``, ``/js``."""
    directory = static_dir()
    index = directory / "index.html"
    favicon = directory / "favicon.svg"
    files = WebFiles(directory=directory)

    def page(request: Request) -> Response:
        return files.file_response(index, os.stat(index), request.scope)

    def icon(request: Request) -> Response:
        return _dress(FileResponse(favicon), favicon)

    # plain routes, not API operations: not in the OpenAPI document, and a query string
    # (the page's own) is not refused as an unknown parameter
    app.router.add_route("/", page, methods=["GET", "HEAD"], include_in_schema=False)
    app.router.add_route("/favicon.svg", icon, methods=["GET", "HEAD"], include_in_schema=False)
    for prefix in WEB_PREFIXES:
        name = prefix.strip("/")
        app.mount(f"/{name}", WebFiles(directory=directory / name), name=f"web-{name}")
