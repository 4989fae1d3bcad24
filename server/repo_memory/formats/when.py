"""Points in time as people and agents write them, read one way everywhere (recall's since/until, as_of, history
--since, timeline --since) and turned into the records' form: UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`.

Accepted: an ISO date (`2026-11-30`) or date-time (`2026-11-30T14:00`, `2026-11-30 14:00:00Z`, with an offset like
`+01:00`; no zone means UTC); `now`, `today`, `yesterday`; `N minutes|hours|days|weeks|months|years ago`;
`last week|month|year`; `last monday` … `last sunday`. Day forms are days of the local calendar. Anything else is
refused with an error naming these forms, never read as "no filter".

`mentions` reads the relative times people write in a record ("yesterday", "last Friday", "two weeks ago", "next
month") against the record's own time, so the index can hold the date they mean; `asks_when` tells a question that
wants a time as its answer ("when did…", "how long ago…", "what year…").
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from repo_memory.errors import InvalidArgumentError

FORMS = ("2026-11-30", "2026-11-30T14:00:00Z", "today", "yesterday", "3 days ago", "2 weeks ago", "last tuesday", "last week")
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6})\d*)?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$", re.I)
_AGO = re.compile(r"^(\d{1,4})\s*(minute|min|hour|hr|day|week|month|year)s?\s+ago$", re.I)
_UNITS = {"minute": timedelta(minutes=1), "min": timedelta(minutes=1), "hour": timedelta(hours=1), "hr": timedelta(hours=1),
          "day": timedelta(days=1), "week": timedelta(weeks=1), "month": timedelta(days=30), "year": timedelta(days=365)}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def parse(value: str, end: bool = False, now: datetime | None = None) -> datetime | None:
    """The moment `value` names (timezone-aware, UTC), or None when it is not a time expression at all. A value that
    looks like a date but is not one (2026-13-45) raises. With `end`, a whole day (a date, today, yesterday, last
    tuesday) means its end, so `until=2026-11-30` includes that day."""
    text = value.strip().lower()
    now = (now or datetime.now(UTC)).astimezone()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)

    def day(start: datetime) -> datetime:
        return (start + timedelta(days=1) if end else start).astimezone(UTC)

    if text == "now":
        return now.astimezone(UTC)
    if text in ("today", "yesterday"):
        return day(midnight - timedelta(days=text == "yesterday"))
    if text.startswith("last "):
        what = text[5:].strip()
        if what in _WEEKDAYS:
            back = (midnight.weekday() - _WEEKDAYS.index(what) - 1) % 7 + 1
            return day(midnight - timedelta(days=back))
        if what in ("week", "month", "year"):
            return (now - _UNITS[what]).astimezone(UTC)
        return None
    ago = _AGO.match(text)
    if ago:
        return (now - int(ago.group(1)) * _UNITS[ago.group(2)]).astimezone(UTC)
    iso = _ISO.match(value.strip())
    if not iso:
        return None
    year, month, dom, hour, minute, second, fraction, zone = iso.groups()
    try:
        moment = datetime(int(year), int(month), int(dom), int(hour or 0), int(minute or 0), int(second or 0),
                          int((fraction or "0").ljust(6, "0")))
    except ValueError as exc:
        raise InvalidArgumentError(f"'{value[:40]}' is not a real date or time ({exc}). {_forms()}") from None
    if zone and zone.upper() != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        moment = moment - sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    moment = moment.replace(tzinfo=UTC)
    return moment + timedelta(days=1) if end and hour is None else moment


def moment(value: str | None, what: str, end: bool = False) -> str | None:
    """`value` in the records' form, None for no value; InvalidArgumentError naming the forms for anything else."""
    if value is None or value == "":
        return None
    found = parse(value, end)
    if found is None:
        raise InvalidArgumentError(f"{what} '{value[:40]}' is not a time this server reads. {_forms()}")
    return iso(found)


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def stamp(ts: str) -> str:
    """A stored time (ISO, UTC, with microseconds) as every answer spells a time: `2026-02-01T09:30:05Z`."""
    return f"{ts[:19]}Z" if ts else ""


def at(moment: float) -> str:
    """A moment in seconds since 1970 as every answer spells a time: `2026-02-01T09:30:05Z`."""
    return stamp(iso(datetime.fromtimestamp(moment, UTC)))


