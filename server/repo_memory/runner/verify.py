"""Running a loop's verification steps: a subprocess in the repository root, a timeout, captured output, a verdict."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import os
import re
import secrets
import selectors
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from repo_memory.formats.loops import Step
from repo_memory.errors import ConflictError
from repo_memory.guards import secretscan

EXCERPT_CHARS = 2000
OUTPUT_KEEP = 256 * 1024  # bytes of a command's output kept from its start, and again from its end
EXIT_GRACE = 1.0  # seconds a command's leftover children may keep its output open after it exits
KILL_PATIENCE = 10.0  # seconds ending a step's processes waits for them to be gone
PF_KTHREAD = 0x00200000  # a kernel thread, in /proc/PID/stat flags: never a step's
CANNOT_RUN = (126, 127)  # the shell's "not executable" and "command not found"
# Steps in flight in this process (process group -> token), so a server that ends takes them with it: a step runs in a
# session of its own (a timeout kills its group, not the server), which a harness ending the server's group misses.
_IN_FLIGHT: dict[int, str] = {}
_IN_FLIGHT_LOCK = threading.RLock()  # re-entrant: `loop run`'s signal handler ends the steps in the thread that may hold it
_ENDING = threading.Event()
TOKEN = "REPO_MEMORY_VERIFY"  # the variable a step's (or a `loop run` round's) processes carry its token in


@dataclass
class Call:
    """The steps one tool call runs, which whoever serves the call can stop (its client cancelled it): they judge nothing."""

    steps: dict[int, str] = field(default_factory=dict)  # process group -> token
    stopped: bool = False

    def stop(self) -> None:
        with _IN_FLIGHT_LOCK:
            self.stopped = True
            live = list(self.steps.items())
        for group, token in live:
            end_everything(group, token)


_CALL: contextvars.ContextVar[Call | None] = contextvars.ContextVar("repo_memory_verify_call", default=None)


@contextlib.contextmanager
def call(steps: Call | None = None) -> Iterator[Call]:
    """The steps run in this context (and the threads it starts with a copy of it, as anyio's do), to stop as one."""
    steps = steps or Call()
    reset = _CALL.set(steps)
    try:
        yield steps
    finally:
        _CALL.reset(reset)


@dataclass(frozen=True)
class Outcome:
    """The verdict of one step and what it printed."""

    step: Step
    passed: bool
    reason: str
    exit: int | None = None
    timed_out: bool = False
    cannot_run: bool = False
    unanswered: bool = False  # the agent's own word (a checklist answer, 'done') is missing, not against the work
    seconds: float = 0.0
    output: str = ""  # redacted, head and tail only
    output_bytes: int = 0  # how much the command printed in all
    redacted: tuple[str, ...] = ()  # rules of the secrets replaced in `output`

    @property
    def excerpt(self) -> str:
        """The end of the output, where failures usually are, capped for an agent's context."""
        text = self.output.strip()
        return text if len(text) <= EXCERPT_CHARS else "…" + text[-EXCERPT_CHARS:]

    @property
    def signature(self) -> str:
        """A fingerprint of the failure, to spot a loop going round: the same for one failure printed again (times,
        durations, temp paths, addresses, process ids and hashes vary between runs), different when what failed did
        (another test case, another number of errors)."""
        text = _temporary(tempfile.gettempdir(), os.environ.get("TMPDIR", "")).sub("<temp>", self.output)
        for pattern, stand_in in _VARYING:
            text = pattern.sub(stand_in, text)
        return hashlib.sha1(f"{self.step.index}|{self.reason}|{text}".encode()).hexdigest()[:16]

    @property
    def telling_line(self) -> str:
        """The line that names the failure: the first that speaks of an error or failure, else the last; capped."""
        lines = [ln.strip() for ln in self.output.splitlines() if ln.strip()]
        named = [ln for ln in lines if re.search(r"error|fail|assert|exception", ln, re.IGNORECASE)]
        return (named or lines[-1:] or [""])[0][:200]


# What differs between two runs of one failure, most specific first; every other number stays (a test id, a count).
_VARYING = tuple((re.compile(p, re.IGNORECASE), stand_in) for p, stand_in in (
    (r"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}:?\d{2})?", "<time>"),
    (r"\b\d{1,2}:\d{2}:\d{2}([.,]\d+)?\b", "<time>"),
    (r"\b0x[0-9a-f]+\b", "<address>"),
    (r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,}\b", "<hash>"),
    (r"\b\d+(\.\d+)?\s?(ns|us|µs|ms|s|sec|secs|seconds?|min|minutes?)\b", "<duration>"),
    (r"\b(pid|process|port)([ =:#]+)\d+", r"\1\2<n>"),
))


@functools.lru_cache(maxsize=8)
def _temporary(*roots: str) -> re.Pattern[str]:
    """A path inside a temporary folder: the usual ones, and where TMPDIR puts them here (a tmpfs, $XDG_RUNTIME_DIR)."""
    folders = {"/tmp", "/var/folders", "/var/tmp", *(r.rstrip("/") for r in roots if r.startswith("/") and r.rstrip("/"))}
    return re.compile(r"(?:/private)?(?:%s)/\S*" % "|".join(map(re.escape, sorted(folders, key=len, reverse=True))))


def run_token(run_id: str) -> str:
    """The token every process of run `run_id`'s steps carries: a step a killed server left running is found by it
    and ended before the run is verified again (end_leftovers)."""
    return hashlib.sha256(f"repo-memory loop run {run_id}".encode()).hexdigest()[:16]


def agent_token(run_id: str) -> str:
    """The token a `loop run` round's agent, and what it starts, carry: `loop abort` ends what a driver killed with no
    time to end its round left running (as run_token's, of the checks)."""
    return hashlib.sha256(f"repo-memory loop run {run_id} agent".encode()).hexdigest()[:16]


def run(step: Step, root: Path, token: str | None = None, deadline: float | None = None) -> Outcome:
    """Run a level 3-5 step's command and judge it against its `expect`.

    The whole step is bounded by its timeout (or what is left before `deadline`, a time.monotonic() its caller must
    answer by: a hook's) plus a short grace for reading what is left, whatever the command's children do (a daemon
    that keeps the output pipe open is left behind, not waited for). The output kept is its head and tail
    (OUTPUT_KEEP bytes each, the total size recorded), with every secret redacted, before anything else sees it.
    """
    assert step.run is not None
    started = time.monotonic()
    limit = step.timeout if deadline is None else max(0.0, min(step.timeout, deadline - started))
    # A new session makes the command the leader of its own process group; and every process it starts inherits a
    # token in its environment, which finds the ones that left the group (setsid, a daemon) when the step ends.
    token = token or secrets.token_hex(8)
    with _IN_FLIGHT_LOCK:
        _interrupted()
        proc = subprocess.Popen(step.run, shell=True, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, TOKEN: token})
        _IN_FLIGHT[proc.pid] = token
        if (caller := _CALL.get()) is not None:
            caller.steps[proc.pid] = token
    assert proc.stdout is not None
    try:
        capture = Capture()
        timed_out = not capture.read(proc, started + limit)
        if timed_out:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait()
        end_everything(proc.pid, token)
        proc.stdout.close()
    finally:
        if proc.poll() is None:  # interrupted (Ctrl-C in `loop run`): the step's work ends with the step
            end_everything(proc.pid, token)
        with _IN_FLIGHT_LOCK:
            _IN_FLIGHT.pop(proc.pid, None)
            if (caller := _CALL.get()) is not None:
                caller.steps.pop(proc.pid, None)
    _interrupted()  # killed because the server is ending, or the call was cancelled: that says nothing about the work
    seconds = time.monotonic() - started
    output, found = secretscan.redact(capture.text())
    kept = functools.partial(Outcome, step, seconds=seconds, output=output, output_bytes=capture.total,
                             redacted=tuple(sorted({f.rule for f in found})))
    if timed_out and limit < step.timeout:  # not the work's failure: the ladder is longer than its driver may wait
        return kept(False, f"was still running when the {limit:.0f} s the Stop hook had left ran out (the step allows "
                           f"{step.timeout:g} s), and was killed; drive a loop whose checks take this long with `repo-memory "
                           "loop run`, or lower its steps' timeouts (`repo-memory loop lint` names such loops)",
                    timed_out=True, cannot_run=True)
    if timed_out:
        return kept(False, f"timed out after {step.timeout:g} s and was killed", timed_out=True)
    if code in CANNOT_RUN:
        said = next((ln.strip() for ln in reversed(output.splitlines()) if ln.strip()), "")[:200]
        return kept(False, f"the shell could not run `{step.run}` (exit {code}{': ' + said if said else ''}); install the "
                           f"tool it calls, or fix the step's run: in the spec (an edited spec needs a person's accept again)", code,
                    cannot_run=True)
    return kept(*_judge(step, code, output), exit=code)


