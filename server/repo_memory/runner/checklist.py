"""A level-2 checklist asked in words: how a driver without a tool call (a headless round, a Stop hook) asks an agent
for its answers and reads them back from what the agent wrote."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from repo_memory.formats import nesting

if TYPE_CHECKING:
    from repo_memory.formats.loops import Loop
    from repo_memory.runner.verify import Outcome

PREFIX = "CHECKLIST:"
_LINE = re.compile(rf"^\s*{PREFIX}\s*(\{{.*\}})\s*$", re.MULTILINE)


def ask(items: tuple[str, ...] | list[str]) -> str:
    """The sentence that asks for the answers: one line the agent writes last, each item word for word."""
    if not items:
        return ""
    template = json.dumps({item: True for item in items}, ensure_ascii=False)
    return (f"Answer the spec's checklist in the last line of your final message, each item word for word, true only "
            f"when it holds:\n{PREFIX} {template}")


def answers(text: str) -> dict[str, bool] | None:
    """The answers in the last CHECKLIST line of `text` (items whose answer is not a boolean are left out), or None
    when `text` holds no such line."""
    for raw in reversed(_LINE.findall(text or "")):
        try:
            found = nesting.loads(raw)
        except ValueError:
            continue
        if isinstance(found, dict):
            return {str(k): v for k, v in found.items() if isinstance(v, bool)}
    return None


def wanted(spec: Loop, unanswered: Outcome | None, in_words: bool) -> str:
    """How to give the checklist answers still missing, in the driver's form (`in_words`: a line of the agent's final
    message, else loop_step's argument); '' when none are missing."""
    if unanswered is None or unanswered.step.level != 2:
        return ""
    items = [item for s in spec.steps if s.level == 2 for item in s.checklist]
    if in_words:
        return ask(items)
    return f"Call loop_step with checklist={json.dumps({item: True for item in items}, ensure_ascii=False)} (each item word for word, true only when it holds)."