def timestamp(value: float | str) -> float:
    """Seconds since 1970 of a moment a record holds in either form: text (`2026-02-01T09:30:05Z`, what loop runs
    record since 2026-12-06) or a number (what they recorded before; logs are append-only, so both stay)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def shown(ts: str, seconds: bool = True) -> str:
    """A stored time (ISO, UTC) as a person or an agent reads it, with its zone: `2026-02-01 09:30:05 UTC`. Day
    words in queries (`today`, `yesterday`) are days of the local calendar; what is shown says UTC, so the two never
    pass for each other."""
    return f"{ts[:19 if seconds else 16].replace('T', ' ')} UTC" if ts else ""


def length(seconds: float) -> str:
    """How long `seconds` is, in the unit a person would say it in: `under a second`, `about 42 s`, `about 57 min`."""
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"about {round(seconds)} s"
    if seconds < 90 * 60:
        return f"about {round(seconds / 60)} min"
    hours = seconds / 3600
    return f"about {hours:.1f} h".replace(".0 h", " h") if hours < 10 else f"about {round(hours)} h"


def _forms() -> str:
    return "Use one of: " + ", ".join(FORMS) + "."


_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "a couple of": 2, "a few": 3, "several": 3}
_SPAN = r"(?:\d{1,3}|a couple of|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_MENTION = re.compile(
    r"\b(?:(yesterday|today|tonight|tomorrow|last night|this morning|this afternoon|this evening)"
    r"|(last|this past|next|this) (week|weekend|month|year|" + "|".join(_WEEKDAYS) + r")"
    r"|(" + _SPAN + r") (day|week|month|year)s? (ago|from now|later))\b", re.I)
_HINTS = ("yesterday", "today", "tonight", "tomorrow", "last ", "this ", "next ", " ago", "from now", "later")
# A year: not a number an engineering log cites (issue #2031, PR 1999, line 1834, port 2049, 2000.5 ms).
_ABSOLUTE = re.compile(r"(?<![#:.\w/-])(?<!pr )(?<!line )(?<!port )(?<!issue )(?<!pull )(?:1[89]\d\d|20\d\d)\b(?![.:]\d)|\b(?:january|february|march|april|may|june|july|august|september|october"
                       r"|november|december) \d{1,2}\b|\b\d{1,2} (?:january|february|march|april|june|july|august|september"
                       r"|october|november|december)\b", re.I)
_ASKS = re.compile(r"^\s*(?:when\b|how long\b|since when\b|what (?:year|month|day|date|time)\b|which (?:year|month|day|date)\b)"
                   r"|\b(?:what|which) (?:year|month|date)\b", re.I)


def mentions(text: str, at: datetime) -> list[str]:
    """Words for the dates that the relative times in `text` name, read from `at` (the record's time): a day as
    `2023-05-07 7 May 2023`, a week as the day a week away, a month as `April 2023`, a year as `2022`."""
    found: list[str] = []
    head = text[:20_000].lower()
    if not any(hint in head for hint in _HINTS):  # most records name no time: a few substring tests, not the regex
        return found
    for match in _MENTION.finditer(head):
        day_word, relation, unit, count, span_unit, direction = match.groups()
        if day_word:
            shift = {"yesterday": -1, "tomorrow": 1}.get(day_word.lower(), 0)
            found.append(day_words(at + timedelta(days=shift)))
        elif relation:
            sign = {"last": -1, "this past": -1, "next": 1, "this": 0}[relation.lower()]
            found.append(_unit(at, unit.lower(), sign))
        else:
            amount = int(count) if count.isdigit() else _NUMBERS[count.lower()]
            found.append(_unit(at, span_unit.lower(), amount * (-1 if direction.lower() == "ago" else 1)))
    return list(dict.fromkeys(found))


def states_time(text: str) -> bool:
    """Whether `text` says when something happened: a relative time or a year, month or date written out."""
    return bool(_MENTION.search(text[:20_000]) or _ABSOLUTE.search(text[:20_000]))


def asks_when(question: str) -> bool:
    return bool(_ASKS.search(question))


def day_words(moment: datetime) -> str:
    """A day as it is indexed: `2023-05-07 7 May 2023`, the day without a leading zero, as people write it."""
    return f"{moment:%Y-%m-%d} {moment.day} {moment:%B %Y}"


def _unit(at: datetime, unit: str, count: int) -> str:
    if unit in _WEEKDAYS:  # last friday: the one before `at`; next friday: the one after; this friday: the coming one
        ahead = (_WEEKDAYS.index(unit) - at.weekday()) % 7
        shift = -((7 - ahead) % 7 or 7) if count < 0 else (ahead or 7) if count > 0 else ahead
        return day_words(at + timedelta(days=shift))
    if unit in ("week", "weekend", "day"):
        return day_words(at + timedelta(days=count * (1 if unit == "day" else 7)))
    if unit == "month":
        month = at.year * 12 + at.month - 1 + count
        return f"{datetime(month // 12, month % 12 + 1, 1):%B %Y}"
    return str(at.year + count)
