"""The HTTP server over a damaged store: reads and writes are 503 with how to recover."""

from __future__ import annotations

from pathlib import Path

from memstrata.api import Memory
from memstrata.settings import load_settings
from tests.integration.test_damaged_store import damaged_data_dir
from tests.keyed import key_headers, keyed_client


def test_a_damaged_store_is_503_with_how_to_recover(data_dir: Path) -> None:
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        headers = key_headers(mem)  # made before the damage: a damaged store takes no key
    damaged_data_dir(data_dir)
    with (
        Memory.open(settings=load_settings(data_dir=data_dir)) as mem,
        keyed_client(mem, headers=headers, raise_server_exceptions=False) as client,
    ):
        r = client.get("/v1/list", params={"user": "alice", "limit": 1000})
        assert r.status_code == 503 and "doctor --repair" in r.text
        r = client.post(
            "/v1/remember", json={"scope": {"user": "bob"}, "turns": [{"text": "hello"}]}
        )
        assert r.status_code == 503 and "damaged" in r.text
        assert client.get("/v1/list", params={"user": "bob"}).json()["items"] == []
