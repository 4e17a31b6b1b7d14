"""Frames read from Chinese statements about the speaker (:mod:`memstrata.curate.frames`).

A Chinese speaker often leaves 我 out ("虾和螃蟹都不能吃", "在杭州的阿里巴巴做后端工程师"): a clause
is read as the speaker's when it names no one else first (the extractor passes only such
clauses). Values end at punctuation or a particle (了, 啦, 呢, 吧) and lose the words of time
around them (下个月, 上周: read by :mod:`memstrata.timeref`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Final

from memstrata.curate import lexicon
from memstrata.curate import patterns as re
from memstrata.curate.frames import Frame
from memstrata.util.scripts import HAN, HAN_SPACE

_END: Final = r"(?=[，。；！？、,.;!?~～\s]|$)"
#: a character of a value: not a break; a space only between two Latin words ("Tiong Bahru")
#: how long, said after a verb ("入职一个多月了", "加入三年了")
_HOW_LONG: Final = re.compile(
    r"^[一二两三四五六七八九十百千几半多\d]+[个多]{0,2}(?:年|月|天|日|周|星期|礼拜|小时|钟头)"
)
#: when a clause says it happened, at its start ("上个礼拜同 Kevin 分咗手")
_WHEN_ZH: Final = r"(?:上个?(?:礼拜|星期|周|月)|前几天|前两天|昨天|前天|最近|刚刚|刚|今年|去年)"
_SPAN: Final = r"(?:[^，。；！？、,.;!?~～\s（）()]|(?<=[A-Za-z]) (?=[A-Za-z]))"
_ME: Final = r"(?:我们|我|咱们|咱)?"
_ADV: Final = (
    r"(?:现在|目前|如今|已经|刚刚|刚|终于|也|还|都|一直|平时|一般|其实|本来|仍然|还是|最近|"
    r"马上|就|又|才|真的|确实)*"
)
_TIME_WORDS: Final = re.compile(
    r"(?:上|下|这|本)(?:个)?(?:周|星期|礼拜|月)(?:[一二三四五六日天末])?|(?:去|今|明|前|后)年"
    r"(?:[一二三四五六七八九十\d]{1,2}月)?|[一二三四五六七八九十\d]{1,2}月(?:[一二三四五六七八九十\d]{1,3}[日号])?"
    r"|(?:昨|今|明|前|后)天|年底|年初|月底|月初|春节|国庆|元旦|最近|以后|之前|以前|现在|刚才|"
    r"早上|晚上|下午|上午|中午|周末|每天|每周|每个周末|平时|一般"
)
_PARTICLES: Final = re.compile(r"(?:了|啦|呢|吧|哦|呀|啊|嘛|的)+$")
_REL: Final = "|".join(sorted((re.escape(r) for r in lexicon.RELATIONS_ZH), key=len, reverse=True))
#: kin said without 我 at a clause's start, in a turn about the speaker's own ("女儿朵朵三岁")
_NAMED_KIN: Final = (
    "女儿|儿子|老婆|老公|丈夫|妻子|闺女|大女儿|小女儿|大儿子|小儿子|女朋友|男朋友|未婚妻|未婚夫"
)
_PET: Final = "|".join(sorted((re.escape(p) for p in lexicon.PETS_ZH), key=len, reverse=True))
_JOB: Final = "|".join(sorted((re.escape(j) for j in lexicon.JOBS_ZH), key=len, reverse=True))
_SURNAMES: Final = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
    "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴"
    "莫孔向汤欧"
)
#: characters that follow a name rather than end it ("小雨下个月", "王磊说")
_AFTER_NAME: Final = frozenset("下上在是说也和跟去要很都还就又会想有把被给对叫从已了的")
#: words that begin right after a two-character name: their first character is not the
#: name's third ("林悦怀孕了" is 林悦, "王磊生病了" is 王磊)
_WORDS_AFTER_NAME: Final = (
    "怀孕",
    "生病",
    "生日",
    "生了",
    "出生",
    "住院",
    "出院",
    "出差",
    "过敏",
    "感冒",
    "发烧",
    "咳嗽",
    "上班",
    "下班",
    "加班",
    "回来",
    "回家",
    "退休",
    "喜欢",
    "觉得",
    "今天",
    "昨天",
    "明天",
    "最近",
    "刚刚",
    "一直",
    "每天",
    "体检",
    "确诊",
    "得了",
    "做了",
    "开始",
    "带着",
)


def _clean(value: str) -> str:
    value = value.strip(' ，。；！？、,.;!?~～"“”')
    while True:
        trimmed = _PARTICLES.sub("", _TIME_WORDS.sub("", value) if _time_only(value) else value)
        trimmed = re.sub(rf"(?:{_TIME_WORDS.pattern})$", "", trimmed)
        trimmed = re.sub(rf"^(?:{_TIME_WORDS.pattern})", "", trimmed)
        if trimmed == value:
            return value
        value = trimmed


def _time_only(value: str) -> bool:
    return bool(re.fullmatch(rf"(?:{_TIME_WORDS.pattern})+", value))


def _name_at(text: str, start: int) -> str | None:
    """A person's name starting at ``start`` (two or three characters, or a Latin name), if
    one is there."""
    latin = re.match(r"\s*([A-Z][a-z]+(?: [A-Z][a-z]+)?)", text[start:])
    if latin:
        return latin[1]
    run = re.match(rf"[{HAN}]{{2,4}}", text[start:])
    if run is None:
        return None
    chars = run[0]
    if (
        chars[0] in _SURNAMES
        and len(chars) >= 3
        and chars[2] not in _AFTER_NAME
        and not text.startswith(_WORDS_AFTER_NAME, start + 2)
    ):
        name = chars[:3]
    elif chars[0] in "小阿老" or chars[0] in _SURNAMES or len(chars) == 2 or chars[0] == chars[1]:
        name = chars[:2]
    else:
        return None
    if name[1] in _AFTER_NAME or name in _NOT_NAMES:
        return None
    return name


_NOT_NAMES: Final = frozenset(
    {
        "今年",
        "明年",
        "去年",
        "现在",
        "最近",
        "已经",
        "一直",
        "特别",
        "非常",
        "每天",
        "今天",
        "明天",
        "昨天",
        "一起",
        "上班",
        "工作",
        "生日",
        "刚刚",
        "下个",
        "上个",
        "这个",
        "那个",
        "什么",
        "怎么",
        "身体",
    }
)


def frames(text: str, earlier: Sequence[Frame] = (), sentence: str = "") -> list[Frame]:
    text = _joined(text)
    sentence = _joined(sentence)
    found: list[Frame] = []
    for reader in _READERS:
        found += reader(text, [*earlier, *found], sentence or text)
    return found


@lru_cache(maxsize=64)
def _joined(text: str) -> str:
    """Mixed text as a Chinese sentence is read: a space between two Chinese characters is a
    pause, as a comma ("还行吧 异地太累了" -> "还行吧，异地太累了"); the spaces beside a Latin word
    are taken out ("我对 ibuprofen 过敏" -> "我对ibuprofen过敏"); spaces between Latin words
    stay."""
    text = re.sub(HAN_SPACE, "，", text)  # a chat's pause
    return re.sub(rf"(?<=[{HAN}（）：，。！？])\s+|\s+(?=[{HAN}（）：，。！？])", "", text)


#: the end of a word for what someone is rather than what they are called: a people, a sign,
#: a member, a holder, a condition, a kind of person (回族, 金牛座, 党员, 素食者, 孕妇, 白领,
#: 路痴, 色盲, 新手, 球迷, 高中生); a name after 是 never ends so
_WHAT_ONE_IS: Final = re.compile(r"(?:[族座员者妇领痴盲迷控粉手党]|[中学究士科新考]生)$")


def _what_one_is(word: str, *, called: bool) -> bool:
    """Whether ``word``, after 我是 (or 我叫 when ``called``), says what the speaker is, not
    their name: a condition, a need, a diet or a medicine of the lexicon ("我是色盲", "我是高
    血压"), or, after 是, a word ending as a kind of person does ("我是回族", "我是新手")."""
    if lexicon.health_key(word) is not None:
        return True
    return not called and _WHAT_ONE_IS.search(word) is not None


def _name_age(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    out: list[Frame] = []
    if match := re.search(r"我(?:的名字)?(?:叫|是)(?=\S)", text):
        if text[match.end() :].startswith(("一", "个", "做", "在", "从", "学")) or re.match(
            rf"\S{{0,6}}(?:{_JOB})", text[match.end() :]
        ):
            pass
        elif (
            (name := _name_at(text, match.end())) is not None
            and ("叫" in match[0] or re.match(r"[，,。！!\s]|$", text[match.end() + len(name) :]))
            and not _what_one_is(name, called="叫" in match[0])
        ):
            out.append(Frame("name", name))
    if match := re.search(
        r"我(?:今年|现在)?(?P<a>\d{1,3}|[一二三四五六七八九十]{1,3})岁|今年(?P<b>[1-9]\d)(?:岁)?(?=[，,。\s了]|$)",
        text,
    ):
        out.append(Frame("age", f"{match['a'] or match['b']}岁"))
    if match := re.search(rf"我的生日(?:是|在)(?P<v>{_SPAN}{{2,12}})", text):
        out.append(Frame("birthday", _clean(match["v"])))
    return out


#: giving one's time, not a job ("在社区中心做志愿者", "去养老院当义工")
_VOLUNTEER_ZH: Final = re.compile(
    rf"(?P<neg>不再|不)?(?:在|去|到)(?P<org>{_SPAN}{{2,16}}?)(?:做|当)(?:志愿者|义工|志愿服务)"
)


def _work(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    if given := _VOLUNTEER_ZH.search(text):  # where the speaker gives their time
        place = _clean(given["org"])
        if place:
            return [Frame("volunteer", place, place, negated=bool(given["neg"]))]
    out: list[Frame] = []
    role = org = None
    if match := re.search(
        rf"^{_ME}{_ADV}在(?P<org>{_SPAN}{{2,16}}?)(?:工作|上班|任职|实习|打工)", text
    ) or re.search(
        rf"^{_ME}{_ADV}在(?P<org>{_SPAN}{{2,24}}?)(?:做|当|担任)(?P<role>{_SPAN}{{2,30}})", text
    ):
        org, role = match["org"], match.groupdict().get("role")
    elif match := re.search(
        rf"我{_ADV}是(?:一名|一个|一位|个)?(?P<org>{_SPAN}{{2,10}})的(?P<role>{_SPAN}{{0,6}}(?:{_JOB}))",
        text,
    ):
        org, role = match["org"], match["role"]
    elif match := re.search(
        rf"(?:我|^|[，,]){_ADV}(?:是|当)(?:一名|一个|一位|个)?(?P<role>{_SPAN}{{0,8}}?(?:{_JOB}))",
        text,
    ):
        role = match["role"]
    if org is None and (
        before := re.search(
            rf"(?:^|[，,！!。])(?P<org>[{HAN}A-Za-z][{HAN}A-Za-z ]{{1,14}}?)"
            r"(?:那边|这边|公司)(?:[^，。]{0,10}?)入职",
            text,
        )
    ):
        org = (
            before["org"]
            if not re.match(r"(?:我|刚|已经|下个月|上个月|明天)", before["org"])
            else None
        )
    if match := re.search(rf"升(?:职)?(?:为|到|成|了)?(?P<role>{_SPAN}{{2,30}}?)了", text):
        role = match["role"]  # "我上周升 associate partner 了": promoted
    if match := re.search(
        rf"(?:入职(?:了)?|加入(?:了)?|跳槽(?:到|去)(?:了)?|(?:正式)?转到|调到|调去|调任|去了?(?=\S{{2,12}}(?:上班|工作))|拿到(?:了)?"
        rf"(?=\S{{2,12}}的\s*offer)|接受(?:了)?(?=\S{{2,12}}的\s*offer))(?P<org>{_SPAN}{{2,30}}?)"
        rf"(?:的\s*offer|上班|工作|(?=[，。；！？、,.;!?~～]|$)|当|做)",
        text,
    ):
        org = match["org"]
        after = (
            match.end() - 1 if text[match.end() - 1 : match.end()] in ("当", "做") else match.end()
        )
        if role is None and (
            found := re.search(rf"(?:当|做|担任)(?P<role>{_SPAN}{{2,12}})", text[after:])
        ):
            role = found["role"]
    if role:
        role = _clean(re.sub(r"^(?:做|当|是|担任)", "", role.strip()))  # "做senior PM"
        if role:
            out.append(Frame("job", role))
    if org is None and re.search(r"换(?:了)?工作|跳槽|新工作", sentence or text):
        joined = re.search(rf"(?:去了|到了|进了)(?P<org>{_SPAN}{{2,12}})", text)
        if joined and not _ACTIVITIES.search(joined["org"]):
            org = joined["org"]  # "我换工作了，去了阿里": where the new job is
    if org and _HOW_LONG.match(org):
        org = ""  # "入职一个多月了": how long since joining, not where
    if org:
        org = _clean(re.sub(r"^(?:一家|一个|家)", "", org))
        if re.search(r"[不没]|^(?:请|就|才|以后|之后|后)", org):
            org = ""  # "刚入职请不了假": what follows joining, not where
        if org and org not in ("家", "这里", "那里", "这边", "公司"):
            out.append(Frame("employer", org))
    if match := re.search(
        rf"(?:从(?P<org>{_SPAN}{{2,16}}?)|(?P<at>[{HAN}A-Za-z]{{2,12}}?)(?:那边|这边)(?:已经)?(?:提了)?)?"
        rf"(?:离职|辞职|辞掉了工作|被裁|被辞退|失业)",
        text,
    ):
        left = _clean(match["org"] or match.groupdict().get("at") or "")
        out.append(Frame("employer", left or "没有工作", negated=True, target=left or None))
    if re.search(
        r"(?:我|^)(?:已经|终于|也|正式|刚|刚刚)*(?<![快要将])退休(?:了)?", text
    ) or re.search(rf"^{_SPAN}{{0,6}}?(?:正式|终于|已经)退休了", text):
        out.append(Frame("job", "退休"))  # "六月底正式退休了"
    return out


#: homes that name no place ("小区", "公寓")
_NO_PLACE: Final = frozenset(
    {"小区", "公寓", "房子", "地方", "家", "宿舍", "出租屋", "那边", "这边", "这里", "那里"}
)
#: English words after 住 that say how long or with whom, not where ("跟我们住 for good")
_NO_PLACE_EN: Final = re.compile(
    r"^(?i:for good|for now|for a while|for a bit|forever|together|alone|here|there|with\b.*|"
    r"temporarily|permanently|full[- ]time|long[- ]term)$"
)
#: a length of time ("两个月", "三天"), which is no place
_DURATION: Final = re.compile(
    r"^[一二两三四五六七八九十半几\d]+(?:个)?(?:月|天|周|星期|年|小时|晚)"
)


def _school(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    out: list[Frame] = []
    if match := re.search(
        rf"在(?P<org>{_SPAN}{{2,14}}?(?:大学|学院|中学|高中|小学|学校))(?:读|上|念)", text
    ):
        out.append(Frame("school", match["org"]))
    elif match := re.search(  # "我现在武大计算机专业大四", "我在复旦读研二": the year says it
        rf"我(?:现在|目前|今年)?(?:是|在)?(?P<org>[{HAN}]{{1,10}}?(?:大学|学院|大))"
        rf"(?:读|念|上)?(?:(?P<m>[{HAN}]{{2,8}}?)专业)?(?:的)?"
        r"(?:大[一二三四五]|研[一二三]|博[一二三四五]|本科[一二三四]?年级)",
        text,
    ):
        out.append(Frame("school", match["org"]))
        if match["m"]:
            out.append(Frame("major", match["m"]))
    if match := re.search(
        rf"(?:专业是|学的是|读的是|转专业(?:到|去)?(?:了)?)(?P<m>{_SPAN}{{2,10}}?)(?:专业)?{_END}",
        text,
    ):
        out.append(Frame("major", _clean(match["m"])))
    return out


#: who may stand before the 住 of a home: the speaker, or nothing (the speaker left out); not
#: another person ("闺女住天河区") nor a verb whose result 住 is ("扛得住", "记住")
_LIVER: Final = r"(?:(?<![^\s，。；！？、,.;!?~～])|(?<=我们)|(?<=我)|(?<=咱们)|(?<=咱))"
#: a stay that ends, or a stay of a while: not a home ("住到二月底", "住两个月")
_STAY: Final = re.compile(
    r"住(?:到|至)|住(?:上|了)?(?:一|两|三|四|五|六|七|八|九|十|几|半|\d)+(?:个)?(?:天|晚|周|礼拜|星期|月)(?!了)"
)
_IN_HOSPITAL: Final = re.compile(r"住(?:了|过)?[^，。！？\s]{0,4}院")
#: a relative's home ("住在闺女家"): whose home, not where
_KIN_HOME: Final = re.compile(rf"^(?:{_REL}|{_NAMED_KIN})家$")

#: the ways a home is said, in the order they are tried, each with whether it is a move (which
#: holds whatever the words around it; "住在双廊" on a trip, "住到二月底", are no home)
_HOMES: Final = (
    (re.compile(rf"在(?P<place>{_SPAN}{{2,12}}?)(?:安顿下来|安家|定居|扎根)"), True),
    (
        re.compile(
            rf"(?:从(?P<old>{_SPAN}{{2,10}}?))?(?:搬到|搬去|搬家到|移居到?|定居在?|落户)(?:了)?"
            rf"(?P<place>{_SPAN}{{2,12}})"
        ),
        True,
    ),
    # how long since one came to live there ("我到广州一个多月啦")
    (
        re.compile(
            rf"(?:^|我)(?:来|到)(?P<place>{_SPAN}{{2,8}}?)(?:已经|快|差不多|有)?"
            rf"(?:一|两|三|四|五|六|七|八|九|十|半|几|\d)+(?:多)?(?:个)?(?:多)?(?:月|年|周|星期)"
            r"(?:了|啦|喽)"
        ),
        False,
    ),
    (
        re.compile(
            rf"{_LIVER}{_ADV}(?:住在|生活在|定居在|住(?![了过着到至得]))(?P<place>{_SPAN}{{2,12}})"
        ),
        False,
    ),
    # where one has lived so long ("我在上海住了十几年了")
    (
        re.compile(
            rf"{_LIVER}{_ADV}在(?P<place>{_SPAN}{{2,10}}?){_ADV}(?:住|生活)(?:了|过)?"
            r"(?:一辈子|很多年|好多年|多年|这么多年|(?:一|两|三|四|五|六|七|八|九|十|几|\d)+(?:多)?(?:个)?"
            r"(?:月|年))"
        ),
        False,
    ),
    # a home shown as "this" one ("香港这个flat小得可怜", "metrotown 呢间屋好细")
    (
        re.compile(
            rf"(?:^|(?<=[\s，。；！？、,.;!?~～]))(?P<place>(?:(?![我你他她它咱说想看觉得是有的喜爱])"
            rf"{_SPAN}){{2,12}}?)\s?(?:这|呢)(?:个|间|套)?\s?"
            r"(?:flat|apartment|condo|房子|屋|公寓|新家)"
        ),
        False,
    ),
    # a home told by the room rented or bought there
    (
        re.compile(
            rf"在(?P<place>{_SPAN}{{2,10}}?)(?:租了|租的|买了|买的)(?:个|一个|一套|套|间|一间)?"
            r"(?:房子|房|单间|公寓|一居室|两居室|三居室|小区|[一二两三四]室[一二两]?厅)"
        ),
        True,
    ),
)

#: a home denied, then the right one: "我不住望京，是酒仙桥", "我其实没住在浦东，住在徐汇"
_HOME_CORRECTED: Final = re.compile(
    rf"我(?:其实|现在|已经)?(?:不|没)住(?:在)?(?P<old>{_SPAN}{{2,10}}?)[，,]\s*"
    rf"(?:其实|而)?(?:是|住在?|在)(?P<place>(?![来去])(?:{_SPAN}){{1,9}}?[^的，,。；！？!?\s])"
    r"(?=[，,。；！？!?]|$)"
)
#: words of a trip: a place stayed at on one is not where one lives
_TRAVEL: Final = re.compile(
    r"玩|旅游|旅行|出差|度假|酒店|民宿|宾馆|海景房|订好|订了|机票|飞|trip|hotel|airbnb", re.I
)


def _home(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    out: list[Frame] = []
    if re.search(r"(?:打算|准备|计划|要|想|将)(?:要)?(?:搬|移居)", text) or re.search(
        rf"{_SOON}[^，。；！？]{{0,4}}?(?:就|会)?(?:搬|移居)", text
    ):
        return out  # a move to come is a plan ("下个月搬去杭州")
    corrected = _HOME_CORRECTED.search(sentence or text)
    if (
        corrected
        and corrected["place"] in text
        and corrected["old"] not in text
        and corrected["place"] not in _NO_PLACE
        and "的" not in corrected["place"]  # "是租的房子": what kind of home, not where
    ):
        # "我不住望京，是酒仙桥": the home said instead of the one denied (read once, in the
        # clause that names it)
        return [Frame("residence", _clean(corrected["place"]))]
    travel = bool(_TRAVEL.search(sentence or text))  # "住在双廊" on a trip is no home
    # "住了五天院", "住到二月底": a stay, not a home
    stay = bool(_STAY.search(sentence or text) or _IN_HOSPITAL.search(text))
    for pattern, moved in _HOMES:
        match = pattern.search(text)
        if match is None or ((travel or stay) and not moved):
            continue
        place = _clean(re.sub(r"(?:了|住|生活|工作)$", "", match["place"]))
        if _DURATION.match(place):
            continue  # "住两个月": for how long, not where
        place = re.sub(r"^(?:一个|一家|这个|那个|一套|一间)", "", place)
        if place in _NO_PLACE or _KIN_HOME.match(place) or _NO_PLACE_EN.match(place):
            continue  # "住在一个小区", "住在闺女家": a kind of home, whose home; not where
        if not re.search(r"以前|之前|小时候", text):
            out.append(Frame("residence", place))
        break
    if match := re.search(
        rf"我(?:是(?P<a>{_SPAN}{{2,6}}?)人{_END}|老家(?:在|是)(?P<b>{_SPAN}{{2,10}})|来自(?P<c>{_SPAN}{{2,10}})|"
        rf"在(?P<d>{_SPAN}{{2,8}}?)长大|出生在(?P<e>{_SPAN}{{2,8}}))",
        text,
    ):
        where = next(g for g in match.groups() if g)
        out.append(Frame("hometown", _clean(where)))
    return out


def _people(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    match: re.Match[str] | None
    out: list[Frame] = []
    for match in re.finditer(  # "Daniel（my husband）", "Mochi（柴犬）"
        rf"(?P<n>[A-Z][a-z]+|[{HAN}]{{2,3}})[（(]\s*(?:my\s+)?(?P<rel>[A-Za-z]+|[{HAN}]{{1,4}})\s*[)）]",
        text,
    ):
        rel = match["rel"].casefold()
        kind = lexicon.RELATIONS_EN.get(rel) or lexicon.RELATIONS_ZH.get(match["rel"])
        if kind:
            out.append(
                Frame(kind, f"{rel} {match['n']}", None if kind == "partner" else match["n"])
            )
        elif match["rel"] in lexicon.PETS_ZH or rel in lexicon.PETS_EN:
            out.append(Frame("pet", f"{match['rel']} {match['n']}", match["n"]))
    own = [*re.finditer(rf"(?:我|我们)(?:的|家)?(?P<rel>{_REL})", text)]
    if any(f.spec.section == "Profile" for f in earlier) or own:  # "我老婆…，女儿朵朵三岁"
        own += re.finditer(rf"(?:^|[，,、])(?P<rel>{_NAMED_KIN})(?=[{HAN}A-Z])", text)
    elif (named := re.match(rf"(?P<rel>{_NAMED_KIN})(?=[{HAN}A-Z])", text)) and _name_at(
        text, named.end()
    ):
        own.append(named)  # "女朋友小雅在国贸上班": a clause that opens with kin and a name
    for match in own:
        rel = match["rel"]
        kind = lexicon.RELATIONS_ZH[rel]
        rest = match.end()
        name = None
        if called := re.match(r"(?:叫|名叫|名字叫)", text[rest:]):
            name = _name_at(text, rest + called.end())
        elif rel not in ("孩子", "宝宝") and len(rel) > 1:  # 我妈, 我爸: no name after one
            name = _name_at(text, rest)
        if name is None and kind in ("family", "friend"):
            continue
        if name is None and rel in ("孩子", "宝宝"):
            continue
        value = f"{rel}{name}" if name else rel
        gone = bool(re.search(r"去世|走了|过世", text[rest:]))
        out.append(Frame(kind, value, None if kind == "partner" else name or rel, negated=gone))
    if (
        match := re.search(
            r"我(?:已经|刚)?(?P<s>结婚了|已婚|订婚了|离婚了|单身|分手了|分了手|离了婚)", text
        )
        or re.search(  # "我们领证了", "他向我求婚了": married, engaged
            r"(?:我们|我俩)?(?P<s>领证了|领了结婚证|扯证了)|(?:向我|跟我)求婚了?", text
        )
        or re.search(
            rf"我们(?P<s>结婚了|订婚了|离婚了|分手了|分了手|离了婚)|(?:我|^{_WHEN_ZH}?)(?:跟|和|与|同(?![事学意样时一屋住]))"
            rf"(?P<who>{_SPAN}{{1,8}}?)(?:已经|刚)?(?P<s2>离婚了|分手了|分了手|离了婚|订婚了|结婚了)",
            text,
        )
    ):
        found = match.groupdict()
        status = _clean(found.get("s") or found.get("s2") or "订婚了")
        status = {
            "领证": "结婚",
            "领了结婚证": "结婚",
            "扯证": "结婚",
            "分了手": "分手",  # the verb split by its 了 ("同 Kevin 分咗手")
            "离了婚": "离婚",
        }.get(status, status)
        ended = status in ("离婚", "单身", "分手")
        who = _clean(found.get("who") or "")
        if found.get("s2") and not ended and who and _name_at(who, 0) == who:
            status = f"和{who}{status}"  # "和小雅订婚了": engaged, and to whom
        out.append(Frame("partner", status, negated=ended))
    if match := re.search(
        r"(?:是个|是一个|生了(?:个|一个)?)(?P<r>女儿|儿子|女孩|男孩|闺女)", sentence or text
    ):
        names = [
            found["n"] or found["m"]
            for found in re.finditer(
                r"(?:英文名|中文名|小名|大名|名字|取名|起名)(?:叫|是)?\s*(?P<n>[A-Z][a-z]+|"
                rf"[{HAN}]{{2,3}})|(?<=[，,\s])叫(?P<m>[A-Z][a-z]+|[{HAN}]{{2,3}})"
                r"(?=[，。！!,.\s]|$)",
                sentence or text,
            )
        ]
        rel = {"女孩": "女儿", "男孩": "儿子", "闺女": "女儿"}.get(match["r"], match["r"])
        if names:
            value = f"{rel}{'/'.join(dict.fromkeys(names))}"
            out.append(Frame("child", value, names[0]))
    if match := re.search(r"我有(?P<n>[一二两三四五\d])个(?P<r>孩子|儿子|女儿|孙子|孙女)", text):
        kind = "family" if match["r"].startswith("孙") else "child"
        out.append(Frame(kind, f"{match['n']}个{match['r']}", match["r"]))
    return out


_LANG: Final = "|".join(
    sorted(
        (re.escape(w) for ws in lexicon.LANGUAGES.values() for w in ws if not w.isascii()),
        key=len,
        reverse=True,
    )
)


def _languages(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    match = re.search(rf"(?P<v>会说|能说|会讲|说|讲|在学|学了|开始学|正在学)(?P<x>{_LANG})", text)
    if match is None:
        return []
    learning = "学" in match["v"]
    return [
        Frame("language", f"{key}（在学）" if learning else key, key)
        for key in lexicon.canonical(lexicon.LANGUAGES, match["x"])
    ]


def _pets(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    out: list[Frame] = []
    if match := re.search(
        rf"(?:我|我们)(?:家)?(?:养了|养着|有|领养了|收养了|捡了)(?P<n>[一两二三\d])?(?:只|条|个)?"
        rf"(?P<k>{_PET})(?:[，,]?(?:叫|名叫|名字叫)(?P<name>{_SPAN}{{1,6}}))?",
        text,
    ) or re.search(rf"(?:我|我们)(?:家)?的(?P<k>{_PET})(?:叫|名叫)(?P<name>{_SPAN}{{1,6}})", text):
        name = match.groupdict().get("name")
        name = _clean(name) if name else None
        value = f"{match['k']}，叫{name}" if name else match["k"]
        out.append(Frame("pet", value, name or match["k"]))
    return out


def _health(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    match: re.Match[str] | None
    out: list[Frame] = []
    exclusive = bool(re.search(r"只(?:是)?(?:对|有)", text))
    # "我海鲜过敏", and the allergen said first: "别嘌醇我过敏起疹子了"
    bare = re.search(r"(?P<x>[^，。；！？、我\s]{1,8}?)(?:我)?(?:也|都)?(?P<neg>不)?过敏", text)
    if bare is not None and not (
        lexicon.canonical(lexicon.FOODS, bare["x"])
        or lexicon.canonical(lexicon.MEDICATIONS, bare["x"])
    ):
        bare = None
    if (
        match := re.search(
            rf"对(?P<x>{_SPAN}{{1,14}}?)(?:很|非常|特别|严重|有点|有些|比较|也|都)*(?P<neg>不)?过敏",
            text,
        )
        or bare
    ) and not _someone_named_before(text[: match.start()]):
        said = _clean(match["x"])
        said = re.sub(r"^(?:我|其实|只|只是|还|也|都|有点|严重|说是|据说|医生说|是)+", "", said)
        denied = re.match(r"(?:并|也|都)?(?:不是|没有|并非)(?:对)?", said)
        if denied:  # "乐乐其实不是花生过敏": not allergic to it
            said = said[denied.end() :]
        besides = re.search(rf"除了(?P<a>{_SPAN}{{1,10}}?)(?:以外|之外)?[，,]?(?:还|也)对", text)
        if besides:
            said = f"{_clean(besides['a'])}、{said}"  # "除了芒果还对腰果过敏": both
        before = text[max(0, match.start() - 4) : match.start()]
        if denied or (match["neg"] is None and re.search(r"不过敏|没有过敏|不再过敏", text)):
            negated = True
        elif re.search(r"(?:不是|并不|并没有|没有|从来不|从没)$", before):
            negated = True  # "我不是对虾子过敏，是对螃蟹过敏"
        else:
            negated = bool(match["neg"])
        out += _allergens(said, negated=negated, exclusive=exclusive and not negated)
    if not out and (
        found := re.search(  # "过敏原检测出来是腰果和开心果": what the test found
            rf"过敏原(?:检测|测试|检查)?(?:出来|结果)?(?:是|为|显示)(?P<x>{_SPAN}{{1,14}})", text
        )
    ):
        said = _clean(found["x"])
        if lexicon.canonical(lexicon.FOODS, said) or lexicon.canonical(lexicon.MEDICATIONS, said):
            out += _allergens(said, negated=False, exclusive=exclusive)
    if not out and (
        tested := re.search(  # "过敏原检测 芒果是阴性": no allergy to it
            rf"(?P<x>{_SPAN}{{1,8}}?)(?:是|也是|结果是|测出来是)?阴性", text
        )
    ):
        said = re.sub(r"^(?:结果|检测|测试)", "", _clean(tested["x"]))
        if lexicon.canonical(lexicon.FOODS, said) and re.search(
            r"过敏|检测|测试", sentence or text
        ):
            out += _allergens(said, negated=True, exclusive=False)
    if not out and (
        reacted
        := re.search(  # "那年打头孢起了一身疹子": a reaction to what was taken is an allergy
            rf"(?:打了?|吃了?|用了?)(?P<x>{_SPAN}{{1,8}}?)(?:以后|之后|后)?(?:就|会|都)?"
            r"(?:起了?|出了?|长了?)(?:一身|满身)?(?:疹子|红疹|荨麻疹|风团)|"
            rf"(?:打了?|吃了?|用了?)(?P<y>{_SPAN}{{1,8}}?)(?:以后|之后|后)?(?:就|会)?(?:休克|喘不上气|过敏)",
            text,
        )
    ):
        said = _clean(reacted["x"] or reacted["y"])
        if lexicon.canonical(lexicon.FOODS, said):
            out += _allergens(said, negated=False, exclusive=False)
    said_not = [  # "海鲜不能吃", "我不能吃海鲜": the food before, or after
        found
        for found in (
            re.search(
                rf"(?P<x>{_SPAN}{{1,10}}?)(?:都|也)?(?:不能|不可以|不敢|没法)(?:吃|碰|喝|用)", text
            ),
            re.search(rf"(?:不能|不可以|不敢|没法)(?:吃|碰|喝)(?P<x>{_SPAN}{{1,10}})", text),
        )
        if found is not None and lexicon.canonical(lexicon.FOODS, found["x"])
    ]
    if said_not:
        match = said_not[0]
        keys = lexicon.canonical(lexicon.FOODS, match["x"])
        kind = "allergy" if re.search(r"过敏|休克|起疹子|呼吸困难", sentence or text) else "avoids"
        if keys and kind == "allergy" and not out:
            out += _allergens(_clean(match["x"]), negated=False, exclusive=exclusive)
        elif keys and kind == "avoids":
            out += [Frame(kind, _clean(match["x"]), "+".join(sorted(keys)))]
    if not out and (
        match := re.search(
            rf"(?P<x>{_SPAN}{{1,8}}?)(?:其实)?(?:我)?(?:打过的|吃过的|用过的)?(?:没问题|没事|没得事|"
            rf"没啥事|可以吃|能吃|不过敏)(?:了)?",
            text,
        )
    ):
        corrects = re.search(r"其实|原来|后来|现在|复查|检查|医生说", sentence or text)
        if any(f.kind in ("allergy", "avoids") for f in earlier) or "过敏" in text or corrects:
            said = re.sub(r"^(?:其实|但是|不过|但|我)+", "", _clean(match["x"]))
            # what is fine is a food or a medicine ("螃蟹没问题"), not "削了皮吃就没事"
            if lexicon.canonical(lexicon.FOODS, said) or lexicon.canonical(
                lexicon.MEDICATIONS, said
            ):
                out += _allergens(said, negated=True, exclusive=False)
    if (
        match := re.search(
            rf"(?:我|^)(?:自己)?{_ADV}(?:有|得了|患有)\s*(?P<x>[A-Za-z][A-Za-z0-9' -]{{2,30}})",
            text,
        )
        or re.search(
            rf"(?:我|^)(?:自己|本人)?{_ADV}(?:有|得了|患有|查出(?:了)?|被诊断(?:出|为)?(?:了)?|确诊(?:了)?|是)"
            rf"(?:点|一点|轻微的)?(?P<x>{_SPAN}{{2,10}})",
            text,
        )
        or re.search(
            rf"(?:查了是|查出来是|查出是|诊断是|诊断为|确诊为|确诊是|原来是)(?P<x>{_SPAN}{{2,10}})",
            text,
        )
        or re.search(
            r"(?P<x>血糖高|血压高|血脂高|乳糖不耐受?|怀孕了|胃不好|腰不好)|"
            r"(?P<y>血糖|血压|血脂)(?:有点|有些|偏|一直|比较)高|"
            r"(?P<z>怀孕)(?:[一二三四五六七八九十两几\d]+(?:个)?(?:多)?(?:月|周|礼拜|星期))",
            text,
        )
        # a known condition said right after 我, its name in Latin letters ("我有 type 2
        # diabetes"), or with nothing but 我 before it ("我甲亢，在吃甲巯咪唑")
        or re.search(
            rf"(?:^|我)(?:自己)?{_ADV}(?:正在|在|处于)?\s*(?P<x>{_CONDITION_WORDS}|breastfeeding|"
            # how long it has lasted may follow it ("我高血压好多年了")
            r"pregnant)(?=[，。；！？、,.;!?\s]|$|(?:好|很)?多年|好几年|[一两三四五六七八九十\d几]+年)",
            text,
        )
    ):
        said = _condition_only(match["x"] or (f"{match['y']}高" if match["y"] else "怀孕了"))
        keys = lexicon.canonical(lexicon.CONDITIONS, said)
        negated = bool(re.search(r"好了|治好|痊愈|没有了|不再", text))
        out += [Frame("condition", _clean(said), key, negated) for key in keys]
    # said without 我有: "偏头痛偶尔发作", "医生说缺铁性贫血", "老毛病又犯了" of a known one
    # only when nobody else is spoken of in the sentence: a clause without its subject is
    # about whoever the sentence is about ("老周喘不上气…医生说是慢阻肺急性加重")
    said_so = _CONDITION_CUE.search(sentence or text) and not _someone_else(sentence or text)
    if said_so and not any(f.kind == "condition" for f in out):
        for key in lexicon.canonical(lexicon.CONDITIONS, text):
            word = next((w for w in lexicon.CONDITIONS[key] if not w.isascii() and w in text), key)
            if not re.search(rf"(?:没有|没|不是|排除了?|并非|无){re.escape(word)}", text):
                # "没有高血压" says none; "甲亢复查好了" ends one; said plainly either way
                cured = bool(
                    re.search(rf"{re.escape(word)}\S{{0,4}}?(?:好了|痊愈|治好了|没了)", text)
                )
                out.append(Frame("condition", word, key, negated=cured, plain=True))
    out += _medication(text, sentence)
    avoided = _diet(text)
    allergic = {k for o in out if o.kind == "allergy" and o.key for k in o.key.split("+")}
    # what the allergy read already names is not avoided apart ("虾和螃蟹都不能吃，吃了会过敏")
    avoided = [f for f in avoided if not (f.kind == "avoids" and f.key in allergic)]
    if _REACTS.search(sentence or text):  # "海鲜我碰不得，一吃就过敏": an allergy, not a taste
        avoided = [
            Frame("allergy", f.value, f.key) if f.kind == "avoids" and f.key else f for f in avoided
        ]
    out += avoided
    out += _access(text)
    out += _restriction(text, sentence)
    return out


#: the body's reaction to what is eaten: what is not eaten for it is an allergy
_REACTS: Final = re.compile(
    r"(?:一吃就|吃了(?:会|就)?|一碰就|会)(?:过敏|起疹子|起红疹|休克|喘不上气|肿)"
)


#: who may tell a person what not to do for their health
_CARER_ZH: Final = r"(?:医生|大夫|医院|理疗师|康复师|护士|主任|专家|doctor|physio)"
#: what they say must not be done ("医生让我三个月别提重物", "医生说别久坐")
_RESTRICTED_ZH: Final = re.compile(
    rf"{_CARER_ZH}\s*(?:说|讲|让我|叫我|嘱咐|交代|要求|建议|不让我)(?:我)?[^，。；！？\s]{{0,6}}?"
    rf"(?P<neg>最好不要|最好别|别|不能|不要|不许|不准|不可以|禁止)(?P<x>{_SPAN}{{1,10}})",
    re.IGNORECASE,
)
#: a clause that goes on with what the doctor said ("医生说别久坐 别弯腰搬重物")
_MORE_ZH: Final = re.compile(
    rf"^(?:也|还|而且|并且)?(?P<neg>别|不能|不要|不许|不准|禁止)(?P<x>{_SPAN}{{1,10}})"
)
_CARER_SAID_ZH: Final = re.compile(
    rf"{_CARER_ZH}\s*(?:说|讲|让我|叫我|嘱咐|交代|要求|建议)", re.IGNORECASE
)


def _restriction(text: str, sentence: str = "") -> list[Frame]:
    """What a doctor or a therapist says the speaker must not do, in the clause that says so
    or one that goes on from it; a food or a drink not to have is read by the diet and the
    drinks."""
    match = _RESTRICTED_ZH.search(text)
    if match is None and _CARER_SAID_ZH.search(sentence or text):
        match = _MORE_ZH.match(text.strip())
    if match is None:
        return []
    said = _clean(match["x"])
    if not said or re.match(r"(?:担心|着急|害怕|紧张|乱想|多想)", said):
        return []  # "医生说别担心": comfort, not a restriction
    if match["x"].endswith("了") or lexicon.canonical(lexicon.MEDICATIONS, match["neg"] + said):
        return []  # "羽毛球以后也别打了" stops a habit (read as such); 别嘌醇 is a medicine
    if lexicon.canonical(lexicon.FOODS, said) or lexicon.canonical(lexicon.DRINKS, said):
        return []
    return [Frame("restriction", f"{match['neg']}{said}", said[:6])]


#: the conditions the lexicon names in Chinese, longest first
_CONDITION_WORDS: Final = "|".join(
    sorted(
        (re.escape(w) for ws in lexicon.CONDITIONS.values() for w in ws if not w.isascii()),
        key=len,
        reverse=True,
    )
)
#: what says a condition is the speaker's without 我有: it comes on, is diagnosed, or a doctor
#: names it
_CONDITION_CUE: Final = re.compile(
    r"发作|又犯|犯了|复发|频繁|加重|越来越严重|诊断|确诊|查出|结果|核磁|拍了片|体检|检查|复查|"
    r"(?:医生|大夫|doctor|dr)\s*(?:说|讲|話|话)",
    re.IGNORECASE,
)
#: another person spoken of in the clause: their condition is not the speaker's
_SOMEONE_ELSE: Final = re.compile(
    r"[他她它]|老公|老婆|老伴|丈夫|妻子|爸|妈|儿子|女儿|孩子|宝宝|哥|姐|弟|妹|爷爷|奶奶|外公|外婆|朋友|同事|"
    r"婆婆|公公|岳母|岳父|丈母娘|老丈人|姥姥|姥爷|闺女|老人"
)


#: a person called by name: 老周, 小雯, 阿明 (not 小时, 老是, 小心…), or a name in Latin letters
_NAMED: Final = re.compile(
    rf"[老小阿](?![时心是了点些的毛样])[{HAN}]|(?<![A-Za-z])[A-Z][a-z]{{2,}}(?![A-Za-z])"
)


def _someone_named_before(head: str) -> bool:
    """Whether the words before an allergy name someone other than the speaker ("小雨对花生过
    敏", "Ethan 对花生过敏"): theirs is read by :mod:`memstrata.curate.cared_for`."""
    head = re.sub(r"^(?:对了|还有|另外|而且|然后|哦)[，,\s]*", "", head.strip())
    if not head or "我" in head:
        return False
    return bool(
        re.fullmatch(rf"(?:[老小阿][{HAN}]|[{HAN}]{{2,3}}|[A-Z][a-z]+)\s*(?:也|都|还)?", head)
        and not re.fullmatch(r"(?:其实|本来|一直|从小|现在|以前|后来|医生说|据说|说是)\s*", head)
    ) or bool(_SOMEONE_ELSE.search(head))


def _someone_else(text: str) -> bool:
    """Whether ``text`` speaks of someone other than its speaker: a pronoun, a relation, or
    a name (a word in Latin capitals that names no medicine or condition)."""
    if _SOMEONE_ELSE.search(text):
        return True
    for named in _NAMED.finditer(text):
        word = named[0]
        if not word.isascii() or not (
            lexicon.canonical(lexicon.MEDICATIONS, word)
            or lexicon.canonical(lexicon.CONDITIONS, word)
        ):
            return True
    return False


def _allergens(said: str, *, negated: bool, exclusive: bool) -> list[Frame]:
    if not said:
        return []
    # a food, or a medicine ("对别嘌醇过敏"): the lexicon's key either way
    keys = lexicon.canonical(lexicon.FOODS, said) or lexicon.canonical(lexicon.MEDICATIONS, said)
    if not keys:
        keys = [k for k in re.split(r"[和、跟与及,，]", said) if k]
    if not keys:
        return []
    return [Frame("allergy", said, "+".join(sorted(keys)), negated=negated, exclusive=exclusive)]


#: words that make a clause about medicine: a name prescribed, taken or switched in it is a drug
_MEDICAL_ZH: Final = re.compile(
    r"医生|医院|复查|处方|开了|开的|每天一片|一天一片|毫克|mg|药|剂量|吃法"
)


#: the medications the lexicon names in Chinese, longest first ("二甲双胍", "思力华"), and a
#: name with the ending of its drug class (他汀 statins, 沙坦 sartans, 地平, 洛尔, 普利, 霉素,
#: 西林, 双胍, 拉唑, 替丁, 沙星, 昔布, 曲坦, 西泮...): "阿托伐他汀", "佐米曲普坦"
_ZH_MEDICATIONS: Final = "|".join(
    [
        *sorted(
            (re.escape(w) for ws in lexicon.MEDICATIONS.values() for w in ws if not w.isascii()),
            key=len,
            reverse=True,
        ),
        rf"(?:(?![说是的了在吃用和跟与给我你他她就还都也把被换改开停片粒颗支])[{HAN}]){{1,5}}?"
        r"(?:他汀|沙坦|地平|洛尔|普利|霉素|西林|双胍|"
        r"拉唑|替丁|沙星|昔布|曲坦|"
        r"普坦|西泮|唑仑|莫司|格列\w{1,3}|头孢\w{0,4})",
    ]
)


def _medication(text: str, sentence: str = "") -> list[Frame]:
    """A medication taken, prescribed, switched or stopped: a known one, one whose name
    ends in 药/片/胶囊, or any name prescribed or switched to in a clause about medicine
    ("医生给我开了别嘌醇", "别嘌醇不吃了，换成非布司他")."""
    context = sentence or text
    medical = bool(_MEDICAL_ZH.search(context))
    out: list[Frame] = []
    if medical:
        for given in re.finditer(
            rf"(?:开了|开的|换成了?|改成了?|改用|换了)\s*(?P<x>[{HAN}A-Za-z]{{2,8}}?|"
            r"[A-Za-z][A-Za-z-]{2,24})"
            # a dose may follow the medicine at once ("换成氨氯地平了5毫克")
            r"(?=[，,。；;！!\s]|$|\d|每天|一天|每日|早晚|让我|叫我|给我|要我|随身)",
            text,
        ):
            said = re.sub(r"了$", "", given["x"])
            if _A_COUNT.match(said):
                continue  # "服装店开了十四年了": how long, not a medicine
            if len(said) >= 2 and not re.match(r"[了点些个一]", said):
                keys = lexicon.canonical(lexicon.MEDICATIONS, said) or [said]
                out += [Frame("medication", said, k) for k in keys]
                if given[0].startswith(
                    ("换", "改")
                ):  # "是氨氯地平的副作用，给我换成缬沙坦": X ends
                    head = context[: context.find(given[0])]
                    olds = [m[0] for m in re.finditer(_ZH_MEDICATIONS, head)] + [
                        w  # "把她從 warfarin 換成 Eliquis": a medicine named in Latin letters
                        for w in re.findall(r"[A-Za-z][A-Za-z-]{3,24}", head)
                        if lexicon.canonical(lexicon.MEDICATIONS, w) or lexicon.is_medication(w)
                    ]
                    for old in olds:
                        for key in lexicon.canonical(lexicon.MEDICATIONS, old) or [old]:
                            if key not in keys and not any(f.key == key for f in out):
                                out.append(Frame("medication", old, key, negated=True))
        for stop in re.finditer(
            rf"(?P<x>[{HAN}A-Za-z]{{2,8}}?)(?:不吃了|停了|停掉了|不用了|别吃了|不能吃了)", text
        ):
            said = re.sub(r"^.*?(?:医生说|说|把)", "", stop["x"])  # "医生说甲巯咪唑可以停了"
            said = re.sub(
                r"(?:可以|先|也|都|就|还|暂时|马上|立刻|立马|赶紧|已经|直接|全)+$", "", said
            )
            if named := re.search(_ZH_MEDICATIONS, said):
                said = named[0]
            if _not_a_medicine(said):
                continue  # "羽毛球先停了": an activity stopped, not a medicine
            if len(said) < 2 and (
                first := re.match(rf"\s*(?P<m>{_ZH_MEDICATIONS}|[A-Za-z][A-Za-z-]{{3,24}})", text)
            ):
                said = first["m"]  # "omeprazole 医生说可以停了": the medicine the clause opens with
            if len(said) >= 2 and (lexicon.canonical(lexicon.MEDICATIONS, said) or medical):
                keys = lexicon.canonical(lexicon.MEDICATIONS, said) or [said]
                out += [Frame("medication", said, k, negated=True) for k in keys]
    match = re.search(
        r"(?P<neg>停了|不吃|停掉了?|不用再吃)?(?:在|每天|一直|开始|现在|要|得|还在)*"
        rf"(?:吃|服用|打|用|带着|随身带)(?:的)?(?:[一两半二三四五]?[片粒颗支])?(?P<x>[^了点些个一\s，。]{{1,9}}?(?:药|片|胶囊)|{_ZH_MEDICATIONS})",
        text,
    ) or re.search(rf"(?P<neg>停了|停掉了?|不用了?|不再用)(?P<x>{_ZH_MEDICATIONS})", text)
    if match is None:  # its dose, then the medicine: "每天早上一片硝苯地平缓释片"
        match = re.search(
            r"(?P<neg>(?!))?(?:每天|一天|每日|早上|晚上|早晚|睡前)+(?:各)?[一两半二三\d]+[片粒颗]"
            rf"(?P<x>{_ZH_MEDICATIONS})",
            text,
        )
    if match is None:  # the medicine, then its dose: "降压药一天一片", "二甲双胍早晚各一片"
        match = re.search(
            rf"(?P<neg>(?!))?(?P<x>{_ZH_MEDICATIONS}|(?<![吃用买开这那此该])(?![这那此该])"
            rf"[{HAN}]{{1,5}}?药)(?:现在|还是)?"
            r"(?:一天|每天|早晚|一日|每日|每晚|每早|早上|晚上)(?:各|吃|一次)?"
            r"[一两二三四五半\d]+(?:片|粒|次|颗|支|针|袋|毫克|mg)",
            text,
        )
    if match is not None and not match["neg"] and re.search(r"小时候|以前|之前|当年|那时候", text):
        match = None  # "我小时候吃磺胺的药也起过疹子": taken once, not now
    if match is None:
        # a medicine named in Latin letters, started or carried in a Chinese clause ("start 了
        # levothyroxine 50mcg", "有 EpiPen always 在袋里"): a known one only
        for named in re.finditer(
            r"(?:开始吃|开始|在吃|每天吃|在用|start(?:ed)?|换了|加了|带着?|有)\s*(?:了\s*)?"
            r"(?P<x>[A-Za-z][\w-]{3,})",
            text,
            re.IGNORECASE,
        ):
            for key in lexicon.canonical(lexicon.MEDICATIONS, named["x"]):
                if not any(f.key == key for f in out):
                    out.append(Frame("medication", named["x"], key, plain=True))
        return out
    said = _clean(match["x"])
    keys = lexicon.canonical(lexicon.MEDICATIONS, said) or [said]
    negated = bool(match["neg"]) or bool(re.search(r"停了|不用吃|不吃了", text))
    known = {f.key for f in out}
    return out + [Frame("medication", said, k, negated=negated) for k in keys if k not in known]


#: what goes on after a condition's name in the same run of characters: another clause
#: ("是糖尿病前期叫我注意": what the doctor said next)
_AFTER_CONDITION: Final = re.compile(r"(?:叫|让|要|说|给|就|还|得|所以|但|不过|医生)")


def _condition_only(said: str) -> str:
    """``said`` up to the end of the known condition it names, when another clause follows
    it without a break ("糖尿病前期叫我注意" -> "糖尿病前期")."""
    # at each place, the longest name starting there (overlapping: "二型糖尿病前期" ends at 前期)
    ends = [m.start() + len(m[1]) for m in re.finditer(rf"(?=({_CONDITION_WORDS}))", said)]
    if not ends:
        return said
    end = max(ends)
    return said[:end] if _AFTER_CONDITION.match(said[end:]) else said


#: a count or a length of time ("十四年", "三个月", "两次"): never the name of a medicine
_A_COUNT: Final = re.compile(
    r"^[一二两三四五六七八九十百千几半多\d]+[个多]?"
    r"(?:年|月|天|日|周|星期|礼拜|小时|钟头|分钟|次|回|家|遍)"
)


def _not_a_medicine(said: str) -> bool:
    """Whether a name stopped in a clause about medicine is something else stopped: an
    activity ("羽毛球先停了"), a drink or a food."""
    return bool(
        _ACTIVITIES.fullmatch(said)
        or _A_COUNT.match(said)
        or lexicon.canonical(lexicon.DRINKS, said)
        or lexicon.canonical(lexicon.FOODS, said)
    )


def _diet(text: str) -> list[Frame]:
    out: list[Frame] = []
    if match := re.search(
        r"(?P<neg>不再|不|没有)?(?:是|在|开始|一直|现在|已经)*(?P<x>吃素|素食主义者|素食者|吃清真|纯素|"
        r"生酮|控糖|戒糖|低盐|低碳水)",
        text,
    ):
        keys = lexicon.canonical(lexicon.DIETS, match["x"])
        negated = bool(match["neg"]) or bool(re.search(r"不吃素了|开始吃肉|又吃肉", text))
        if keys:
            out.append(Frame("diet", match["x"], negated=negated))  # as said: "控糖", "吃素"
    elif re.search(r"(?:开始|又|重新)吃肉(?:了)?", text):
        out.append(Frame("diet", "又吃肉了", negated=True))
    if match := re.search(
        rf"(?:我|^){_ADV}(?:(?:从来不|从不|不再|尽量不|不能|不敢|不)(?:吃|碰)|吃不了|碰不得)(?P<x>{_SPAN}{{1,8}})",
        text,
    ) or re.search(  # the food said first: "海鲜我碰不得", "辣的我吃不了"
        rf"^(?P<x>{_SPAN}{{1,8}}?)(?:我)?(?:也|都|一点)?(?:碰不得|不能碰|不能吃|吃不得|吃不了|沾不得|不敢吃)",
        text,
    ):
        keys = lexicon.canonical(lexicon.FOODS, match["x"])
        said = _clean(match["x"])
        out += [Frame("avoids", said if len(keys) == 1 else k, k) for k in keys]
    return out


def _access(text: str) -> list[Frame]:
    keys = lexicon.canonical(lexicon.ACCESS, text)
    if not keys or _someone_else(text):
        return []  # "婆婆坐轮椅": hers (read by cared_for), not the speaker's
    return [Frame("accessibility", k, k) for k in keys]


def _drinks(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    match: re.Match[str] | None
    out: list[Frame] = []
    if match := re.search(rf"(?:改喝|换成了?|改成了?)(?P<x>{_SPAN}{{1,8}})", text):
        keys = lexicon.canonical(lexicon.DRINKS, match["x"])
        out += [Frame("drink", _clean(match["x"]), k, exclusive=True) for k in keys[:1]]
        return out
    for match in re.finditer(
        rf"(?P<neg>不再|不要|不能|不|没|别|戒了|已经不|很少)?(?:现在|每天|一般|平时|也|还|都|经常|天天|早上|晚上|再)*"
        rf"(?P<only>只)?(?:喝|戒)(?P<x>{_SPAN}{{1,20}})",
        text,
    ):
        if re.search(r"(?:让|叫|要|劝|建议)我$", text[max(0, match.start() - 3) : match.start()]):
            continue  # "闺女让我喝菊花茶": advice given, not what the speaker drinks
        if re.match(r"(?:早茶|下午茶|喜酒|满月酒|酒席)", match["x"]):
            continue  # "去喝早茶", "喝喜酒": a meal or a feast, no drink
        keys = lexicon.canonical(lexicon.DRINKS, match["x"])
        if not keys and (match["only"] or "现在" in match[0]) and re.match(r"[A-Za-z]", match["x"]):
            keys = [_clean(match["x"]).casefold()]  # "我现在喝 barley water": a drink unnamed
        if not keys:
            continue
        negated = (bool(match["neg"]) and match["neg"] != "很少") or "戒" in match[0]
        said = _clean(match["x"])
        out.append(Frame("drink", said, keys[0], negated=negated, exclusive=bool(match["only"])))
    # the drink said first, then that it is given up ("茉莉花茶我也不喝了", "奶茶戒了")
    for match in re.finditer(
        rf"(?P<x>{_SPAN}{{2,8}}?)(?:我)?(?:也|都|现在|已经|早就|早|干脆|索性|直接|彻底|就)*"
        r"(?:不喝了|不再喝了|戒了|喝不了了)",
        text,
    ):
        said = re.sub(r"^(?:我|连|把)+", "", _clean(match["x"]))  # "我把咖啡戒了": the coffee
        keys = lexicon.canonical(lexicon.DRINKS, said)
        if keys and not any(f.key == keys[0] for f in out):
            out.append(Frame("drink", said, keys[0], negated=True))
    return out


def _likes(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    if match := re.search(rf"我最喜欢的(?P<w>{_SPAN}{{1,6}}?)是(?P<x>{_SPAN}{{1,20}})", text):
        return [Frame("favorite", f"{match['w']}：{_clean(match['x'])}", match["w"])]
    match = re.search(
        rf"我{_ADV}(?:也|还|一直|都|真的|超|很|非常|特别|最|更|挺|比较)*(?P<neg>不再|不太|不)?"
        rf"(?:也|还|都|很|太)*(?P<v>喜欢|爱|热爱|偏好|钟爱|讨厌|受不了|迷上了|爱上了)(?P<x>{_SPAN}{{2,20}})",
        text,
    )
    if match is None:
        return []
    obj = _clean(match["x"])
    if not obj or re.match(r"(?:这|那|它|他|她|你|上了|过|着)", obj):
        return []
    drinks = lexicon.canonical(lexicon.DRINKS, obj)
    negated = (bool(match["neg"]) and "了" in text[match.end() :][:3]) or match["neg"] == "不再"
    if drinks and obj in lexicon.DRINKS.get(drinks[0], ()):
        return [Frame("drink", obj, drinks[0], negated=negated)]
    verb = f"不{match['v']}" if match["neg"] and not negated else match["v"]
    return [Frame("like", f"{verb}{obj}", obj[:6], negated=negated)]


_RECURRING: Final = re.compile(
    r"(?:每|一)(?:周|个?星期|个?礼拜)[一二两三四五六七几\d]+(?:到[一二两三四五六七几\d]+)?次|"
    r"每天|每周|每个?星期|每个?周末|周末|每晚|每天早上|天天|一般|平时|经常|常常|每个月|每年"
)


#: the games one plays (打, 踢, 跳, 玩): said first, then given up ("篮球不打了")
_GAMES: Final = r"羽毛球|篮球|网球|乒乓球|足球|排球|高尔夫|广场舞|麻将|太极拳?"
#: the pastimes a person takes up and gives up
_PASTIMES: Final = (
    rf"{_GAMES}|游泳|跑步|健身|瑜伽|普拉提|攀岩|骑行|爬山|钓鱼|合唱团?|画画|钢琴|书法"
)
#: the activities a person takes up and stops, their care included
_ACTIVITIES: Final = re.compile(rf"{_PASTIMES}|理疗|针灸|康复训练")
#: an activity stopped, said without a habit's words ("我停了羽毛球", "篮球不打了")
_STOPPED_ACTIVITY: Final = re.compile(
    rf"(?:停了|不再|放弃了|戒了)(?P<a>{_PASTIMES})|"
    rf"(?P<b>{_GAMES})"
    r"(?:也|最近|现在|已经|暂时|先|就|以后|那种[^，。；！？\s]{0,8}?的?){0,3}?"
    r"(?:不打了|不踢了|不跳了|不练了|不玩了|停了|(?:别|不能|不让)(?:再)?(?:打|踢|跳|练|玩)了|"
    r"(?:好久|很久|早就|已经)?没(?:再)?(?:打|踢|跳|练|玩)了)"
)


#: an activity taken up in place of another ("改游泳了", "现在改打太极拳了", "换成瑜伽")
_TAKEN_UP: Final = re.compile(
    rf"(?:改|换成|改成|转)(?:了)?(?:打|练|学|跳|去|做|玩)?(?P<a>{_ACTIVITIES.pattern})(?!课)"
)


def _routines(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    if any(f.kind in ("drink", "medication", "like", "volunteer") for f in earlier):
        return []
    if quit_smoking := re.search(r"(?P<x>戒烟|戒了烟|不抽烟了|烟(?:也)?戒了)", text):
        return [Frame("routine", "吸烟", "吸烟", negated=True)] if quit_smoking else []
    out = [
        Frame("routine", act, act, negated=True)
        for act in dict.fromkeys(m["a"] or m["b"] for m in _STOPPED_ACTIVITY.finditer(text))
    ]
    if switched := _TAKEN_UP.search(text):  # "不打了 改游泳了 一周两三次": the one taken up
        act = switched["a"]
        said = sentence if text in sentence else text  # how often: said after it
        often = _RECURRING.search(said, max(said.find(text), 0) + switched.end())
        value = f"{act}，{often[0]}" if often else act
        return [*out, Frame("routine", value, act)]
    if out:
        return out
    if not _RECURRING.search(text):
        return []
    match = re.search(
        rf"(?:去|在)?(?:{_SPAN}{{0,8}}?(?:边|那儿|那里|里|上))?(?P<act>跑步|健身|游泳|打\S{{1,3}}|踢\S{{1,2}}|"
        rf"练\S{{1,3}}|骑车|骑行|爬山|徒步|散步|遛狗|瑜伽|做饭|画画|弹\S{{1,3}}|学\S{{1,4}}|看书|读书|写作|"
        rf"冥想|唱歌|跳舞|跳广场舞|钓鱼|上课|值夜班|加班|做义工|做志愿者|去教堂|礼拜|买菜)",
        text,
    )
    if match is None:
        return []
    act = match["act"]
    negated = bool(re.search(r"不再|不(?:去|跑|练|打)了|停了", text))
    value = re.sub(rf"^(?:我们|我)|(?<=[{HAN}])我(?:们)?", "", text, count=1)
    return [Frame("routine", value.strip(" ，。；！？、,.;!?~～"), act, negated=negated)]


def _hobbies(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    if any(f.kind in ("routine", "medication", "job", "like", "language") for f in earlier):
        return []
    match = re.search(
        rf"(?:开始|在|最近在|正在|报了)(?:学|练|上)(?P<x>钢琴|吉他|小提琴|古筝|二胡|画画|书法|游泳|瑜伽|"
        rf"日语|英语|韩语|法语|德语|西班牙语|编程|摄影|烘焙|滑雪|攀岩|拳击|网球|羽毛球|舞蹈|唱歌|陶艺|{_SPAN}{{1,4}}课)",
        text,
    )
    if match is None:
        return []
    return [Frame("hobby", match["x"], match["x"])]


def _moved_to(said: str, to: str) -> Frame | None:
    """The plan ``said`` moved to the time ``to`` ("云南，改到明年五一"), or None when ``said``
    names no plan."""
    obj = _plan_object(said)
    if not obj:
        return None
    when = _PARTICLES.sub("", to) or to
    return Frame("plan", f"{obj}，改到{when}", obj)


def _plans(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    if moving := _move_to_come(text):
        return moving
    put_off = re.search(  # "云南又推了，改到明年五一": put off, then its new time
        rf"(?P<obj>{_SPAN}{{2,10}}?)(?:又|也|再|还是)?(?:推了|推迟了|延期了|改期了|没去成)[，,\s]*"
        rf"(?:又)?(?:改到|推到|推迟到|延到|挪到)(?:了)?(?P<t>{_SPAN}{{1,12}})",
        sentence or text,
    )
    if put_off and (moved := _moved_to(put_off["obj"], put_off["t"])):
        return [moved]
    if match := re.search(
        rf"(?P<obj>{_SPAN}{{2,14}}?)(?:的事|的计划|的行程|之行|旅行|旅游|行程)?(?:被)?(?:改到|推迟到|延期到|推到|挪到|延到|改成|推迟至|改在)"
        rf"(?:了)?(?P<t>{_SPAN}{{1,12}})",
        text,
    ):
        when = _PARTICLES.sub("", match["t"]) or match["t"]
        pastime = _ACTIVITIES.search(match["obj"])
        if pastime and re.match(r"(?:每)?(?:周|星期|礼拜)|每天|早上|晚上|上午|下午", when):
            # "游泳现在改成周日晚上了": a routine's time changed, not a plan
            return [Frame("routine", f"{pastime[0]}，{when}", pastime[0])]
        if moved := _moved_to(match["obj"], match["t"]):
            return [moved]
    if match := re.search(
        rf"(?P<obj>{_SPAN}{{2,14}}?)(?:的计划|的行程|之行|旅行|旅游)?(?:取消了|不去了|泡汤了|黄了)|不去(?P<obj2>{_SPAN}{{2,10}})了",
        text,
    ):
        obj = _plan_object(match["obj"] or match["obj2"])
        if obj:
            return [Frame("plan", f"{obj}，取消了", obj, negated=True)]
    if any(f.kind in ("residence", "employer", "job") and not f.negated for f in earlier):
        return []
    if re.search(
        rf"[{HAN}A-Za-z]{{2,}}(?:说|觉得|希望|建议|让我)"
        r"(?:过年|明年|今年|年底|下个月|下周|周末|以后|将来)?(?=想|要|打算|计划|准备)",
        text,
    ):
        return []  # "张悦说想…", "老周说过年想换个新电视": someone else's wish, not the speaker's
    match = re.search(
        rf"(?<![不没])(?:打算|计划|准备|想要|想(?![象像念法到起])|要去|将要|会去)(?P<x>{_SPAN}{{2,24}})",
        text,
    ) or re.search(
        rf"(?:下(?:个)?(?:周|星期|月)|明年|年底|下半年|过年)(?:[一二三四五六日天末初底])?(?:要|去|会|就)(?P<x>{_SPAN}{{2,20}})",
        text,
    )
    if match is None:
        return []
    # an English conjunction after Chinese ends the plan ("想叫外卖 but 我 shellfish allergy")
    what = _clean(_ENGLISH_BREAK.split(match["x"], maxsplit=1)[0])
    if not what or re.match(r"(?:一下|想|说|问|看看|知道)", what):
        return []
    return [Frame("plan", what, _plan_object(what) or what[:6])]


#: an English conjunction right after Chinese characters: the Chinese clause ends there
_ENGLISH_BREAK: Final = re.compile(
    rf"(?<=[{HAN}])\s*(?:but|so|because|cause|coz|cos|though|although)(?![A-Za-z])",
    re.IGNORECASE,
)


#: a time to come a move or a plan is said with
_SOON: Final = (
    r"(?:下(?:个)?(?:周|星期|礼拜|月)|明年|年底|(?<![一二三四五六七八九十\d])月底|下半年|过两天|"
    r"过几天|过完年|年后)"
)


def _move_to_come(text: str) -> list[Frame]:
    """A move said with its time to come ("我们下个月搬去杭州"): a plan, not yet a home."""
    if match := re.search(
        rf"(?P<t>{_SOON})[^，。；！？]{{0,4}}?(?:就|会|要)?(?P<x>(?:搬|移居)(?:家)?(?:去|到)(?P<p>{_SPAN}{{2,10}}))",
        text,
    ):
        place = _clean(match["p"])
        if place:
            return [Frame("plan", f"{match['t']}{_clean(match['x'])}", f"搬去{place}")]
    return []


def _trips(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    """A trip made ("十月去了京都", "从成都回来了"): what closes the plan to make it."""
    match = re.search(
        rf"(?<!搬)(?<!搬家)(?:去了|到了|去过|游览了|玩了|逛了)(?P<p>[{HAN}A-Z][{HAN}A-Za-z]{{1,8}})"
        rf"|从(?P<q>{_SPAN}{{2,8}}?)回来(?:了)?",
        text,
    )
    if match is None or re.search(r"打算|计划|准备|想|要去|会去", text):
        return []
    if re.search(r"跳槽|入职|加入|上班|工作|搬", sentence or text):
        return []  # "跳槽去了蚂蚁", "我换工作了，去了阿里", "搬到了杭州": a new job or home
    place = _clean(match["p"] or match["q"])
    place = re.sub(r"(?:玩|旅游|旅行|出差|看看)$", "", place)
    if (
        re.search(r"医院|急诊|诊所|门诊|药店|卫生院", place)
        or re.fullmatch(r"ER|A&E|(?i:hospital|clinic|GP|doctor|dentist|emergency)", place)
        or _DURATION.match(place)
    ):
        return []  # "去了玛丽医院急诊", "去了 ER": a visit to a doctor; "玩了五天": for how long
    said = re.sub(r"^(?:我们|我)", "", text.strip(" ，。；！？、,.;!?"))
    return [Frame("trip", said, place)] if place and said else []


#: the holidays a plan is said for ("五一去日本", "国庆日本也不去了")
_HOLIDAYS_ZH: Final = (
    r"国庆节?|五一|劳动节|春节|过年|元旦|中秋节?|端午节?|清明节?|暑假|寒假|圣诞节?|新年"
)


def _plan_object(phrase: str) -> str:
    """What a plan is known by: the place or thing after 去/到, without 的计划, 之行..."""
    phrase = _clean(
        re.sub(r"(?:的计划|的行程|之行|旅行|旅游|行程|的事|那个|这个|我们的|我的)", "", phrase)
    )
    phrase = re.sub(r"^(?:我们|我|咱们|的|去|到|打算|计划|准备|要)+", "", phrase)
    # when it was for and how it is said are not what it is ("国庆日本也不去了": 日本)
    phrase = re.sub(rf"^(?:{_HOLIDAYS_ZH})", "", phrase)
    phrase = re.sub(r"(?:也|都|还|就|又|再|那个|这个)+$", "", phrase)
    if match := re.search(rf"(?:去|到|飞)(?P<p>[{HAN}A-Za-z]{{2,8}})", phrase):
        phrase = _clean(match["p"])
    # what is done there is not where ("去云南玩", "去日本旅游": 云南, 日本)
    phrase = re.sub(rf"(?<=[{HAN}]{{2}})(?:玩|旅游|旅行|看看|逛逛|度假|玩玩)$", "", phrase)
    return phrase[:8]


def _goals(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    match = re.search(
        rf"(?:我的(?:目标|梦想|愿望)是|我(?:一直)?想(?=学|成为|考|减|存|开|写|跑)|我在努力)(?P<x>{_SPAN}{{2,20}})",
        text,
    )
    if match is None:
        return []
    what = _clean(match["x"])
    return [Frame("goal", what, what[:6])] if what else []


_LIFE: Final = re.compile(
    r"(?P<ev>结婚了|订婚了|离婚了|生了(?:个|一个)?(?:儿子|女儿|宝宝|孩子)|(?:大学|研究生|硕士|博士)?毕业了|"
    r"升职了|(?<![快要将])退休了|买(?:了)?(?:房子|房|车)(?:了)?|分手了|做了(?:个)?手术|住院了|骨折了|确诊了\S{0,6}|"
    r"领养了\S{0,6}|考上了\S{0,8}|入职了\S{0,8}|开了(?:一家|家)?\S{0,6}(?:店|公司|工作室)|去世了)"
)


def _life(text: str, earlier: Sequence[Frame], sentence: str = "") -> list[Frame]:
    match = _LIFE.search(text)
    if match is None or re.search(
        r"(?:朋友|同事|邻居|妹妹|哥哥|姐姐|弟弟)\S{0,3}" + re.escape(match["ev"]), text
    ):
        return []
    event = _clean(match["ev"]) or match["ev"]
    return [Frame("life", event, event[:6])]


_READERS: Final = (
    _name_age,
    _work,
    _school,
    _home,
    _people,
    _languages,
    _pets,
    _health,
    _drinks,
    _likes,
    _routines,
    _hobbies,
    _plans,
    _trips,
    _goals,
    _life,
)
