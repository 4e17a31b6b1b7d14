"""Records and search hits read back from their JSON exactly as they were written (what a
remote client decodes), and a record of no known kind is refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memstrata.codec import hit_from_json, hit_to_json, record_from_json, record_to_json
from memstrata.errors import InvalidInputError
from memstrata.model import (
    Category,
    Document,
    DocumentKind,
    Episode,
    Fact,
    Granularity,
    Role,
    Scope,
    SearchHit,
    When,
)

T = datetime(2026, 5, 1, 8, 30, tzinfo=UTC)
SCOPE = Scope("alice", "t1", "helper")


def _records() -> list[Episode | Fact | Document]:
    episode = Episode(
        id="ep_01JD3M8V4Q5R6S7T8V9W0X1Y2Z",
        scope=SCOPE,
        surface="chat",
        session_id="s1",
        speaker="alice",
        role=Role.USER,
        text="我下个月去京都 and then Osaka",
        time=T,
        metadata={"n": 1, "tags": ["旅行"]},
    )
    fact = Fact(
        id="fa_01JD3M8V4Q5R6S7T8V9W0X1Y2Z",
        scope=Scope("alice"),
        text="Alice plans a trip to Kyoto",
        category=Category.PLAN,
        confidence=0.9,
        importance=0.7,
        topic="travel",
        sources=(episode.id,),
        valid_from=T,
        valid_to=None,
        superseded_by=None,
        created_at=T,
        updated_at=T,
        when=When("next month", datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC)),
        slot="plan:trip to kyoto",
        value="Kyoto",
    )
    document = Document(
        id="doc_01JD3M8V4Q5R6S7T8V9W0X1Y2Z",
        scope=Scope("alice"),
        kind=DocumentKind.TOPIC,
        key="travel",
        content={"title": "Travel", "sections": []},
        version=3,
        created_at=T,
        updated_at=T,
    )
    return [episode, fact, document]


@pytest.mark.parametrize("record", _records(), ids=lambda r: type(r).__name__)
def test_a_record_reads_back_from_its_json(record: Episode | Fact | Document) -> None:
    wire = json.loads(json.dumps(record_to_json(record), ensure_ascii=False))
    assert record_from_json(wire) == record


def test_a_record_of_no_known_kind_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="episode, fact or document"):
        record_from_json({"kind": "bullet", "id": "m_1"})


@pytest.mark.parametrize("time", [T, None])
def test_a_hit_reads_back_from_its_json(time: datetime | None) -> None:
    hit = SearchHit(
        id="alice/t1/s1",
        granularity=Granularity.SESSION,
        score=2.5,
        components={"lexical": 1.25, "dense": 0.5, "fused": 2.5},
        text="我喜欢龙井茶",
        scope=SCOPE,
        session_id="s1",
        speaker="alice",
        time=time,
        episodes=("ep_01JD3M8V4Q5R6S7T8V9W0X1Y2Z",),
        topic=None,
        bullets=(),
    )
    wire = json.loads(json.dumps(hit_to_json(hit), ensure_ascii=False))
    assert hit_from_json(wire) == hit