def end_all() -> int:
    """Kill every step in flight and start no other (the server is ending); returns how many there were. The steps'
    calls raise instead of judging the work, so their runs stay live, to be stepped again."""
    with _IN_FLIGHT_LOCK:
        _ENDING.set()
        live = list(_IN_FLIGHT.items())
    for group, token in live:
        end_everything(group, token)
    return len(live)


def _interrupted() -> None:
    if _ENDING.is_set():
        raise ConflictError("repo-memory is shutting down, so this verification step was stopped and judged nothing; the run "
                            "is still live: call loop_step again once the server is back.")
    if (caller := _CALL.get()) is not None and caller.stopped:
        raise ConflictError("The call was cancelled, so this verification step was stopped and judged nothing; the run is "
                            "still live: call loop_step again.")


def end_everything(group: int, token: str) -> None:
    """Kill what a step left running: its process group, and any process carrying its token (one that started a
    session of its own; found through /proc, so on Linux). A step's work ends with the step: this returns once they
    are gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)
    end_leftovers(token, group)


def end_leftovers(token: str, group: int | None = None) -> None:
    """Kill every process carrying `token` (found through /proc, so on Linux), or in process group `group`, and return
    once none is left alive (or after KILL_PATIENCE seconds): what a step whose server was killed (SIGKILL leaves no
    time to end it) still runs, or what a step that ended left. A killed process still holds its files, locks and ports
    until its exit is done; and a process caught in an exec has no environment to read for a moment: one look misses it."""
    mark = f"{TOKEN}={token}".encode()
    deadline = time.monotonic() + KILL_PATIENCE
    while True:
        ours, unread = _left(mark, group)
        for pid in ours:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if not (ours or unread) or time.monotonic() >= deadline:
            return
        time.sleep(0.01)  # a killed process is gone once its exit is done; an exec is over in a moment


def _left(mark: bytes, group: int | None) -> tuple[list[int], list[int]]:
    """The live processes carrying environment entry `mark` or in `group`; and those whose environment cannot be read
    yet (in an exec, or exiting), which may carry it: looked at again. Zombies are dead; what is not ours to read is
    not a step's."""
    ours, unread = [], []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read().rsplit(b")", 1)[1].split()
            state, pgrp, flags, env = stat[0], int(stat[2]), int(stat[6]), stat[47:49]  # proc(5): fields 3, 5, 9, 50-51
        except (OSError, ValueError, IndexError):
            continue  # gone already
        if state in (b"Z", b"X") or flags & PF_KTHREAD:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as handle:
                environ = handle.read()
        except ProcessLookupError:  # no memory left to read (Linux 6 says so): exiting
            environ, env = b"", []
        except OSError:
            continue  # gone already, or not ours to read
        if pgrp == group or mark in environ.split(b"\0"):
            ours.append(int(entry.name))
        elif not environ and not (len(env) == 2 and env[0] == env[1] != b"0"):  # an empty one has env_start == env_end
            unread.append(int(entry.name))
    return ours, unread


