"""Store URLs: which engine, where, and how to show one without its password."""

from __future__ import annotations

import re
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
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url.strip()):
        # a NUL cut the URL short in the driver, or failed deep in the file system
        raise ConfigError(
            f"the store URL {redact(_printable(url))} holds a control character "
            "(percent-encode it if it belongs to the URL)"
        )
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError as exc:  # its text may quote the URL (a password taken for a port)
        raise ConfigError(
            f"the store URL {redact(url)} is malformed: {_why(exc)}{_ENCODE}"
        ) from exc
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
        if store.sqlite_path.parts[0].startswith("~"):
            # taken literally, ``~/m.db`` is a new, empty store in a directory named '~'
            raise ConfigError(
                f"the store URL {redact(url)} starts its path with '~', which a URL does not "
                "expand to a home directory: write the absolute path, "
                "sqlite:////home/<you>/memstrata.db"
            )
        if parts.query or parts.fragment or url.strip().endswith(("?", "#")):
            # the whole rest is the file's name: ``m.db?mode=ro`` would open a new, empty store
            raise ConfigError(
                f"the store URL {redact(url)} has a '?' or '#': a SQLite URL takes no "
                "parameters (percent-encode a '?' or '#' in the file's name: %3F, %23)"
            )
    elif not parts.hostname and not parts.path.strip("/") and "host=" not in parts.query:
        raise ConfigError(f"the store URL {redact(url)} names no server and no database")
    elif "@" in parts.path:  # ``user:12/34@host``: a password's '/' ended the host part
        raise ConfigError(
            f"the store URL {redact(url)} is malformed: an '@' after the host{_ENCODE}"
        )
    elif _BAD_ESCAPE.search(store.raw):  # the driver's error would quote it, password and all
        raise ConfigError(
            f"the store URL {redact(url)} is malformed: a '%' not followed by two hex digits"
            f"{_ENCODE}"
        )
    return store


#: a '%' that starts no percent-escape
_BAD_ESCAPE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_ENCODE: Final = (
    " (percent-encode a user name or password holding '%', '/', '?', '#', '@' or ':': "
    "%25, %2F, %3F, %23, %40, %3A)"
)


def _printable(url: str) -> str:
    return "".join(c if ord(c) >= 0x20 and ord(c) != 0x7F else "?" for c in url.strip())


def _why(exc: ValueError) -> str:
    text = str(exc)
    if "port" in text.lower():
        return "what follows the host's ':' is not a port number"
    return "invalid IPv6 address" if "ipv6" in text.lower() else "it cannot be parsed"


def _is_secret_param(param: str) -> bool:
    """``password=``, ``sslpassword=`` and the like, however their name is encoded."""
    return unquote(param.partition("=")[0]).strip().lower().endswith("password")


def redact(url: str) -> str:
    """``url`` with the password of its user part, and any ``password=`` parameter, hidden."""
    head, sep, rest = url.partition("://")
    if not sep:
        return "<not a URL>" if ":" in url and "@" in url else url
    netloc, slash, tail = rest.partition("/")
    if "@" not in netloc and ":" in netloc and _password_with_slash(netloc, tail):
        # ``user:pa/ss@host``: a password holding a '/' (not percent-encoded) ends the
        # host part early; hide everything up to the last '@' rather than show any of it
        userinfo, _, after = rest.rpartition("@")
        return _hide_params(f"{head}://{userinfo.split(':', 1)[0]}:***@{after}")
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"{user}@{host}"
    return _hide_params(f"{head}://{netloc}{slash}{tail}")


def _password_with_slash(netloc: str, tail: str) -> bool:
    """Whether ``netloc`` (before the first '/') is ``user:start-of-password``: an '@' comes
    later, and either what follows the ':' is no port or the '@' is in the path."""
    port = netloc.rpartition(":")[2]
    return "@" in tail.partition("?")[0] or ("@" in tail and not port.isdigit())


def _hide_params(shown: str) -> str:
    query_at = shown.find("?")
    if query_at < 0 or "password" not in unquote(shown[query_at:]).lower():
        return shown
    params = shown[query_at + 1 :].split("&")
    params = [f"{p.partition('=')[0]}=***" if _is_secret_param(p) else p for p in params]
    return shown[: query_at + 1] + "&".join(params)
