"""dateparser and jionlp side by side with ``memstrata.timeref`` on the time-anchoring gold corpus.

Neither library is a dependency of memstrata: run this with a Python that has them, e.g.

    python3 -m venv /tmp/trlibs && /tmp/trlibs/bin/pip install dateparser==1.5.0 jionlp==1.5.31
    PYTHONPATH=src /tmp/trlibs/bin/python bench/peers/timeref_libraries.py \\
        --gold tests/fixtures/timeref_gold.jsonl

``memstrata.timeref`` needs nothing but the standard library, so ``PYTHONPATH=src`` is enough
for it; a library that is not installed is left out of the table. Each sentence of the gold
corpus is given to each resolver with its ``said_at`` (and its ``tense`` where the case names
one: dateparser's ``PREFER_DATES_FROM``, jionlp's ``ret_future``).

Scoring, per expected expression: *found* when some output overlaps the expression's words;
*exact* when an overlapping output names exactly the expected interval, at day grain (an
output ending inside the day said, as jionlp's durations end at ``said_at`` itself, is taken to
end with that day). *False positives*: sentences that name no date (non-dates and recurrences)
for which the resolver gave an interval. *Spurious*: outputs on the other sentences that overlap
no expected expression. Prints a table per language and per class, and with ``--json`` one JSON
object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

Interval = tuple[date, date]


@dataclass(frozen=True)
class Output:
    span: tuple[int, int]
    interval: Interval | None  # None: the resolver saw a time but gave no interval
    recurring: bool = False


def _local_day(moment: datetime, said_at: datetime) -> date:
    return moment.astimezone(said_at.tzinfo).date() if moment.tzinfo else moment.date()


def _interval(start: datetime, end: datetime, said_at: datetime) -> Interval:
    first = _local_day(start, said_at)
    last_moment = end - timedelta(microseconds=1)
    last = _local_day(last_moment, said_at)
    return first, last + timedelta(days=1)


def _gold_interval(case: dict[str, Any], item: dict[str, str]) -> Interval:
    return date.fromisoformat(item["start"]), date.fromisoformat(item["end"])


def _find(text: str, needle: str, start: int = 0) -> tuple[int, int] | None:
    at = text.find(needle, start)
    if at < 0:
        at = text.find(needle)
    return None if at < 0 else (at, at + len(needle))


def timeref_resolver() -> Callable[[str, datetime, str | None], list[Output]] | None:
    try:
        from memstrata import timeref
    except ImportError:
        return None

    def run(text: str, said_at: datetime, tense: str | None) -> list[Output]:
        found = [
            Output(m.span, _interval(m.start, m.end, said_at))
            for m in timeref.mentions(text, said_at, tense=tense)  # type: ignore[arg-type]
        ]
        found += [Output(r.span, None, recurring=True) for r in timeref.recurrences(text)]
        return found

    return run


def dateparser_resolver() -> Callable[[str, datetime, str | None], list[Output]] | None:
    try:
        from dateparser.date import DateDataParser
        from dateparser.search import search_dates
    except ImportError:
        return None
    languages = ["en", "zh"]

    def run(text: str, said_at: datetime, tense: str | None) -> list[Output]:
        base = said_at.replace(tzinfo=None)
        settings: dict[str, Any] = {
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": tense or "current_period",
        }
        found = search_dates(text, languages=languages, settings=settings) or []
        periods = DateDataParser(languages=languages, settings=settings)
        out, cursor = [], 0
        for words, moment in found:
            span = _find(text, words, cursor)
            if span is None:
                continue
            cursor = span[1]
            data = periods.get_date_data(words)
            period = getattr(data, "period", None) or "day"
            day = moment.date()
            if period == "week":
                first = day - timedelta(days=day.weekday())
                interval = (first, first + timedelta(days=7))
            elif period == "month":
                first = day.replace(day=1)
                interval = (first, (first + timedelta(days=32)).replace(day=1))
            elif period == "year":
                interval = (date(day.year, 1, 1), date(day.year + 1, 1, 1))
            else:
                interval = (day, day + timedelta(days=1))
            out.append(Output(span, interval))
        return out

    return run


def jionlp_resolver() -> Callable[[str, datetime, str | None], list[Output]] | None:
    try:
        with contextlib.redirect_stdout(sys.stderr):  # it prints a banner on import
            import jionlp
    except ImportError:
        return None

    def run(text: str, said_at: datetime, tense: str | None) -> list[Output]:
        base = said_at.replace(tzinfo=None)
        try:
            found = jionlp.ner.extract_time(text, time_base=base, ret_future=tense == "future")
        except Exception:  # the library raises on some inputs: counted as nothing found
            return []
        out = []
        for item in found:
            span = (item["offset"][0], item["offset"][1])
            kind = item.get("type")
            when = item.get("detail", {}).get("time")
            if kind == "time_period":
                out.append(Output(span, None, recurring=True))
            elif isinstance(when, list) and len(when) == 2 and not {"inf", "-inf"} & set(when):
                start = datetime.fromisoformat(when[0])
                end = datetime.fromisoformat(when[1]) + timedelta(seconds=1)
                out.append(Output(span, _interval(start, end, base)))
            else:
                out.append(Output(span, None))
        return out

    return run


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def score(
    cases: list[dict[str, Any]], run: Callable[[str, datetime, str | None], list[Output]]
) -> dict[str, Any]:
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # expected, found, exact
    by_class: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    by_zh_class: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # Chinese and mixed
    false_positive = nondate = spurious = 0
    recurrences = [0, 0]  # cases with a recurrence, of which the resolver flagged one
    wrong: list[str] = []
    started = time.perf_counter()
    for case in cases:
        said_at = datetime.fromisoformat(case["said_at"])
        text = case["text"]
        outputs = run(text, said_at, case["tense"])
        dated = [o for o in outputs if o.interval is not None]
        if case.get("recurrence"):
            recurrences[0] += 1
            recurrences[1] += any(o.recurring for o in outputs)
        if not case["expect"]:
            nondate += 1
            false_positive += bool(dated)
            if dated:
                wrong.append(f"{case['id']}: {text!r} gave an interval")
            continue
        spans = []
        cursor = 0
        for item in case["expect"]:
            span = _find(text, item["text"], cursor)
            assert span is not None, (case["id"], item["text"])
            cursor = span[1]
            spans.append(span)
            want = _gold_interval(case, item)
            near = [o for o in dated if _overlaps(o.span, span)]
            got_exact = any(o.interval == want for o in near)
            tables = [(case["id"].split("-")[0], by_lang), (item["class"], by_class)]
            if not case["id"].startswith("en-"):
                tables.append((item["class"], by_zh_class))
            for key, table in tables:
                table[key][0] += 1
                table[key][1] += bool(near)
                table[key][2] += got_exact
            if not got_exact:
                shown = [(text[o.span[0] : o.span[1]], str(o.interval)) for o in near]
                wrong.append(f"{case['id']} [{item['class']}] {item['text']!r}: {shown}")
        spurious += sum(1 for o in dated if not any(_overlaps(o.span, s) for s in spans))
    elapsed = time.perf_counter() - started
    expected = sum(v[0] for v in by_lang.values())
    return {
        "expected": expected,
        "found": sum(v[1] for v in by_lang.values()),
        "exact": sum(v[2] for v in by_lang.values()),
        "nondate_sentences": nondate,
        "false_positive_sentences": false_positive,
        "spurious_outputs": spurious,
        "recurrences_flagged": recurrences,
        "by_language": dict(sorted(by_lang.items())),
        "by_class": dict(sorted(by_class.items())),
        "by_class_zh_mixed": dict(sorted(by_zh_class.items())),
        "seconds": round(elapsed, 3),
        "wrong": wrong,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, default=Path("tests/fixtures/timeref_gold.jsonl"))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--wrong", action="store_true", help="list every miss")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # jionlp logs a traceback for every expression it fails
    cases = [json.loads(line) for line in args.gold.read_text(encoding="utf-8").splitlines()]
    resolvers: dict[str, Callable[[str, datetime, str | None], list[Output]]] = {}
    for name, make in (
        ("memstrata.timeref", timeref_resolver),
        ("dateparser", dateparser_resolver),
        ("jionlp", jionlp_resolver),
    ):
        started = time.perf_counter()
        run = make()
        if run is not None:
            run("warm up", datetime(2026, 1, 1, tzinfo=UTC), None)
            resolvers[name] = run
            took = time.perf_counter() - started
            print(f"# {name}: first import and call {took:.2f} s", file=sys.stderr)
    results = {name: score(cases, run) for name, run in resolvers.items()}
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
        return
    for name, r in results.items():
        print(f"\n## {name}")
        print(
            f"exact {r['exact']}/{r['expected']} ({r['exact'] / r['expected']:.1%}), found "
            f"{r['found']}/{r['expected']} ({r['found'] / r['expected']:.1%}); intervals on "
            f"{r['false_positive_sentences']}/{r['nondate_sentences']} non-date sentences; "
            f"{r['spurious_outputs']} spurious outputs; recurrences flagged "
            f"{r['recurrences_flagged'][1]}/{r['recurrences_flagged'][0]}; {r['seconds']} s"
        )
        for title, table in (
            ("language", r["by_language"]),
            ("class", r["by_class"]),
            ("class, Chinese and mixed sentences", r["by_class_zh_mixed"]),
        ):
            cells = ", ".join(f"{k} {v[2]}/{v[0]} (found {v[1]})" for k, v in table.items())
            print(f"by {title}: {cells}")
        if args.wrong:
            print("\n".join(r["wrong"]))


if __name__ == "__main__":
    main()
