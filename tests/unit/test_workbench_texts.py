"""The workbench's strings, read from its JavaScript sources: a string marking a command or a
file name with backticks is always shown through ``withCode`` (never the backticks
themselves), the router's choices have words in both languages instead of their own names,
and both languages take the same parameters."""

from __future__ import annotations

import re

import pytest

from memstrata.context import ROUTES
from memstrata.web import static_dir

SOURCES = sorted((static_dir() / "js").rglob("*.js"))
#: a catalog entry: 'key': 'text' or "key": "text"
ENTRY = re.compile(
    r"""(['"])(?P<key>[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)\1\s*:\s*"""
    r"""(?P<q>['"])(?P<text>(?:\\.|(?!(?P=q)).)*)(?P=q)"""
)
PARAM = re.compile(r"\{(\w+)\}")


def _register_blocks(source: str) -> list[str]:
    """The argument of every ``register(...)`` call in ``source``."""
    blocks = []
    for found in re.finditer(r"\bregister\(\{", source):
        depth, i = 0, found.end() - 1
        for i in range(found.end() - 1, len(source)):
            depth += {"{": 1, "}": -1}.get(source[i], 0)
            if depth == 0:
                break
        blocks.append(source[found.end() - 1 : i + 1])
    return blocks


def catalogs() -> dict[str, dict[str, str]]:
    """Every registered string, by language and key."""
    out: dict[str, dict[str, str]] = {"en": {}, "zh": {}}
    for path in SOURCES:
        for block in _register_blocks(path.read_text(encoding="utf-8")):
            zh_at = re.search(r"\bzh\s*:\s*\{", block)
            en_at = re.search(r"\ben\s*:\s*\{", block)
            assert en_at is not None and zh_at is not None and en_at.start() < zh_at.start()
            for lang, part in (("en", block[: zh_at.start()]), ("zh", block[zh_at.start() :])):
                for entry in ENTRY.finditer(part):
                    out[lang][entry["key"]] = entry["text"]
    return out


def uses(key: str) -> tuple[int, int]:
    """How often the sources look ``key`` up, and how often through ``withCode``."""
    quoted = rf"""(?:ctx\.)?\bt\(\s*['"]{re.escape(key)}['"]"""
    every = wrapped = 0
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        every += len(re.findall(quoted, text))
        wrapped += len(re.findall(rf"withCode\(\s*{quoted}", text))
    return every, wrapped


def test_the_catalogs_are_read() -> None:
    found = catalogs()
    assert len(found["en"]) > 100 and len(found["zh"]) > 100
    assert found["en"]["signin.title"] == "Sign in" and found["zh"]["signin.title"] == "登录"


def test_a_string_marking_code_with_backticks_is_shown_as_code() -> None:
    found = catalogs()
    marked = sorted({k for lang in found.values() for k, text in lang.items() if "`" in text})
    assert "signin.intro" in marked
    for key in marked:
        for lang, texts in found.items():
            assert texts[key].count("`") % 2 == 0, f"{lang} {key}: a backtick without its pair"
        every, wrapped = uses(key)
        assert every >= 1, f"{key} is never shown"
        assert wrapped == every, f"{key}: {every - wrapped} of {every} uses show its backticks"


@pytest.mark.parametrize("route", ROUTES)
def test_each_choice_of_the_router_has_words_in_both_languages(route: str) -> None:
    found = catalogs()
    for lang in ("en", "zh"):
        words = found[lang].get(f"search.route.{route}", "")
        assert words.strip(), f"no {lang} words for the route {route!r}"
        # words for a person, not the router's name for the choice
        assert words.strip().lower() != route and len(words.split()) >= (2 if lang == "en" else 1)
        if lang == "zh":
            assert route not in words, words


def test_no_string_shows_the_routers_name_for_a_choice() -> None:
    for lang, texts in catalogs().items():
        shown = [key for key, text in texts.items() if "{route}" in text]
        assert shown == [], f"{lang}: {shown} put the router's name on the page"


def test_both_languages_take_the_same_parameters() -> None:
    found = catalogs()
    for key, text in found["en"].items():
        if key in found["zh"]:
            assert set(PARAM.findall(text)) == set(PARAM.findall(found["zh"][key])), key
