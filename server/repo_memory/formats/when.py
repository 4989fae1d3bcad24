"""Points in time as people and agents write them, read one way everywhere (recall's since/until, as_of, history
--since, timeline --since) and turned into the records' form: UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`.

Accepted: an ISO date (`2026-11-30`) or date-time (`2026-11-30T14:00`, `2026-11-30 14:00:00Z`, with an offset like
`+01:00`; no zone means UTC); `now`, `today`, `yesterday`; `N minutes|hours|days|weeks|months|years ago`;
`last week|month|year`; `last monday` … `last sunday`. Day forms are days of the local calendar. Anything else is
refused with an error naming these forms, never read as "no filter".
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


def _forms() -> str:
    return "Use one of: " + ", ".join(FORMS) + "."
