"""Importers: LoCoMo, LongMemEval (haystack schema) and generic JSONL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata import importers
from memstrata.errors import ImportFormatError, InvalidInputError
from memstrata.importers.locomo import parse_locomo_date
from memstrata.importers.longmemeval import parse_lme_date
from memstrata.model import Role
from tests.conftest import LOCOMO_DEV

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


class TestLocomo:
    def test_mini_fixture(self) -> None:
        batch = importers.load(FIXTURES / "locomo_mini.json", "locomo")
        [conv] = batch.conversations
        assert conv.key == "conv-mini" and conv.metadata == {"speaker_a": "Ana", "speaker_b": "Ben"}
        assert [t.session_id for t in conv.turns] == ["session_1"] * 2 + ["session_2"] * 2
        first, second, _, image_only = conv.turns
        assert first.speaker == "Ana" and first.metadata["dia_id"] == "D1:1"
        assert first.time == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
        assert second.metadata["blip_caption"] == "a photo of karst hills"
        assert image_only.text == "[shares an image: a blue bowl]"
        assert image_only.time == datetime(2023, 6, 27, 10, 37, tzinfo=UTC)
        assert [q.evidence for q in conv.questions] == [("D1:1",), ("D1:2", "D:11:26"), ()]
        assert conv.questions[2].answer == "no" and conv.questions[2].category == "5"

    @pytest.mark.skipif(not LOCOMO_DEV.exists(), reason="shared LoCoMo dev split not present")
    def test_dev_split(self) -> None:
        batch = importers.load(LOCOMO_DEV, "locomo")
        assert len(batch.conversations) == 5
        assert batch.turn_count == 2760
        assert batch.question_count == 999
        assert [c.key for c in batch.conversations] == [
            "conv-26",
            "conv-30",
            "conv-41",
            "conv-42",
            "conv-43",
        ]

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
            ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
            ("yesterday", None),
        ],
    )
    def test_dates(self, text: str, expected: datetime | None) -> None:
        assert parse_locomo_date(text) == expected

    def test_errors_name_the_place(self, tmp_path: Path) -> None:
        data = json.loads((FIXTURES / "locomo_mini.json").read_text())
        del data[0]["conversation"]["session_2"][0]["speaker"]
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(data))
        with pytest.raises(ImportFormatError, match=r"conv-mini session_2 turn 0.*speaker"):
            importers.load(bad, "locomo")
        data[0]["conversation"]["session_2_date_time"] = "sometime"
        bad.write_text(json.dumps(data))
        with pytest.raises(ImportFormatError, match="session_2_date_time"):
            importers.load(bad, "locomo")

    def test_not_json(self, tmp_path: Path) -> None:
        bad = tmp_path / "bad.json"
        bad.write_text('[{"sample_id": ')
        with pytest.raises(ImportFormatError, match=r"bad.json:1.*invalid JSON"):
            importers.load(bad, "locomo")

    @pytest.mark.parametrize("kind", ["locomo", "mempalace"])
    def test_json_nested_too_deeply_is_refused_not_a_crash(self, tmp_path: Path, kind: str) -> None:
        deep = tmp_path / "deep.json"
        deep.write_text(('{"a": ' if kind == "mempalace" else "[") * 100_000)
        with pytest.raises(ImportFormatError, match=r"deep.json.*nested too deeply"):
            importers.load(deep, kind)


class TestLongMemEval:
    def test_mini_fixture(self) -> None:
        batch = importers.load(FIXTURES / "longmemeval_mini.json", "longmemeval")
        first, second = batch.conversations
        assert first.key == "q_001"
        assert [t.session_id for t in first.turns] == [
            "sess_a",
            "sess_a",
            "answer_sess_b",
            "answer_sess_b",
        ]  # the empty turn is skipped
        assert first.turns[2].metadata == {"turn_index": 0, "has_answer": True}
        assert first.turns[1].role == Role.ASSISTANT and first.turns[1].speaker == "assistant"
        assert first.turns[2].time == datetime(2023, 5, 21, 10, 0, tzinfo=UTC)
        [q] = first.questions
        assert q.evidence == ("answer_sess_b",) and q.category == "single-session-user"
        assert q.metadata["abstention"] is False
        assert second.questions[0].metadata["abstention"] is True
        assert second.turns[0].text == "我周末去了杭州西湖。"

    def test_dates(self) -> None:
        assert parse_lme_date("2023/05/20 (Sat) 02:21") == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
        assert parse_lme_date("2023/05/20") == datetime(2023, 5, 20, tzinfo=UTC)
        assert parse_lme_date("May 20") is None

    def test_mismatched_lengths(self, tmp_path: Path) -> None:
        data = json.loads((FIXTURES / "longmemeval_mini.json").read_text())
        data[0]["haystack_dates"].pop()
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(data))
        with pytest.raises(ImportFormatError, match="differ in length"):
            importers.load(bad, "longmemeval")


class TestJsonl:
    def test_threads_and_fields(self, tmp_path: Path) -> None:
        path = tmp_path / "turns.jsonl"
        path.write_text(
            '{"text": "hello", "speaker": "amy"}\n\n'
            '{"text": "你好", "thread": "zh", "role": "assistant", "time": "2024-01-02T03:04:05Z",'
            ' "session_id": "s9", "metadata": {"k": 1}}\n',
            encoding="utf-8",
        )
        batch = importers.load(path, "jsonl")
        assert [c.key for c in batch.conversations] == ["default", "zh"]
        zh = batch.conversations[1].turns[0]
        assert zh.role == Role.ASSISTANT and zh.session_id == "s9" and zh.metadata == {"k": 1}
        assert zh.time == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)

    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ("not json", "invalid JSON"),
            ("[1, 2]", "JSON object"),
            ('{"txt": "typo"}', "unknown field"),
            ('{"speaker": "x"}', "missing field 'text'"),
            ('{"text": "   "}', "empty"),
            ('{"text": "x", "role": "robot"}', "unknown role"),
            ('{"text": "x", "time": "tomorrow"}', "ISO 8601"),
            ('{"text": 5}', "must be a string"),
            ('{"text": "x", "metadata": []}', "must be an object"),
        ],
    )
    def test_errors_name_the_line(self, tmp_path: Path, line: str, message: str) -> None:
        path = tmp_path / "turns.jsonl"
        path.write_text('{"text": "fine"}\n' + line + "\n")
        with pytest.raises(ImportFormatError, match=rf"turns.jsonl:2: .*{message}"):
            importers.load(path, "jsonl")

    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(ImportFormatError, match="no such file"):
            importers.load(tmp_path / "nope.jsonl", "jsonl")


def test_unknown_format() -> None:
    with pytest.raises(InvalidInputError, match="unknown import format"):
        importers.load("x", "csv")


MADIAL_ZH = LOCOMO_DEV.parents[1] / "madial" / "madial_zh_dev.json"


class TestMadial:
    def test_fixture(self, tmp_path: Path) -> None:
        path = tmp_path / "m.json"
        path.write_text(
            json.dumps(
                [
                    {
                        "sample_id": "u1",
                        "sessions": [
                            {
                                "session_id": "M1",
                                "date": "2022-01-01",
                                "turns": [
                                    {
                                        "turn_id": "M1",
                                        "speaker": "memory",
                                        "text": "元旦晚会上做了彩纸灯笼。",
                                    }
                                ],
                            }
                        ],
                        "qa": [
                            {
                                "question": "Bart: 元旦晚会我要表演魔术！",
                                "answer": "...",
                                "evidence": ["M1"],
                                "category": "memory_recall",
                            }
                        ],
                    }
                ],
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
        [conv] = importers.load(path, "madial").conversations
        assert conv.turns[0].metadata == {"turn_id": "M1"}
        assert conv.turns[0].time == datetime(2022, 1, 1, tzinfo=UTC)
        assert conv.questions[0].evidence == ("M1",)

    @pytest.mark.skipif(not MADIAL_ZH.exists(), reason="shared MADial data not present")
    def test_shared_files(self) -> None:
        zh = importers.load(MADIAL_ZH, "madial")
        en = importers.load(MADIAL_ZH.with_name("madial_en_dev.json"), "madial")
        assert (zh.turn_count, en.turn_count) == (83, 76)
        assert zh.question_count == en.question_count > 0

    def test_bad_date(self, tmp_path: Path) -> None:
        path = tmp_path / "m.json"
        path.write_text(
            json.dumps(
                [
                    {
                        "sample_id": "u1",
                        "sessions": [{"session_id": "M1", "date": "Jan 1", "turns": []}],
                    }
                ]
            )
        )
        with pytest.raises(ImportFormatError, match="YYYY-MM-DD"):
            importers.load(path, "madial")
