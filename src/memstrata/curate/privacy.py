"""The privacy scrubber (DESIGN.md 7): find personal data and secrets, replace them.

Pure and fast: precompiled regular expressions plus checksum validators, no I/O. A
:class:`Finding` holds only the kind and the character offsets in the original text, never
the text itself, so findings can be logged and stored. Chinese, English and mixed text are
handled alike; digits are matched as ASCII digits only.

When matches overlap the most specific kind wins, in this order: API key, e-mail, resident
ID, bank card, passport, password, phone, address (so ``password: sk-...`` is an API key and a
Luhn-valid 16-digit number is a card, not a phone). Keyword-anchored kinds (password, generic
key/token, keyword passport) redact only the value, keeping the keyword for context.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Final

from memstrata.errors import InvalidInputError
from memstrata.util.scripts import HAN

__all__ = [
    "SECRET_KINDS",
    "Finding",
    "PiiKind",
    "ScrubResult",
    "cn_id_valid",
    "find",
    "luhn_valid",
    "placeholder",
    "scrub",
    "scrub_secrets",
]


class PiiKind(StrEnum):
    """What kind of personal data or secret a finding is."""

    PHONE = "phone"
    EMAIL = "email"
    CN_ID = "cn_id"
    PASSPORT = "passport"
    BANK_CARD = "bank_card"
    PASSWORD = "password"
    API_KEY = "api_key"
    ADDRESS = "address"


SECRET_KINDS: Final = frozenset({PiiKind.PASSWORD, PiiKind.API_KEY})
"""The kinds scrubbed from verbatim capture by default."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One removed span: its kind and ``[start, end)`` offsets in the original text."""

    kind: PiiKind
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ScrubResult:
    """The scrubbed text (each finding replaced by its placeholder) and the findings."""

    text: str
    findings: tuple[Finding, ...]


def placeholder(kind: PiiKind) -> str:
    """The text that replaces a finding of ``kind``, e.g. ``[REDACTED:phone]``."""
    return f"[REDACTED:{kind.value}]"


# checksums --------------------------------------------------------------------------------

_ID_WEIGHTS: Final = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK: Final = "10X98765432"


def _id_like(digits: str) -> bool:
    """18 digits with a birth year where a resident ID has one (date and checksum unchecked)."""
    return len(digits) == 18 and digits[6:8] in ("18", "19", "20")


def _id_shaped(value: str) -> bool:
    """18 characters with a region code and a real birth date (checksum not checked)."""
    if len(value) != 18 or not value[:17].isdigit() or value[0] == "0":
        return False
    try:
        born = date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    return 1800 <= born.year <= 2099


