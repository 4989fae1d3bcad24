"""Five-field cron expressions (minute hour day-of-month month day-of-week), parsed strictly."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from repo_memory.errors import CronError

FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))
NAMES = {
    3: {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)},
    4: {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())},
}


@dataclass(frozen=True)
class Cron:
    """The sets of values each field allows."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool
    any_weekday: bool

    def matches(self, moment: datetime) -> bool:
        """True when `moment` (to the minute) is one the expression names; day fields combine as cron does (either, when both are set)."""
        if moment.minute not in self.minutes or moment.hour not in self.hours or moment.month not in self.months:
            return False
        weekday = (moment.weekday() + 1) % 7  # cron counts Sunday as 0
        day_ok, weekday_ok = moment.day in self.days, weekday in self.weekdays
        if self.any_day or self.any_weekday:
            return day_ok and weekday_ok
        return day_ok or weekday_ok


def parse(expression: str) -> Cron:
    """Parse `expression` or raise CronError naming the field at fault."""
    parts = expression.split()
    if len(parts) != 5:
        raise CronError(f"'{expression}' has {len(parts)} fields; cron needs 5: minute hour day-of-month month day-of-week (e.g. '0 3 * * 1').")
    sets = [_field(part, index) for index, part in enumerate(parts)]
    weekdays = frozenset(0 if d == 7 else d for d in sets[4])
    return Cron(sets[0], sets[1], sets[2], sets[3], weekdays, parts[2] == "*", parts[4] == "*")


def _field(text: str, index: int) -> frozenset[int]:
    label, low, high = FIELDS[index]
    values: set[int] = set()
    for item in text.lower().split(","):
        body, _, step_text = item.partition("/")
        step = _number(step_text, label) if step_text else 1
        if step < 1:
            raise CronError(f"the {label} step in '{text}' must be at least 1")
        if body == "*":
            start, end = low, high
        elif "-" in body:
            a, b = body.split("-", 1)
            start, end = _value(a, index), _value(b, index)
        else:
            start = _value(body, index)
            end = high if step_text else start
        if not (low <= start <= high and low <= end <= high) or start > end:
            raise CronError(f"the {label} field '{text}' is outside {low}-{high}")
        values.update(range(start, end + 1, step))
    return frozenset(values)


def _value(text: str, index: int) -> int:
    names = NAMES.get(index, {})
    return names[text] if text in names else _number(text, FIELDS[index][0])


def _number(text: str, label: str) -> int:
    if not text.isdigit():
        raise CronError(f"'{text}' is not a number in the {label} field")
    return int(text)
