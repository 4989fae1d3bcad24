"""What each skill is worth, from what happened when it was used: loop outcomes and agents' feedback.

Evidence per skill, aggregated from experience records that cite it (`skill:NAME` in refs):
  uses        `skill.used` records (a loop run credited it) plus feedback records
  successes   loop runs it was credited in that ended `succeeded` (verified by the server)
  failures    runs it was credited in that ended blocked, budget_exhausted or no_progress (a run credits its skills
              only after at least one verified iteration; one that could not verify, or that a person aborted, says
              nothing about them)
  helped / misled / outdated   `feedback` records

Ranking (`recall`): a skill's text score (BM25 with the phrase and name boosts) is multiplied by

    utility  = 0.5 + (successes + helped + 1) / (successes + helped + failures + misled + outdated + 2)
    recency  = 0.8 + 0.2 * 0.5 ** (days since last used, or since the file last changed / decay_half_life_days)

utility runs from 0.5 to 1.5 and is exactly 1.0 with no evidence, so a new skill starts level with an unproven
old one and is never buried (exploration): it falls behind only skills that earned a better record. recency
lets a skill nobody used for a long time lose ties (at most 20%) to fresh ones; decay_half_life_days = 0 turns
it off. Three verified successes give 1.3, three failures 0.7.

A skill whose bad outcomes (misled + failures + outdated) number at least 3, outnumber its good ones, and came from
more than one session (or one of them from a person) is suggested for deprecation (doctor, the session briefing); a
person sets `status: deprecated`. One agent repeating `feedback(misled)` cannot get a skill proposed.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from repo_memory.index.activity import Activity
from repo_memory.index.db import Database

FAILED = ("blocked", "budget_exhausted", "no_progress")
CREDITED = ("succeeded", "no_op", *FAILED)  # the terminal states that judge the skills a run used
from repo_memory.formats.experience import FEEDBACK  # noqa: F401 (re-exported: the feedback outcomes)
DEPRECATE_AFTER = 3


@dataclass(frozen=True)
class Utility:
    """The evidence on one skill."""

    name: str
    uses: int = 0
    successes: int = 0
    failures: int = 0
    helped: int = 0
    misled: int = 0
    outdated: int = 0
    last_used: str = ""
    bad_sessions: int = 0  # sessions the bad outcomes came from
    bad_from_person: bool = False

    @property
    def utility(self) -> float:
        """0.5 + (good + 1) / (good + bad + 2): 1.0 with no evidence, from 0.5 to 1.5 (the one formula recall, stats,
        the report and the briefing use)."""
        good, bad = self.successes + self.helped, self.failures + self.misled + self.outdated
        return 0.5 + (good + 1) / (good + bad + 2)

    @property
    def deprecate(self) -> bool:
        bad = self.failures + self.misled + self.outdated
        return bad >= DEPRECATE_AFTER and bad > self.successes + self.helped and (self.bad_sessions > 1 or self.bad_from_person)


class Evidence:
    """Utility of every skill that has evidence, recomputed only when the index changed."""

    def __init__(self, db: Database):
        self._db, self._activity = db, Activity(db)
        self._cache: tuple[Any, dict[str, Utility]] | None = None
        self._lock = threading.Lock()

    def all(self) -> dict[str, Utility]:
        key = self._db.generation()  # changes with every index write, ours or another process's; no table scan
        with self._lock:
            if self._cache and self._cache[0] == key:
                return dict(self._cache[1])
        found = {
            name: Utility(name, uses=used + helped + misled + outdated, successes=ok, failures=failed, helped=helped, misled=misled,
                          outdated=outdated, last_used=last or "", bad_sessions=sessions or 0, bad_from_person=bool(person))
            for name, used, ok, failed, helped, misled, outdated, last, sessions, person in self._activity.skill_evidence(FAILED)
        }
        with self._lock:
            self._cache = (key, found)
        return dict(found)

    def of(self, name: str) -> Utility:
        return self.all().get(name, Utility(name))


def factor(evidence: Utility | None, changed_ns: int, half_life_days: float, now: float | None = None) -> float:
    """The multiplier recall applies to a skill's text score (see the module docstring)."""
    u = evidence.utility if evidence else 1.0
    if half_life_days <= 0:
        return u
    now = time.time() if now is None else now
    last = changed_ns / 1e9
    if evidence and evidence.last_used:
        last = max(last, datetime.fromisoformat(evidence.last_used.replace("Z", "+00:00")).timestamp())
    age_days = max(0.0, (now - last) / 86400)
    return u * (0.8 + 0.2 * 0.5 ** (age_days / half_life_days))
