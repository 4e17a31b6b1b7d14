"""The one definition of Han characters and CJK punctuation (memstrata.util.scripts)."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

import pytest

import memstrata
from memstrata.util import scripts
from memstrata.util.scripts import (
    CJK_PUNCTUATION,
    FULLWIDTH,
    HAN,
    HAN_COMPAT,
    HAN_EXT_A,
    HAN_RE,
    HAN_SPACE,
    HAN_UNIFIED,
    han_count,
    has_han,
    is_han,
)


@pytest.mark.parametrize(
    "ch",
    [
        "中",
        "国",
        "的",
        "一",  # U+4E00, the first unified ideograph
        "\u9fff",  # the last of the unified block
        "妈",
        "媽",  # traditional
        "\u3400",  # extension A, first
        "䶮",  # U+4DAE, extension A, in a name (刘䶮)
        "\u4dbf",  # extension A, last
        "\uf900",  # compatibility ideograph, first
        "\ufa11",  # 﨑, a compatibility ideograph in Japanese and Taiwanese names
        "\ufaff",
    ],
)
def test_han_characters(ch: str) -> None:
    assert is_han(ch)
    assert has_han(ch)
    assert han_count(ch) == 1
    assert HAN_RE.fullmatch(ch)


@pytest.mark.parametrize(
    "ch",
    [
        "a",
        "Z",
        "1",
        " ",
        "，",  # fullwidth comma
        "！",
        "（",
        "：",
        "。",  # ideographic full stop
        "、",
        "「",
        "《",
        "\u3000",  # ideographic space
        "〇",  # ideographic zero: among the punctuation, not counted as Han
        "々",  # iteration mark
        "あ",  # hiragana
        "ア",  # katakana
        "ｱ",  # halfwidth katakana
        "한",  # hangul syllable
        "ㄱ",  # hangul jamo
        "ㄅ",  # bopomofo
        "\u2e80",  # a CJK radical
        "\u31c0",  # a CJK stroke
        "\u4dc0",  # a Yijing hexagram symbol, between extension A and the unified block
        "\U00020000",  # extension B, outside the Basic Multilingual Plane
        "é",
    ],
)
def test_not_han(ch: str) -> None:
    assert not is_han(ch)
    assert not has_han(ch)
    assert han_count(ch) == 0


def test_is_han_takes_one_character() -> None:
    assert not is_han("")
    assert not is_han("中国")
    assert not is_han("中a")


def test_the_definition_is_three_blocks() -> None:
    assert HAN == HAN_EXT_A + HAN_UNIFIED + HAN_COMPAT
    blocks = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
    for cp in range(0x10000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        inside = any(low <= cp <= high for low, high in blocks)
        assert is_han(ch) is inside, hex(cp)
        if inside:
            name = unicodedata.name(ch, "")
            assert name == "" or name.startswith(("CJK UNIFIED", "CJK COMPATIBILITY")), hex(cp)


def test_counting_on_mixed_text() -> None:
    assert han_count("我妈 takes 氨氯地平 every day") == 6
    assert han_count("你好，世界！") == 4
    assert han_count("刘䶮 met 﨑 at 3pm") == 3
    assert han_count("Mom 的 cardiologist 把她的药换了") == 7
    assert han_count("no Chinese here, only ， and 。") == 0
    assert han_count("") == 0
    assert han_count("ひらがなとカタカナ、한국어") == 0
    assert HAN_RE.findall("I live in 北京, near 三里屯.") == list("北京三里屯")


def test_has_han() -> None:
    assert has_han("moving to 上海 next month")
    assert has_han("䶮")
    assert not has_han("moving to Shanghai next month")
    assert not has_han("")
    assert not has_han("「」『』【】（）：；")
    assert not has_han("すし")


def test_the_spaces_between_han() -> None:
    assert re.sub(HAN_SPACE, "，", "房子定了 三月底交房") == "房子定了，三月底交房"
    assert re.sub(HAN_SPACE, "，", "房子定了  \t三月底") == "房子定了，三月底"
    assert re.sub(HAN_SPACE, "，", "moved 三月 done") == "moved 三月 done"
    assert re.sub(HAN_SPACE, "，", "我 love 你") == "我 love 你"


def test_punctuation_and_fullwidth_are_named_apart() -> None:
    marks = "\u3000、。〈〉《》「」『』【】〒〜〇"
    fullwidth = "，！？（）：；ＡＺ０９ｱ"
    assert re.fullmatch(f"[{CJK_PUNCTUATION}]+", marks)
    assert re.fullmatch(f"[{FULLWIDTH}]+", fullwidth)
    assert han_count(marks + fullwidth) == 0
    assert not re.search(f"[{CJK_PUNCTUATION}{FULLWIDTH}]", "中文 and English, 한국어")
    chinese_run = re.compile(f"[{CJK_PUNCTUATION}{HAN}{FULLWIDTH}]+")
    assert chinese_run.findall("I said 你好，世界！ twice") == ["你好，世界！"]


#: a Han range written by hand: the escapes of its bounds, an ordinal, or the characters
#: themselves as a range's bound or in a comparison
_HAND_WRITTEN: re.Pattern[str] = re.compile(
    r"\\u(?:4e00|9fff|3400|4dbf|f900|faff)"
    r"|\\u3000-|\\uff00-"
    r"|0x(?:4e00|9fff|3400|4dbf|f900|faff)\b"
    "|[\u4e00\u3400\uf900]-|-[\u9fff\u4dbf\ufaff]"
    "|[\"'][\u4e00\u3400\uf900\u9fff\u4dbf\ufaff][\"']\\s*<=",
    re.IGNORECASE,
)


def _sources() -> list[Path]:
    root = Path(memstrata.__file__).resolve().parent
    found = []
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        if here == root / "bench" and "handed" in subfolders:
            subfolders.remove("handed")  # held-out conversations, not code: never walked
        found += [here / name for name in files if name.endswith(".py")]
    return sorted(found)


def test_the_scan_sees_a_hand_written_range() -> None:
    assert _HAND_WRITTEN.search(Path(scripts.__file__).read_text(encoding="utf-8"))
    for written in (
        r'r"[\u4e00-\u9fff]"',
        r'r"[\u3400-\u9FFF]"',
        "re.compile('[\u4e00-\u9fff]')",
        '"\u4e00" <= ch',
        "0x4E00 <= ord(ch)",
        r'"[\u3000-\u303f]"',
    ):
        assert _HAND_WRITTEN.search(written), written
    assert not _HAND_WRITTEN.search("一二三 [一二两三] 一个 十一 \\u3000 as a space")


def test_no_hand_written_han_range_outside_scripts() -> None:
    sources = _sources()
    assert len(sources) > 50
    own = Path(scripts.__file__).resolve()
    offenders = []
    for path in sources:
        if path == own:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _HAND_WRITTEN.search(line):
                offenders.append(f"{path.relative_to(own.parents[1])}:{number}: {line.strip()}")
    assert offenders == [], "use memstrata.util.scripts:\n" + "\n".join(offenders)
