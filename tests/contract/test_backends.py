"""The suite's database servers: a case without its server skips locally and fails under CI."""

from __future__ import annotations

import pytest

from tests.contract.backends import URL_VARS, server_url, servers_given

URL = "postgresql://memstrata@127.0.0.1:5432/memstrata_test"


@pytest.fixture
def no_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in URL_VARS.values():
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize("backend", sorted(URL_VARS))
def test_under_ci_a_missing_server_fails_saying_which_variable(
    backend: str, monkeypatch: pytest.MonkeyPatch, no_servers: None
) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as failed:
        server_url(backend)
    message = str(failed.value)
    assert message.startswith(f"{backend}: {URL_VARS[backend]} unset and CI=true: CI must")
    assert ".ci/databases.sh" in message
    with pytest.raises(pytest.fail.Exception) as failed:
        servers_given()
    assert str(failed.value).startswith(
        "postgresql: MEMSTRATA_TEST_POSTGRES_URL, mysql: MEMSTRATA_TEST_MYSQL_URL unset"
    )


@pytest.mark.parametrize("ci", [None, "", "false", "1"])
def test_outside_ci_a_missing_server_skips_saying_how_to_give_one(
    ci: str | None, monkeypatch: pytest.MonkeyPatch, no_servers: None
) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(
        pytest.skip.Exception,
        match="set MEMSTRATA_TEST_MYSQL_URL to a test server's URL to run the mysql cases",
    ):
        server_url("mysql")
    assert servers_given() == []


@pytest.mark.parametrize("ci", ["true", "TRUE ", "false"])
def test_a_server_given_is_used_in_ci_or_not(
    ci: str, monkeypatch: pytest.MonkeyPatch, no_servers: None
) -> None:
    monkeypatch.setenv("CI", ci)
    monkeypatch.setenv(URL_VARS["postgresql"], f" {URL} ")
    assert server_url("postgresql") == URL
    if ci.strip().lower() == "true":  # the other one is still missing
        with pytest.raises(pytest.fail.Exception, match=URL_VARS["mysql"]):
            servers_given()
    else:
        assert servers_given() == ["postgresql"]
    monkeypatch.setenv(URL_VARS["mysql"], "mysql://memstrata:memstrata@127.0.0.1/memstrata_test")
    assert servers_given() == ["postgresql", "mysql"]
