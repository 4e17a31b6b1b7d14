"""The API's documentation pages, ``/docs`` (Swagger UI) and ``/redoc``, served with their
scripts and styles from this server: nothing is fetched from a CDN, so the pages work offline.

The assets (Swagger UI 5, which reads OpenAPI 3.1, and ReDoc) come from the
``fastapi-offline`` package's ``static`` directory, served under :data:`ASSETS_PATH`. Swagger
UI's online validator badge is turned off, as it would send the spec's address elsewhere.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Final

from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, swagger_ui_default_parameters
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from memstrata.errors import ConfigError

ASSETS_PATH: Final = "/docs/assets"
#: the asset files the pages load
ASSETS: Final = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")

router = APIRouter(include_in_schema=False)


def assets_dir() -> Path:
    """The directory holding :data:`ASSETS`, checked."""
    directory = Path(str(resources.files("fastapi_offline") / "static"))
    missing = [name for name in ASSETS if not (directory / name).is_file()]
    if missing:
        raise ConfigError(
            f"the documentation assets {', '.join(missing)} are missing from {directory}; "
            "reinstall memstrata (it depends on fastapi-offline)"
        )
    return directory


def _base(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


@router.get("/docs")
def swagger_ui(request: Request) -> HTMLResponse:
    base = _base(request)
    return get_swagger_ui_html(
        openapi_url=base + request.app.openapi_url,
        title=f"{request.app.title} API",
        swagger_js_url=f"{base}{ASSETS_PATH}/swagger-ui-bundle.js",
        swagger_css_url=f"{base}{ASSETS_PATH}/swagger-ui.css",
        swagger_favicon_url=f"{base}{ASSETS_PATH}/favicon.png",
        swagger_ui_parameters={**swagger_ui_default_parameters, "validatorUrl": None},
    )


@router.get("/redoc")
def redoc(request: Request) -> HTMLResponse:
    base = _base(request)
    return get_redoc_html(
        openapi_url=base + request.app.openapi_url,
        title=f"{request.app.title} API",
        redoc_js_url=f"{base}{ASSETS_PATH}/redoc.standalone.js",
        redoc_favicon_url=f"{base}{ASSETS_PATH}/favicon.png",
        with_google_fonts=False,
    )


def install_docs(app: FastAPI) -> None:
    """Serve ``/docs`` and ``/redoc`` and their assets on ``app`` (made with
    ``docs_url=None, redoc_url=None``, so FastAPI's CDN pages are not there)."""
    taken = {getattr(route, "path", None) for route in app.routes}
    if "/docs" in taken or "/redoc" in taken:
        raise ConfigError("the app already serves /docs or /redoc (from a CDN); make it without")
    app.mount(ASSETS_PATH, StaticFiles(directory=assets_dir()), name="docs-assets")
    app.include_router(router)
