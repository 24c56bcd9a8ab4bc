"""Dates a question names, as time spans a memory's event time can fall in. Pure functions.

"What did we decide on 13 March, 2023?", "… in December 2023?", "… on 2023-03-13?": a question
that names a day or a month asks about what was said then. :func:`spans` reads those dates
(English month names, day first or month first, with or without commas; ISO dates) and
returns each as ``(start, end)`` in ms, UTC: a day widened by ``DAY_SLACK`` on each side (a
memory's time is in UTC, the asker's day in their own time zone), a month whole. A bare year
or a relative date ("last week") is too wide or too vague to say which memories it means, and
is not read. Retrieval raises the memories dated inside a span (``Options.date_boost``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

DAY_SLACK = timedelta(days=1)
MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE)
_VERBS = {"may", "mar", "march"}  # lower case: a verb, not a month (a month is capitalised)
_ISO = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")


def spans(text: str) -> list[tuple[int, int]]:
    """The days and months ``text`` names, as ``(start, end)`` ms spans (end excluded)."""
    found: list[tuple[int, int]] = []
    taken: list[tuple[int, int]] = []  # character ranges already read as a day

    def day(year: int, month: int, number: int, where: tuple[int, int]) -> None:
        taken.append(where)
        try:
            start = datetime(year, month, number, tzinfo=UTC)
        except ValueError:
            return  # "31 February": not a date (nor is its month meant)
        found.append((_ms(start - DAY_SLACK), _ms(start + timedelta(days=1) + DAY_SLACK)))

    for m in _DAY_MONTH_YEAR.finditer(text):
        day(int(m[3]), MONTHS[m[2].lower()], int(m[1]), m.span())
    for m in _MONTH_DAY_YEAR.finditer(text):
        day(int(m[3]), MONTHS[m[1].lower()], int(m[2]), m.span())
    for m in _ISO.finditer(text):
        if 1 <= int(m[2]) <= 12:
            day(int(m[1]), int(m[2]), int(m[3]), m.span())
    for m in _MONTH_YEAR.finditer(text):
        if any(a <= m.start() < b for a, b in taken) or m[1] in _VERBS:
            continue  # the month of a day already read; "may 2023" is likelier a verb
        year, month = int(m[2]), MONTHS[m[1].lower()]
        start = datetime(year, month, 1, tzinfo=UTC)
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        found.append((_ms(start), _ms(end)))
    return list(dict.fromkeys(found))


def within(moment: int, ranges: list[tuple[int, int]]) -> bool:
    """Whether ``moment`` (ms) falls inside any of ``ranges``."""
    return any(start <= moment < end for start, end in ranges)


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
