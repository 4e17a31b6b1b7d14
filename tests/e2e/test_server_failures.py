"""The HTTP server over a damaged store: reads and writes are 503 with how to recover."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.server.http import create_app
from memstrata.settings import load_settings
from tests.integration.test_damaged_store import damaged_data_dir


def test_a_damaged_store_is_503_with_how_to_recover(data_dir: Path) -> None:
    damaged_data_dir(data_dir)
    with (
        Memory.open(settings=load_settings(data_dir=data_dir)) as mem,
        TestClient(create_app(mem), raise_server_exceptions=False) as client,
    ):
        r = client.get("/v1/list", params={"user": "alice", "limit": 1000})
        assert r.status_code == 503 and "doctor --repair" in r.text
        r = client.post(
            "/v1/remember", json={"scope": {"user": "bob"}, "turns": [{"text": "hello"}]}
        )
        assert r.status_code == 503 and "damaged" in r.text
        assert client.get("/v1/list", params={"user": "bob"}).json()["items"] == []
