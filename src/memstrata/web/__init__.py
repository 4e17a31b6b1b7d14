"""The web workbench: a page to look after an agent's memory in a browser.

Plain HTML, CSS and JavaScript modules in :func:`static_dir` (no build step, no framework,
nothing fetched from another site), served by :mod:`memstrata.server.routes.web` on the same
origin as the API. The page reads and writes memory only through the HTTP API, with the
caller's API key (local mode: none).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Final

from memstrata.errors import ConfigError

#: the page's paths, served without a key (they hold no memory)
WEB_PATHS: Final = frozenset({"/", "/favicon.svg"})
#: the page's path prefixes served without a key: its styles and scripts
WEB_PREFIXES: Final = ("/css/", "/js/")
#: the files the page cannot start without
ENTRY_FILES: Final = ("index.html", "css/app.css", "js/app.js")


def static_dir() -> Path:
    """The directory of the page's files, checked."""
    directory = Path(str(resources.files("memstrata.web") / "static"))
    missing = [name for name in ENTRY_FILES if not (directory / name).is_file()]
    if missing:
        raise ConfigError(
            f"the workbench's files {', '.join(missing)} are missing from {directory}; "
            "reinstall memstrata"
        )
    return directory
