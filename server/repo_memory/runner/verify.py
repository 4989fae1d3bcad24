"""Running a loop's verification steps: a subprocess in the repository root, a timeout, captured output, a verdict."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from repo_memory.formats.loops import Step

EXCERPT_CHARS = 2000
CANNOT_RUN = (126, 127)  # the shell's "not executable" and "command not found"


@dataclass(frozen=True)
class Outcome:
    """The verdict of one step and what it printed."""

    step: Step
    passed: bool
    reason: str
    exit: int | None = None
    timed_out: bool = False
    cannot_run: bool = False
    seconds: float = 0.0
    output: str = ""

    @property
    def excerpt(self) -> str:
        """The end of the output, where failures usually are, capped for an agent's context."""
        text = self.output.strip()
        return text if len(text) <= EXCERPT_CHARS else "…" + text[-EXCERPT_CHARS:]

    @property
    def signature(self) -> str:
        """A fingerprint of the failure that ignores numbers, hashes, times and temp paths, to spot a loop going round."""
        lines = [ln for ln in self.output.splitlines() if re.search(r"error|fail|assert|exception|traceback", ln, re.I)] or self.output.splitlines()[-20:]
        text = "\n".join(lines)
        text = re.sub(r"/tmp/\S+|0x[0-9a-f]+|\b[0-9a-f]{7,}\b", "H", text, flags=re.I)
        text = re.sub(r"\d+(\.\d+)?", "N", text)
        return hashlib.sha1(f"{self.step.index}|{self.reason.split(':')[0]}|{text}".encode()).hexdigest()[:16]


def run(step: Step, root: Path) -> Outcome:
    """Run a level 3-5 step's command and judge it against its `expect`."""
    assert step.run is not None
    started = time.monotonic()
    # A new session makes the command the leader of its own process group, so a timeout can kill everything it started.
    proc = subprocess.Popen(step.run, shell=True, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, "REPO_MEMORY_VERIFY": "1"})
    try:
        raw, _ = proc.communicate(timeout=step.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raw, _ = proc.communicate()
        output = raw.decode("utf-8", errors="replace")
        return Outcome(step, False, f"timed out after {step.timeout:g} s and was killed", None, True, False, time.monotonic() - started, output)
    output = raw.decode("utf-8", errors="replace")
    seconds = time.monotonic() - started
    if proc.returncode in CANNOT_RUN:
        return Outcome(step, False, f"the command could not run (exit {proc.returncode})", proc.returncode, False, True, seconds, output)
    return Outcome(step, *_judge(step, proc.returncode, output), exit=proc.returncode, seconds=seconds, output=output)


def _judge(step: Step, code: int, output: str) -> tuple[bool, str]:
    expect = step.expect
    wanted = int(expect.get("exit", 0))
    if code != wanted:
        return False, f"exit code {code}, expected {wanted}"
    if "regex" in expect and not re.search(expect["regex"], output, re.MULTILINE):
        return False, f"output does not match /{expect['regex']}/"
    if "threshold" in expect:
        rule = expect["threshold"]
        match = re.search(rule["pattern"], output, re.MULTILINE)
        if not match:
            return False, f"no number matched /{rule['pattern']}/ in the output"
        try:
            value = float(match.group(1))
        except ValueError:
            return False, f"/{rule['pattern']}/ matched {match.group(1)!r}, which is not a number"
        if "min" in rule and value < rule["min"]:
            return False, f"{value:g} is below the minimum {rule['min']:g}"
        if "max" in rule and value > rule["max"]:
            return False, f"{value:g} is above the maximum {rule['max']:g}"
    return True, "passed"
