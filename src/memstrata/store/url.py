"""Store URLs: which engine, where, and how to show one without its password."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import SplitResult, unquote, urlsplit

from memstrata.errors import ConfigError

SCHEMES: Final = {
    "sqlite": "sqlite",
    "postgresql": "postgresql",
    "postgres": "postgresql",
    "mysql": "mysql",
    "mariadb": "mysql",
}


@dataclass(frozen=True, slots=True)
class StoreUrl:
    """A parsed store URL: ``engine`` is ``sqlite``, ``postgresql`` or ``mysql``."""

    engine: str
    raw: str
    parts: SplitResult

    @property
    def shown(self) -> str:
        """The URL as it may be logged or printed: any password replaced by ``***``."""
        return redact(self.raw)

    @property
    def sqlite_path(self) -> Path:
        """The file of a ``sqlite:///path`` URL (``sqlite:////abs`` or ``sqlite:///rel``)."""
        return Path(unquote(self.raw.split("://", 1)[1].removeprefix("/")))


def parse_store_url(url: str) -> StoreUrl:
    """``url`` parsed; anything but a SQLite, PostgreSQL or MySQL URL is a :class:`ConfigError`
    (whose message never holds the password)."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError as exc:
        raise ConfigError(f"the store URL {redact(url)} is malformed: {exc}") from exc
    engine = SCHEMES.get(parts.scheme.lower().split("+", 1)[0])
    if engine is None:
        raise ConfigError(
            f"the store URL {redact(url)} names no known engine: use sqlite:///path, "
            "postgresql://user:password@host:port/database or "
            "mysql://user:password@host:port/database"
        )
    store = StoreUrl(engine, url.strip(), parts)
    if engine == "sqlite":
        if parts.netloc or not str(store.sqlite_path) or str(store.sqlite_path) == ".":
            raise ConfigError(
                f"the store URL {redact(url)} names no file: use sqlite:///relative/path.db "
                "or sqlite:////absolute/path.db"
            )
    elif not parts.hostname and not parts.path.strip("/") and "host=" not in parts.query:
        raise ConfigError(f"the store URL {redact(url)} names no server and no database")
    return store


def redact(url: str) -> str:
    """``url`` with the password of its user part, and any ``password=`` parameter, hidden."""
    head, sep, rest = url.partition("://")
    if not sep:
        return "<not a URL>" if ":" in url and "@" in url else url
    netloc, slash, tail = rest.partition("/")
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"{user}@{host}"
    shown = f"{head}://{netloc}{slash}{tail}"
    if "password=" in shown.lower():
        query_at = shown.find("?")
        if query_at >= 0:
            params = shown[query_at + 1 :].split("&")
            params = ["password=***" if p.lower().startswith("password=") else p for p in params]
            shown = shown[: query_at + 1] + "&".join(params)
    return shown
