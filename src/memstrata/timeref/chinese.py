"""The Chinese grammar of time expressions: one compiled pattern and one resolver per form.

Numbers are ASCII digits (full-width ones are made ASCII first) or Chinese numerals, positional
("二十三") or digit by digit ("二〇二三"). See :mod:`memstrata.timeref` for what each form
resolves to.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Final

from memstrata.timeref import periods
from memstrata.timeref.grammar import (
    Context,
    Found,
    Grain,
    Rule,
    fixed,
    months_around,
    weekday_candidates,
    years_around,
)
from memstrata.timeref.periods import Days
from memstrata.timeref.tables import (
    ZH_DIGITS,
    ZH_NUMBER_PATTERN,
    ZH_SEASONS,
    ZH_UNITS,
    ZH_WEEKDAYS,
    chinese_number,
)

N: Final = ZH_NUMBER_PATTERN
NB: Final = r"(?<![\d〇零○一二两三四五六七八九十百千几半第])"
"""Not inside a longer number (nor an ordinal: 第三天)."""
_DIGIT4: Final = "".join(k for k in ZH_DIGITS if k != "两")
YEAR: Final = rf"(?P<y>\d{{4}}|[{_DIGIT4}]{{4}})年"
MONTH: Final = r"(?P<mo>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月"
DAY: Final = (
    r"(?P<d>3[01]|[12][0-9]|0?[1-9]|三十一?|二?十[一二三四五六七八九]?|[一二三四五六七八九])"
)
_DAYPARTS: Final = (
    "早上",
    "早晨",
    "上午",
    "中午",
    "下午",
    "傍晚",
    "晚上",
    "夜里",
    "夜间",
    "凌晨",
    "白天",
)
_DAYPART: Final = rf"(?:{'|'.join(_DAYPARTS)})?"
_WEEK: Final = r"(?:周|星期|礼拜)"
_SHANG: Final = r"(?<![早晚马路身网楼线班加算赶遇爱看桌墙车地天手心世])"
"""上/下 that begin "上周", not the end of 早上, 马上 or 地下."""
_PREFIX: Final = (
    rf"(?P<mod>{_SHANG}上上|{_SHANG}上|这|本|{_SHANG}下下|(?<![一以地楼线天底之]){_SHANG}下)"
)
_NOT_WEEK: Final = r"(?![末围边到全期年岁])"
_MID: Final = r"中(?![国文学心央间秋医华部东西南北层外期午])"
_YEAR_REL: Final = (
    r"(?<![\d〇零○一二两三四五六七八九十百千几半年以之然最])"
    r"(?P<w>大前年|前年|去年|今年|明年|大后年|后年)(?![轻纪龄代级华货终])"
)
_MOD_WEEKS: Final = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}
#: the years named from this one ("去年" is last year), shared with the holidays
YEAR_OFFSET: Final = {
    "大前年": -3,
    "前年": -2,
    "去年": -1,
    "今年": 0,
    "明年": 1,
    "后年": 2,
    "大后年": 3,
}
_DAY_OFFSET: Final = {
    "大前天": -3,
    "前天": -2,
    "昨天": -1,
    "昨日": -1,
    "昨儿": -1,
    "昨晚": -1,
    "昨夜": -1,
    "今天": 0,
    "今日": 0,
    "今儿": 0,
    "今晚": 0,
    "今早": 0,
    "今夜": 0,
    "明天": 1,
    "明日": 1,
    "明儿": 1,
    "明早": 1,
    "明晚": 1,
    "后天": 2,
    "大后天": 3,
}
_MONTH_PARTS: Final = {
    "上旬": "early",
    "初": "early",
    "中旬": "mid",
    "中": "mid",
    "下旬": "late",
    "底": "late",
    "末": "late",
}
_YEAR_PARTS: Final = {
    "初": "start",
    "中": "mid",
    "底": "end",
    "末": "end",
    "上半年": "first-half",
    "下半年": "second-half",
}
_ONE_WORDS: Final = "直起样定般些下切致边面点会共同旦向律再时阵年生次天"
"""After 周一: 一 begins a word (上周一直 "all last week", 这周一起 "together this week")."""


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _n(text: str) -> int:
    value = chinese_number(text)
    if value is None:  # the patterns admit only numbers chinese_number reads
        raise ValueError(text)
    return value


def _year_of(text: str) -> int:
    return _n(text)


_FROM: Final = re.compile(r"(?:从|自从?)[^，。,.]{0,6}$")


def _monday_word(m: re.Match[str], ctx: Context) -> bool:
    """Whether the 一 of 周一 begins another word: 上周一直, 这周一起 (but 从上周一起: from)."""
    if m["wd"] != "一" or m.group().endswith(_DAYPARTS):
        return False
    after = ctx.text[m.end("wd") : m.end("wd") + 1]
    if after == "起" and _FROM.search(ctx.text, max(0, m.start() - 8), m.start()):
        return False
    return after != "" and after in _ONE_WORDS


# --- days, weekdays, weeks ----------------------------------------------------------------


def _day(m: re.Match[str], ctx: Context) -> Found:
    return fixed(periods.day(ctx.today + timedelta(days=_DAY_OFFSET[m["w"]])), "day")


def _weekday_mod(m: re.Match[str], ctx: Context) -> Found | None:
    if _monday_word(m, ctx):
        return None
    wd = ZH_WEEKDAYS[m["wd"]]
    monday = periods.week(ctx.today)[0] + timedelta(weeks=_MOD_WEEKS[m["mod"]])
    return Found(periods.day(monday + timedelta(days=wd)), "day", True, weekdays=(wd, wd))


def _weekday(m: re.Match[str], ctx: Context) -> Found | None:
    if _monday_word(m, ctx):
        return None
    wd = ZH_WEEKDAYS[m["wd"]]
    return ctx.bare(m, weekday_candidates(ctx.today, wd), "day", strict=True, weekday=wd)


def _week(m: re.Match[str], ctx: Context) -> Found:
    return fixed(periods.week(ctx.today + timedelta(weeks=_MOD_WEEKS[m["mod"]])), "week")


def _weekend_mod(m: re.Match[str], ctx: Context) -> Found:
    return fixed(periods.weekend(ctx.today + timedelta(weeks=_MOD_WEEKS[m["mod"]])), "weekend")


def _weekend(m: re.Match[str], ctx: Context) -> Found | None:
    options = [periods.weekend(ctx.today + timedelta(days=7 * k)) for k in (-2, -1, 0, 1, 2)]
    return ctx.bare(m, options, "weekend")


# --- months and years ---------------------------------------------------------------------


def _month_rel(m: re.Match[str], ctx: Context) -> Found:
    y, mo = periods.add_months(ctx.today.year, ctx.today.month, _MOD_WEEKS[m["mod"]])
    if m.groupdict().get("part"):
        return fixed(periods.month_part(y, mo, _MONTH_PARTS[m["part"]]), "part")
    return fixed(periods.month(y, mo), "month")


def _year_rel(m: re.Match[str], ctx: Context) -> Found:
    y = ctx.today.year + YEAR_OFFSET[m["w"]]
    groups = m.groupdict()
    if groups.get("mo"):
        mo = _n(m["mo"])
        if groups.get("d"):
            return fixed(periods.day(date(y, mo, _n(m["d"]))), "day")
        if groups.get("mpart"):
            return fixed(periods.month_part(y, mo, _MONTH_PARTS[m["mpart"]]), "part")
        return fixed(periods.month(y, mo), "month")
    if groups.get("s"):
        return fixed(periods.season(y, ZH_SEASONS[m["s"]]), "season")
    if groups.get("part"):
        return fixed(periods.year_part(y, _YEAR_PARTS[m["part"]]), "part")
    return fixed(periods.year(y), "year")


def _absolute(m: re.Match[str], ctx: Context) -> Found | None:
    groups = m.groupdict()
    if groups.get("yy"):
        short = int(m["yy"])
        y = 2000 + short if 2000 + short <= ctx.today.year + 10 else 1900 + short
    else:
        y = _year_of(m["y"])
        if not 1000 <= y <= 2999:
            return None
    if groups.get("mo"):
        mo = _n(m["mo"])
        if groups.get("d"):
            return fixed(periods.day(date(y, mo, _n(m["d"]))), "day", False)
        if groups.get("mpart"):
            return fixed(periods.month_part(y, mo, _MONTH_PARTS[m["mpart"]]), "part", False)
        return fixed(periods.month(y, mo), "month", False)
    if groups.get("s"):
        return fixed(periods.season(y, ZH_SEASONS[m["s"]]), "season", False)
    if groups.get("part"):
        return fixed(periods.year_part(y, _YEAR_PARTS[m["part"]]), "part", False)
    return fixed(periods.year(y), "year", False)


def _month(m: re.Match[str], ctx: Context) -> Found | None:
    mo = _n(m["mo"])
    groups = m.groupdict()
    if groups.get("d"):
        dom = _n(m["d"])
        options = years_around(ctx.today, lambda y: periods.day(date(y, mo, dom)))
        return ctx.bare(m, options, "day")
    if groups.get("mpart"):
        part = _MONTH_PARTS[m["mpart"]]
        options = years_around(ctx.today, lambda y: periods.month_part(y, mo, part))
        return ctx.bare(m, options, "part")
    return ctx.bare(m, years_around(ctx.today, lambda y: periods.month(y, mo)), "month")


def _day_of_month(m: re.Match[str], ctx: Context) -> Found | None:
    dom = _n(m["d"])
    options = months_around(ctx.today, lambda y, mo: periods.day(date(y, mo, dom)))
    return ctx.bare(m, options, "day")


def _bare_month_part(m: re.Match[str], ctx: Context) -> Found | None:
    part, today = _MONTH_PARTS[m["part"].removeprefix("月")], ctx.today
    current = periods.month_part(today.year, today.month, part)
    options = months_around(today, lambda y, mo: periods.month_part(y, mo, part))
    return ctx.bare(m, options, "part", default=current)


def _bare_year_part(m: re.Match[str], ctx: Context) -> Found | None:
    word = m["part"]
    part = _YEAR_PARTS[word if word.endswith("半年") else word.removeprefix("年")]
    current = periods.year_part(ctx.today.year, part)
    options = years_around(ctx.today, lambda y: periods.year_part(y, part))
    return ctx.bare(m, options, "part", default=current)


_LIKING: Final = re.compile(
    r"喜欢|喜爱|最爱|爱|讨厌|怕|向往|like|love|hate|prefer|enjoy", re.IGNORECASE
)


def _season(m: re.Match[str], ctx: Context) -> Found | None:
    name, which = ZH_SEASONS[m["s"]], m["which"]
    if which in ("这个", "今"):
        return fixed(periods.season(periods.season_year(ctx.today, name), name), "season")
    options = years_around(ctx.today, lambda y: periods.season(y, name), before=2)
    if which:  # 上个夏天, 下个夏天: the last that has ended, the next that has not begun
        chosen = periods.pick(
            options, ctx.today, "past" if which == "上个" else "future", strict=True
        )
        return None if chosen is None else fixed(chosen, "season")
    if ctx.text.startswith("的", m.end()) or _LIKING.search(
        ctx.text, *ctx.reader.clause(*m.span())
    ):
        return None  # 秋天的叶子, 我最喜欢春天: any autumn, spring in general
    return ctx.bare(m, options, "season", need_tense=True)


def _decade(m: re.Match[str], ctx: Context) -> Found | None:
    tens = _n(m["d"])
    if tens % 10 or not 0 <= tens <= 90:
        return None
    first = ctx.today.year - ctx.today.year % 100 + tens
    if first > ctx.today.year:
        first -= 100
    return fixed(periods.decade(first), "decade")


def _day_range(m: re.Match[str], ctx: Context) -> Found | None:
    mo, first, last = _n(m["mo"]), _n(m["d"]), _n(m["d2"])
    mo2 = _n(m["mo2"]) if m["mo2"] else mo

    def make(y: int) -> Days:
        return date(y, mo, first), date(y + (mo2 < mo), mo2, last) + timedelta(days=1)

    if m["y"]:
        days = make(_year_of(m["y"]))
        return fixed(days, "range", False) if days[0] < days[1] else None
    options = [d for d in years_around(ctx.today, make) if d[0] < d[1]]
    return ctx.bare(m, options, "range") if options else None


# --- counts of units ----------------------------------------------------------------------

_UNIT: Final = r"(?P<unit>个月|个星期|个礼拜|星期|礼拜|周|天|日|年|个小时|小时|个钟头|钟头|分钟)"
_UNIT_GRAIN: Final[dict[str, Grain]] = {
    "minute": "day",
    "hour": "day",
    "day": "day",
    "week": "week",
    "month": "month",
    "year": "year",
}


def _count(m: re.Match[str]) -> tuple[int, str] | None:
    unit = ZH_UNITS[m["unit"].removeprefix("个") if m["unit"] != "个月" else "个月"]
    if m["n"] == "半":
        if unit == "year":
            return 6, "month"
        if unit == "month":
            return 2, "week"
        return None
    count = _n(m["n"])
    if unit == "year" and count >= 1000:
        return None  # 2000年前: before the year 2000, or 2,000 years ago
    return count, unit


def _moved(ctx: Context, unit: str, count: int) -> date:
    if unit in ("hour", "minute"):
        delta = timedelta(hours=count) if unit == "hour" else timedelta(minutes=count)
        return (ctx.said_at + delta).date()
    return periods.shift_day(ctx.today, unit, count)


def _ago_later(m: re.Match[str], ctx: Context) -> Found | None:
    counted = _count(m)
    if counted is None:
        return None
    count, unit = counted
    sign = -1 if m["dir"].endswith("前") else 1
    moved = _moved(ctx, unit, sign * count)
    return fixed(periods.unit_interval(moved, unit), _UNIT_GRAIN[unit])


def _lasting(m: re.Match[str], ctx: Context) -> Found | None:
    if m.group().startswith("这两天"):
        return None  # "these couple of days": lately, not two days
    counted = _count(m)
    if counted is None:
        return None
    count, unit = counted
    return fixed((_moved(ctx, unit, -count), ctx.today + timedelta(days=1)), "duration")


RULES: Final = (
    Rule(
        _compile(
            r"(?P<w>大前天|大后天|前天|昨天|昨日|昨儿|今天|今日|今儿|明天|明日|明儿|后天)(?:个)?"
            rf"{_DAYPART}"
        ),
        _day,
    ),
    Rule(_compile(r"(?P<w>今晚|今早|今夜|昨晚|昨夜|明早|明晚)"), _day),
    Rule(
        _compile(rf"{_PREFIX}(?:个|一)?{_WEEK}(?P<wd>[一二三四五六日天1-7]){_DAYPART}"),
        _weekday_mod,
    ),
    Rule(
        _compile(
            rf"{NB}(?<![上这本下每个“「『\"]){_WEEK}(?P<wd>[一二三四五六日天1-7]){_DAYPART}"
            r"(?![”」』\"])"  # “星期五”: a name in quotes (Robinson Crusoe's Friday)
        ),
        _weekday,
    ),
    Rule(_compile(rf"{_PREFIX}(?:个|一)?{_WEEK}{_NOT_WEEK}"), _week),
    Rule(_compile(rf"{_PREFIX}(?:个)?周末"), _weekend_mod),
    Rule(_compile(r"(?<![上这本下每个])周末"), _weekend),
    Rule(
        _compile(
            rf"{_PREFIX}(?:个|一个)?月(?:(?P<part>上旬|中旬|下旬|初|底|末|{_MID}))?"
            r"(?![球亮光饼台份])"
        ),
        _month_rel,
    ),
    Rule(
        _compile(
            rf"{_YEAR_REL}(?:{MONTH}(?:份)?(?:{DAY}[日号]|(?P<mpart>上旬|中旬|下旬|初|底|末))?"
            rf"|的?(?P<s>[春夏秋冬])[天季]|年?(?P<part>上半年|下半年|初|底|末|{_MID}))?"
        ),
        _year_rel,
    ),
    Rule(
        _compile(
            rf"{NB}{YEAR}(?:{MONTH}(?:份)?(?:{DAY}[日号]|(?P<mpart>上旬|中旬|下旬|初|底|末))?"
            rf"|的?(?P<s>[春夏秋冬])[天季]|(?P<part>上半年|下半年|初|底|末|{_MID}))?"
            r"(?![代级龄前后])"
        ),
        _absolute,
    ),
    Rule(
        _compile(rf"(?<!\d)(?P<yy>\d{{2}})年{MONTH}(?:份)?(?:{DAY}[日号])?"),
        _absolute,
    ),
    Rule(
        _compile(
            rf"{NB}(?<![个年上下这本每]){MONTH}(?:份)?(?:{DAY}[日号]|(?P<mpart>上旬|中旬|下旬|初|底|末))?"
            r"(?![亮球光饼台])"
        ),
        _month,
    ),
    Rule(
        _compile(
            rf"{NB}(?<![月年周期拜第每个几]){DAY}[号日]"
            r"(?![楼线房床门位车厅室机口选手球员码鞋衣电池子游内后前])"
        ),
        _day_of_month,
    ),
    Rule(
        _compile(rf"(?<![个一\d年])(?P<part>月初|月{_MID}|月底|月末|上旬|中旬|下旬)"),
        _bare_month_part,
    ),
    Rule(
        _compile(
            r"(?<![个一\d年去今明前后〇零两三四五六七八九十])"
            rf"(?P<part>年初|年{_MID}|年底|年末|上半年|下半年)"
        ),
        _bare_year_part,
    ),
    Rule(_compile(r"(?P<which>这个|今|上个|下个)?(?<![每])(?P<s>[春夏秋冬])[天季]"), _season),
    Rule(
        _compile(r"(?P<d>[1-9]0|[一二三四五六七八九]十|[〇零一二三四五六七八九]{2})年代"), _decade
    ),
    Rule(
        _compile(
            rf"{NB}(?:{YEAR})?{MONTH}{DAY}[日号]?(?:到|至|-|~|～|—)"
            rf"(?:(?P<mo2>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月)?"
            r"(?P<d2>3[01]|[12][0-9]|0?[1-9]|三十一?|二?十[一二三四五六七八九]?|[一二三四五六七八九])[日号]"
        ),
        _day_range,
    ),
    Rule(
        _compile(rf"{NB}(?P<n>{N}|半){_UNIT}(?P<dir>以前|之前|前|以后|之后|后)"),
        _ago_later,
    ),
    Rule(_compile(rf"{NB}(?P<n>{N}){_UNIT}了"), _lasting),
    Rule(_compile(rf"(?:这|近|过去的?|最近的?){NB}(?P<n>{N}){_UNIT}(?:来|以来|里)?"), _lasting),
    Rule(_compile(rf"{NB}(?P<n>{N}){_UNIT}(?:来|以来)"), _lasting),
)
