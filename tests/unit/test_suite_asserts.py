"""Every test of the suite can fail on its outcome: its body asserts, expects an exception or
a warning (``pytest.raises``, ``pytest.warns``), fails explicitly (``pytest.fail``), or calls a
check: a function whose name, leading underscores aside, is ``assert``, ``check`` or ``expect``
or starts with one and ``_`` (``mock.assert_called_once_with``, ``_expect_error``, ``_check``,
Playwright's ``expect(locator).to_have_text(...)``), or one of the few helpers of the suite
that assert though their names do not say so (:data:`ASSERTING_HELPERS`). A test
that only runs code passes whatever the code does, short of an exception.

The scan reads every ``test_*.py`` under ``tests/`` with :mod:`ast`: module-level ``test*``
functions and the ``test*`` methods of ``Test*`` classes. Functions defined inside a test
count as part of it (a check in a local helper the test calls is the test's check)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
CHECK_WORDS = ("assert", "check", "expect")
PYTEST_CHECKS = frozenset({"raises", "warns", "fail", "deprecated_call"})

#: helpers of the suite that assert though their names do not say so: the name called, and
#: each definition of it (``path::qualified name`` under ``tests/``), whose body must check
ASSERTING_HELPERS: dict[str, tuple[str, ...]] = {
    # the e2e ``cli`` fixture's callable: runs a command, asserts its exit code (``code=``)
    "cli": ("e2e/cli.py::Cli.__call__",),
    # a response is the error named, with the error body's fields
    "error_of": ("e2e/test_server_api.py::error_of", "e2e/test_workbench_api.py::error_of"),
    "_is_error": ("unit/test_auth.py::_is_error",),
    # an error is one line, no traceback, with the words given
    "_one_line_error": ("e2e/test_cli_input.py::_one_line_error",),
}


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _is_check_name(name: str) -> bool:
    bare = name.lstrip("_")
    return any(bare == word or bare.startswith(word + "_") for word in CHECK_WORDS)


def checks(node: ast.AST, helpers: frozenset[str]) -> bool:
    """Whether ``node`` (a test function) holds a check."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Assert):
            return True
        if not isinstance(sub, ast.Call):
            continue
        name = _called_name(sub)
        if name is None:
            continue
        func = sub.func
        if name in PYTEST_CHECKS and (
            isinstance(func, ast.Name)
            or (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "pytest"
            )
        ):
            return True
        if _is_check_name(name) or name in helpers:
            return True
    return False


def collected_tests(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The tests pytest collects from a module: ``test*`` functions, ``test*`` methods of
    ``Test*`` classes."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            yield node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(
                    item, ast.FunctionDef | ast.AsyncFunctionDef
                ) and item.name.startswith("test"):
                    yield item


def unchecked(source: str, helpers: frozenset[str] = frozenset()) -> list[str]:
    """The names of the tests in ``source`` that hold no check."""
    tree = ast.parse(source)
    return [t.name for t in collected_tests(tree) if not checks(t, helpers)]


HELPERS = frozenset(ASSERTING_HELPERS)


def test_every_test_of_the_suite_checks_its_outcome() -> None:
    found = [
        f"{path.relative_to(TESTS)}::{name}"
        for path in sorted(TESTS.rglob("test_*.py"))
        for name in unchecked(path.read_text(encoding="utf-8"), HELPERS)
    ]
    assert found == [], "tests that cannot fail on their outcome (assert something): " + str(found)


def _definition(tree: ast.Module, qualname: str) -> ast.AST | None:
    scope: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in qualname.split("."):
        node = next(
            (
                n
                for n in scope
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and n.name == part
            ),
            None,
        )
        if node is None:
            return None
        scope = node.body  # type: ignore[attr-defined]
    return node


@pytest.mark.parametrize("where", sorted(w for ws in ASSERTING_HELPERS.values() for w in ws))
def test_the_helpers_taken_for_checks_do_check(where: str) -> None:
    path, qualname = where.split("::")
    tree = ast.parse((TESTS / path).read_text(encoding="utf-8"))
    definition = _definition(tree, qualname)
    assert definition is not None, f"{where} is not defined"
    assert checks(definition, frozenset()), f"{where} asserts nothing"


SAMPLE = """
import pytest
from unittest import mock


def test_only_runs(memory):
    memory.remember(["hi"], "alice")


def test_asserts(memory):
    assert memory.remember(["hi"], "alice")


def test_raises():
    with pytest.raises(ValueError):
        int("x")


def test_warns():
    with pytest.warns(UserWarning):
        warn()


def test_calls_a_check(server):
    server.assert_called_once_with(1)


def test_calls_a_private_check(server):
    _expect_error(server.ask(b"[]"))


def test_calls_playwrights_expect(page):
    expect(page.locator("h1")).to_have_text("memstrata")


def test_a_name_that_only_begins_like_a_check(server):
    server.checkout()
    expected(server)


def test_fails_explicitly(x):
    if x:
        pytest.fail("x")


def test_a_raises_of_its_own():
    raises(ValueError)


def test_calls_a_helper(cli):
    cli("nonsense", code=2)


def test_a_helper_that_is_not_one(store):
    store.close()


class TestGrouped:
    def test_method_without_a_check(self):
        self.run()

    def test_method_with_a_check(self):
        check_this(self)

    def helper(self):
        pass


class Grouped:  # not collected
    def test_ignored(self):
        pass


def helper_without_a_check():
    pass
"""


def test_the_scan_finds_the_tests_without_a_check() -> None:
    assert unchecked(SAMPLE, frozenset({"cli"})) == [
        "test_only_runs",
        "test_a_name_that_only_begins_like_a_check",
        "test_a_helper_that_is_not_one",
        "test_method_without_a_check",
    ]
    assert "test_calls_a_helper" in unchecked(SAMPLE)  # a helper counts only when listed
    assert unchecked("def test_passes():\n    pass\n") == ["test_passes"]