def cn_id_valid(value: str) -> bool:
    """True for a mainland resident ID: valid birth date and ISO 7064 MOD 11-2 check digit."""
    value = value.upper()
    if not _id_shaped(value) or value[17] not in _ID_CHECK:
        return False
    total = sum(int(c) * w for c, w in zip(value[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == value[17]


def luhn_valid(digits: str) -> bool:
    """True when ``digits`` (ASCII digits only) passes the Luhn check."""
    if not digits.isascii() or not digits.isdigit():
        return False
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _card_prefix(digits: str) -> bool:
    """Issuer prefixes in use: 3 (Amex, JCB, Diners), 4, 5, 6, 2221-2720 (Mastercard).

    13-digit numbers count only with the (old Visa) prefix 4: other 13-digit numbers are
    mostly EAN-13 barcodes and millisecond timestamps.
    """
    if len(digits) == 13:
        return digits[0] == "4"
    return digits[0] in "3456" or 2221 <= int(digits[:4]) <= 2720


# patterns ---------------------------------------------------------------------------------

_A = re.ASCII
_NB = r"(?<![0-9A-Za-z_])"  # not glued to a preceding token character
_NA = r"(?![0-9A-Za-z_])"
_CONN = (
    r"(?P<conn>\s*(?:[:：=]|是|为|為|(?:设|改|设置)(?:为|成))\s*[:：]?|\s+(?:is|was)\s*[:：]?)\s*"
)

_EMAIL_RE: Final = re.compile(
    r"(?<![0-9A-Za-z._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
    r"\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
)
_CN_MOBILE_RE: Final = re.compile(
    rf"(?<![0-9A-Za-z_+])(?:(?:\+|00)86[ -]?)?1[3-9]\d(?:[ -]?\d{{4}}){{2}}{_NA}", _A
)
_INTL_PHONE_RE: Final = re.compile(r"(?<![0-9A-Za-z_+)])\+\(?[1-9][\d ().-]{5,24}\d", _A)
_NANP_RE: Final = re.compile(
    r"(?<![0-9A-Za-z_.+-])(?:1[ .-]?)?(?:\([2-9]\d{2}\)[ .-]?|[2-9]\d{2}[ .-])"
    r"[2-9]\d{2}[ .-]\d{4}(?![0-9A-Za-z_]|[.-]\d)",
    _A,
)
_CN_LANDLINE_RE: Final = re.compile(
    r"(?<![0-9A-Za-z_.+-])(?:\(0\d{2,3}\) ?|0\d{2,3}-)[2-9]\d{6,7}(?![0-9A-Za-z_]|[.-]\d)", _A
)
_CN_ID_RE: Final = re.compile(rf"{_NB}[1-9]\d{{5}} ?(?:18|19|20)\d{{6}} ?\d{{3}}[0-9Xx]{_NA}", _A)
_CARD_RE: Final = re.compile(
    r"(?<![0-9A-Za-z_.,+-])(?:\d{13,19}|\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,3})?"
    r"|\d{4}[ -]\d{6}[ -]\d{4,5})(?![0-9A-Za-z_]|[.,]\d)",
    _A,
)
_CN_PASSPORT_RE: Final = re.compile(rf"{_NB}(?:[EG]\d{{8}}|E[A-HJ-NP-Z]\d{{7}}){_NA}", _A)
_PASSPORT_KW_RE: Final = re.compile(
    r"(?i:passport\s*(?:no\.?|number|num|#)|护照(?:号码|号))\s*(?:[:：#]|is|是|为)?\s*"
    rf"(?P<val>[A-Za-z0-9]{{6,10}}){_NA}"
)
_PASSWORD_RE: Final = re.compile(
    r"(?i:pass(?:word|wd|code)|\bpwd?|密码|口令)"
    r"(?:\s+(?:for|of|to)\s+(?:(?:the|my|our)\s+)?[\w.@-]{1,30})?"
    rf"{_CONN}(?:[\"'“‘「](?P<qval>[^\"'”’」\n]{{1,64}})[\"'”’」]|(?P<val>[!-~]+))"
)
_KEY_SHAPES_RE: Final = re.compile(
    r"(?<![0-9A-Za-z_-])(?:sk-[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}"
    r"|xox[baprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}"
    r"|hf_[A-Za-z0-9]{30,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
    r"(?![0-9A-Za-z_-])",
    _A,
)
_PRIVATE_KEY_RE: Final = re.compile(
    r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----.{0,8000}?-----END (?:[A-Z]+ )*PRIVATE KEY-----", re.S
)
_BEARER_RE: Final = re.compile(r"(?i:\bbearer)\s+(?P<val>[A-Za-z0-9._~+/-]{16,}=*)")
#: every keyword :data:`_KEY_KW_RE` can match holds one of these (lowercased): a text without
#: any of them is not scanned (the pattern costs about 50 us a turn, this test under 1 us)
_KEY_KW_WORDS: Final = ("key", "secret", "token", "密钥", "秘钥", "令牌")
_KEY_KW_RE: Final = re.compile(
    r"(?i:(?:api|access|secret|private|auth|app)[_ -]?key|client[_ -]?secret|secret"
    r"|(?:access|refresh|auth)?[_ -]?token|密钥|秘钥|令牌)"
    rf"{_CONN}[\"'“‘]?(?P<val>[A-Za-z0-9_\-./+=~]{{16,}})"
)
_EN_ADDR_RE: Final = re.compile(
    r"(?<![0-9A-Za-z_.,$#-])(?P<num>\d{1,6}[A-Za-z]?)(?:-\d{1,4})?\s+"
    r"(?:(?:[NSEW]\.?|North|South|East|West)\s+)?"
    r"(?:(?:[A-Z][A-Za-z'-]+|\d{1,3}(?:st|nd|rd|th))\s+){1,4}"
    r"(?:Street|St|Road|Rd|Avenue|Ave|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct|Place|Pl"
    r"|Terrace|Parkway|Pkwy|Highway|Hwy|Square|Sq|Circle|Cir)\b\.?"
    r"(?:\s+(?:NW|NE|SW|SE|N|S|E|W)\b)?"
    r"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Floor|Fl|Room|#)\.?\s*#?[0-9A-Za-z-]{1,6}\b)?"
    r"(?:,\s+[A-Z][a-z]+(?:\s[A-Z][a-z]+){0,2})?(?:,\s+[A-Z]{2}\s+\d{5}(?:-\d{4})?\b)?"
)
_YEAR_LEAD_RE: Final = re.compile(
    r"(?i:\b(?:in|since|by|during|until|till|before|after|from|of|year|around))\s+$"
)
_COUNT_LEAD_RE: Final = re.compile(
    r"(?i:\b(?:chapter|ch|section|page|part|vol|volume|episode|season|track|top|level"
    r"|step|figure|fig|table|lesson|unit|room))\.?\s+$"
)
_CN_SUB = r"\s?[0-9A-Za-z]{1,5}(?:号楼|栋|幢|座|单元|层|楼|室|号|户)"
_CN_ADDR_RE: Final = re.compile(
    rf"(?P<road>[{HAN}A-Za-z0-9]{{1,16}}?)(?P<rsuf>大道|大街|路|街|巷|胡同|道)"
    rf"\d{{1,5}}(?:-\d{{1,4}})?[号號弄](?![线口门台位床])(?P<rsub>(?:{_CN_SUB})*)"
    rf"|(?P<estate>[{HAN}A-Za-z]{{2,16}}?)(?:小区|花园|公寓|大厦|家园|新村|苑|园|城|社区|村)"
    rf"(?P<csub>(?:{_CN_SUB})+)(?P<room>\d{{3,4}}(?![0-9]))?"
)
_CN_SUB_RE: Final = re.compile(_CN_SUB)
_CN_HEAD_STOP: Final = frozenset("在到是的了去往从住把给请寄送搬至为址我你他她它们咱与及或就也要想")
"""Characters that end the sentence before an address: the address starts after the last one."""
_ORDER_CONTEXT_RE: Final = re.compile(
    r"(?i:订单|单号|运单|快递|流水|工单|编号|发票|批次|序列号|学号|工号|order|tracking|invoice"
    r"|ref(?:erence)?|ticket|case|serial|sku|transaction|txn|条码|barcode|ean|isbn)"
    r"\s*(?:no\.?|number|num|id|#|号码|号)?\s*[:：#]?\s*(?:是|为|is)?\s*$"
)

_PLACEHOLDER_RE: Final = re.compile(r"\[REDACTED:[a-z_]+\]")

Span = tuple[int, int]


def _order_context(text: str, start: int) -> bool:
    """True when the number at ``start`` follows an order/tracking/serial label."""
    return _ORDER_CONTEXT_RE.search(text, max(0, start - 24), start) is not None


def _emails(text: str) -> Iterator[Span]:
    for m in _EMAIL_RE.finditer(text):
        yield m.span()


def _phones(text: str) -> Iterator[Span]:
    for rx in (_CN_MOBILE_RE, _NANP_RE, _CN_LANDLINE_RE):
        for m in rx.finditer(text):
            if not _order_context(text, m.start()):
                yield m.span()
    for m in _INTL_PHONE_RE.finditer(text):
        s = m.start()
        candidate = m.group()
        while sum(c.isdigit() for c in candidate) > 15:  # drop trailing groups
            cut = max(candidate.rfind(sep) for sep in " .-(")
            if cut <= 1:
                break
            candidate = candidate[:cut].rstrip(" .-(")
        digits = sum(c.isdigit() for c in candidate)
        if 8 <= digits <= 15 and "  " not in candidate and "--" not in candidate:
            yield s, s + len(candidate)


def _cn_ids(text: str) -> Iterator[Span]:
    for m in _CN_ID_RE.finditer(text):
        if cn_id_valid(m.group().replace(" ", "")):
            yield m.span()


def _cards(text: str) -> Iterator[Span]:
    for m in _CARD_RE.finditer(text):
        digits = m.group().replace(" ", "").replace("-", "")
        if (
            13 <= len(digits) <= 19
            and _card_prefix(digits)
            and luhn_valid(digits)
            and not _id_like(digits)
            and not _order_context(text, m.start())
        ):
            yield m.span()


def _passports(text: str) -> Iterator[Span]:
    for m in _CN_PASSPORT_RE.finditer(text):
        yield m.span()
    for m in _PASSPORT_KW_RE.finditer(text):
        if sum(c.isdigit() for c in m.group("val")) >= 4:
            yield m.span("val")


def _passwords(text: str) -> Iterator[Span]:
    for m in _PASSWORD_RE.finditer(text):
        quoted = m.group("qval") is not None
        group = "qval" if quoted else "val"
        value, start = m.group(group), m.start(group)
        if not quoted:
            value = value.rstrip(".,;:\"'")
        if len(value) < 4 or value[0] in "/~" or not any(c.isalnum() for c in value):
            continue
        weak = m.group("conn").strip().rstrip(":：").lower() in ("is", "was")
        if weak and not quoted and value.isalpha():
            continue  # "the password is wrong": only quoted or non-alphabetic values count
        yield start, start + len(value)


def _api_keys(text: str) -> Iterator[Span]:
    for m in _KEY_SHAPES_RE.finditer(text):
        if any(c.isdigit() for c in m.group()):
            yield m.span()
    for m in _PRIVATE_KEY_RE.finditer(text):
        yield m.span()
    lowered = text.lower()
    keyworded = any(word in lowered for word in _KEY_KW_WORDS)
    for rx in (_BEARER_RE, _KEY_KW_RE) if keyworded else (_BEARER_RE,):
        for m in rx.finditer(text):
            value = m.group("val")
            if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
                yield m.span("val")


def _addresses(text: str) -> Iterator[Span]:
    for m in _EN_ADDR_RE.finditer(text):
        num = m.group("num")
        lead = text[max(0, m.start() - 12) : m.start()]
        if _COUNT_LEAD_RE.search(lead) or (
            num.isdigit() and 1800 <= int(num) <= 2099 and _YEAR_LEAD_RE.search(lead)
        ):
            continue
        yield m.span()
    for m in _CN_ADDR_RE.finditer(text):
        head_group = "road" if m.group("road") is not None else "estate"
        head = m.group(head_group)
        cut = max((i for i, c in enumerate(head) if c in _CN_HEAD_STOP), default=-1) + 1
        name = head[cut:]
        if head_group == "road":
            has_admin = any(c in "省市区县镇乡" for c in name)
            if not name or (m.group("rsuf") in "街道" and not has_admin and not m.group("rsub")):
                continue  # "逛街3号": a one-character 街/道 needs a district or a unit
        elif len(name) < 2 or (
            len(_CN_SUB_RE.findall(m.group("csub"))) < 2 and not m.group("room")
        ):
            continue
        yield m.start(head_group) + cut, m.end()


_DETECTORS: Final[tuple[tuple[PiiKind, Callable[[str], Iterator[Span]]], ...]] = (
    (PiiKind.API_KEY, _api_keys),
    (PiiKind.EMAIL, _emails),
    (PiiKind.CN_ID, _cn_ids),
    (PiiKind.BANK_CARD, _cards),
    (PiiKind.PASSPORT, _passports),
    (PiiKind.PASSWORD, _passwords),
    (PiiKind.PHONE, _phones),
    (PiiKind.ADDRESS, _addresses),
)
"""Detectors from the most to the least specific kind; overlaps go to the earlier one."""


def _wanted(kinds: Collection[PiiKind] | None) -> frozenset[PiiKind]:
    if kinds is None:
        return frozenset(PiiKind)
    try:
        return frozenset(PiiKind(k) for k in kinds)
    except ValueError as exc:
        raise InvalidInputError(f"unknown PII kind in {sorted(map(str, kinds))}") from exc


def find(text: str, kinds: Collection[PiiKind] | None = None) -> tuple[Finding, ...]:
    """The non-overlapping findings in ``text`` for ``kinds`` (None: all), by position."""
    if not isinstance(text, str):
        raise InvalidInputError(f"scrub needs text, not {type(text).__name__}")
    wanted = _wanted(kinds)
    # placeholders from an earlier scrub are never findings themselves (scrubbing is idempotent)
    occupied = _Occupied(m.span() for m in _PLACEHOLDER_RE.finditer(text))
    taken: list[Finding] = []
    for kind, detect in _DETECTORS:
        if kind not in wanted:
            continue
        for start, end in sorted(set(detect(text)), key=lambda span: (span[0] - span[1], span)):
            if end > start and occupied.take(start, end):
                taken.append(Finding(kind, start, end))
    return tuple(sorted(taken, key=lambda f: f.start))


class _Occupied:
    """Disjoint spans of a text, sorted: a new span is taken only if it overlaps none (a
    binary search, so a text with tens of thousands of findings stays fast)."""

    def __init__(self, spans: Iterable[Span]) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for start, end in spans:
            self.take(start, end)

    def take(self, start: int, end: int) -> bool:
        at = bisect.bisect_right(self._starts, start)
        if at > 0 and self._ends[at - 1] > start:
            return False
        if at < len(self._starts) and self._starts[at] < end:
            return False
        self._starts.insert(at, start)
        self._ends.insert(at, end)
        return True


def scrub(text: str, kinds: Collection[PiiKind] | None = None) -> ScrubResult:
    """Replace every finding of ``kinds`` (None: all) with ``[REDACTED:<kind>]``.

    Offsets in the findings refer to ``text`` as passed in, not to the scrubbed text.
    """
    findings = find(text, kinds)
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(placeholder(f.kind))
        pos = f.end
    parts.append(text[pos:])
    return ScrubResult("".join(parts), findings)


def scrub_secrets(text: str) -> ScrubResult:
    """Scrub only passwords and API keys/tokens (the default for verbatim capture)."""
    return scrub(text, SECRET_KINDS)