class Capture:
    """A command's output as its first and last OUTPUT_KEEP bytes and its total size; the middle is read and dropped."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = OUTPUT_KEEP - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[:-OUTPUT_KEEP]

    def read(self, proc: subprocess.Popen[bytes], deadline: float) -> bool:
        """Read until the output closes and the command exits, or the deadline passes (False). After the command
        exits, its leftover children get EXIT_GRACE seconds to close the output; then reading stops."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        exited_at: float | None = None
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                now = time.monotonic()
                if exited_at is None and proc.poll() is not None:
                    exited_at = now
                limit = deadline if exited_at is None else min(deadline, exited_at + EXIT_GRACE)
                if now >= limit:
                    return exited_at is not None
                if selector.select(timeout=min(limit - now, 0.2)):
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:  # every writer closed the output: wait for the command itself, within the deadline
                        try:
                            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                        except subprocess.TimeoutExpired:
                            return False
                        return True
                    self.add(chunk)

    def text(self) -> str:
        if self.total <= 2 * OUTPUT_KEEP:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace")
        dropped = self.total - len(self.head) - len(self.tail)
        return (self.head.decode("utf-8", errors="replace") + f"\n[… {dropped:,} bytes of output not kept …]\n"
                + self.tail.decode("utf-8", errors="replace"))


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
