"""The loop engine: a run is a session log of loop.* records; the server verifies and decides, the agent works.

States: running, then one terminal state — succeeded, no_op, blocked, budget_exhausted, no_progress,
unverifiable, aborted. Every start, report, verification and decision is an experience record in the run's
own session (its id is the run id), so a receipt cites its evidence by id and the state is rebuilt from files.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from repo_memory.formats import experience, when
from repo_memory.git import history, snapshot
from repo_memory.git.pending import start_time
from repo_memory.git.repo import Git
from repo_memory.formats import loops
from repo_memory.guards.shellwords import quoted
from repo_memory.runner import checklist, runstate, verify
from repo_memory.runner.runstate import RunState
from repo_memory.errors import ConflictError, InvalidArgumentError, InvalidRecordError, NotFoundError, RepoMemoryError
from repo_memory.core.acceptances import Acceptances
from repo_memory.core.reviewing import reviewed, shown
from repo_memory.core.store import Store
from repo_memory.core.utility import CREDITED

TERMINAL = ("succeeded", "no_op", "blocked", "budget_exhausted", "no_progress", "unverifiable", "aborted")
STATUSES = ("progress", "done", "no_op", "blocked")


@dataclass(frozen=True)
class Checked:
    """One iteration's verification: the first failure of the work (or a step that could not run), the first missing
    word of the agent's, the highest level passed up to the success level, and the tree of the files it checked."""

    iteration: int
    failed: verify.Outcome | None
    unanswered: verify.Outcome | None
    reached: int
    tree: str = ""


class Engine:
    """Starts, steps, reports on and aborts loop runs over one Store."""

    def __init__(self, store: Store, trusted: dict[str, str] | None = None):
        self.store = store
        self.trusted = trusted or {}  # spec name -> sha256 a CI job trusts as committed (`loop due --trust-specs-at`)
        self._read_during: dict[str, set[str]] = {}  # live runs started here -> skills read through this engine's server

    def note_read(self, skill: str, runs: list[str] | None = None) -> None:
        """A skill was read while runs were live (those started through this engine, or `runs`): each records it as a
        `loop.read` record of its own, which credits the skill with the run's outcome (see `_end`)."""
        for run in dict.fromkeys([*self._read_during, *(runs or [])]):
            seen = self._read_during.setdefault(run, set())
            if skill in seen:
                continue
            seen.add(skill)
            try:
                if self.state(run).state in TERMINAL:
                    continue
            except NotFoundError:
                continue
            self._append(run, "loop.read", f"skill:{skill} read during run {run}", "agent", "loop", {"skill": skill})

    # --- specs and acceptance ----------------------------------------------------------------

    def spec(self, name: str) -> loops.Loop:
        """The current, valid spec `name` (InvalidRecordError lists every problem with its line)."""
        return self.store.loop_spec(name)

    def _acceptances(self) -> Acceptances:
        """Who accepted what on this clone (core/acceptances.py: an entry counts only with this clone's mark)."""
        return Acceptances(self.store.config.clone_dir, self.store.config.state_dir, self.store.key)

    def accept(self, name: str, sha: str | None = None) -> loops.Loop:
        """Record that a person accepted the spec's current content, so its commands may run on this clone. `sha` (a
        prefix of the spec's sha256) names the version the person read: refused when the spec changed since."""
        spec = self.spec(name)
        if sha is not None:
            versions = [hashlib.sha256(data).hexdigest() for _, _, data in history.versions(Git(self.store.root, self.store.config.git_dir), spec.path)]
            versions += shown(self.store.config.state_dir)  # versions `loop show` printed here, committed or not
            reviewed(f"loop:{name}", sha, spec.sha256, f"repo-memory loop show {quoted(name)}", versions=versions)
        self._acceptances().add(name, spec.sha256)
        return spec

    def runnable(self, spec: loops.Loop, started: str = "") -> str:
        """Why the spec's commands may not run, or '' when they may; `started`: the sha of the spec a run started with,
        which alone verifies it (an agent's shell can rewrite the spec and accept it again as a person would)."""
        if started and spec.sha256 != started:
            return (f"{spec.path} changed since the run started (sha {started[:12]}, now {spec.sha256[:12]}): a run is verified "
                    f"by the spec it started with; start a new run of it with loop_start('{spec.name}')")
        # outside a terminal (an agent's shell, a hook) accept needs the sha of what was reviewed, which `show` prints
        command = f"`repo-memory loop show {quoted(spec.name)}`, then `repo-memory loop accept {quoted(spec.name)} --sha SHA`"
        if spec.status != "active":
            return f"the spec is '{spec.status}', not active: a person reviews {spec.path}, sets status: active, then runs {command}"
        acceptances = self._acceptances()
        if acceptances.accepted().get(spec.name) != spec.sha256 and self.trusted.get(spec.name) != spec.sha256:
            unmarked = (" (its acceptance carries no mark of this clone: an older version's, or another clone's)"
                        if spec.name in acceptances.unmarked() else "")
            return f"no person has accepted the current content of {spec.path}{unmarked}: a person reviews it with {command}"
        return ""

    def accepted_at(self, spec: loops.Loop) -> float:
        """When a person accepted the spec here (seconds since 1970; before acceptances kept it, when its file last changed)."""
        at = self._acceptances().accepted_at(spec.name)
        return at if at is not None else (self.store.root / spec.path).stat().st_mtime

    def ready(self, name: str) -> loops.Loop:
        """The spec `name` when it may run here; else ConflictError, saying why and what a person does about it."""
        spec = self.spec(name)
        if blocked := self.runnable(spec):
            raise ConflictError(f"Loop {name} may not run on this clone, so nothing was started or recorded: {blocked}.")
        return spec

    # --- runs --------------------------------------------------------------------------------

    def start(self, name: str, harness_session: str | None = None, actor: str = "agent", harness_pid: int = 0) -> dict[str, Any]:
        """Open a run: record loop.start and return the goal, notes, bound skills and what earlier runs learned. A spec
        that may not run here is refused (ConflictError) before anything is recorded: such a run could verify nothing."""
        spec = self.ready(name)
        run = f"{name}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
        earlier = self.receipts(name)
        start = self._append(run, "loop.start", f"Run {run} of loop {name} started. Goal: {spec.goal}", actor, "loop_start",
                             {"loop": name, "spec_sha256": spec.sha256, "harness_session": harness_session, "started": time.time(),  # a number: older versions read it as one (teammates share runs)
                              "harness_pid": harness_pid, "harness_started": start_time(harness_pid) if harness_pid else 0})
        skills, skipped = [], []
        for skill in spec.skills:
            try:
                item = self.store.read(f"skill:{skill}")
            except RepoMemoryError:
                skipped.append(f"{skill} (not found)")
                continue
            if item.status != "active":
                skipped.append(f"{skill} ({item.status})")
                continue
            skills.append({"id": item.id, "content": item.content})
        recalled = [{"id": h.id, **({"title": h.title} if h.title else {}), "snippet": h.snippet}  # a record has no title
                    for h in self.store.recall(spec.recall, 5).hits] if spec.recall else []
        ladder = ", ".join(f"L{s.level} {s.name}" for s in spec.steps)
        checklist = [item for s in spec.steps if s.level == 2 for item in s.checklist]
        answer = (f", checklist={json.dumps({item: True for item in checklist}, ensure_ascii=False)} (each item word for word, true "
                  "only when it holds)") if checklist else ""
        self._read_during[run] = set()
        return {
            "run": run, "state": "running", "goal": spec.goal, "notes": spec.notes, "skills": skills, "skipped_skills": skipped,
            "recalled": recalled, "earlier_runs": earlier, "start_id": start["id"], "checklist": checklist,
            "instruction": (f"Work toward the goal. When you have a result, call loop_step(run='{run}', report=<what you did>, "
                            f"status='done'|'progress'|'blocked'{answer}). The server then verifies ({ladder}); success needs every "
                            f"step up to level {spec.success_requires_level}. Budget: {spec.max_iterations} iterations"
                            + (f", {spec.max_minutes:g} minutes" if spec.max_minutes else "") + "."),
        }

    def step(self, run: str, report: str, status: str = "done", checklist: dict[str, bool] | None = None,
             skills: list[str] | None = None, actor: str = "agent", then: str = "Fix this, then call loop_step again.",
             in_words: bool = False, deadline: float | None = None) -> dict[str, Any]:
        """Record the agent's report, verify cheapest first, decide, and answer the next instruction or a terminal state.
        `in_words`: the driver reads the checklist from the agent's words (checklist.ask), not from a loop_step call;
        `deadline` (time.monotonic()): when the driver must have its answer (a hook the harness kills past its timeout)."""
        if status not in STATUSES:
            raise InvalidArgumentError(f"status must be one of {', '.join(STATUSES)}")
        # One step at a time per run, across processes: parallel calls (or two servers) each verified and ended it.
        with runstate.turn(self.store, run):
            current = self.state(run)
            if current.state in TERMINAL:
                raise ConflictError(f"Run {run} already ended: {current.state}. Start a new run with loop_start('{current.loop}').")
            # A blocked report needs no spec: a run whose spec went away can still be ended by the agent.
            spec = self._spec_if_any(current.loop) if status == "blocked" else self._spec_of_live(current)
            iteration = current.iterations + 1
            cut = runstate.cut_off(self.store, run)
            self._append(run, "loop.report", report or "(no report)", actor, "loop_step",
                         {"iteration": iteration, "status": status, "checklist": checklist or {}, "skills": skills or []})
            if status == "blocked":
                return self._decide(run, spec, iteration, "blocked", f"The agent reported it cannot proceed: {report}", "", actor, skills)
            assert spec is not None
            blocked = self.runnable(spec, current.spec_sha)
            if blocked:
                return self._decide(run, spec, iteration, "unverifiable", f"Verification cannot run: {blocked}.", "", actor, skills)
            checked = self._verify(run, spec, iteration, status, checklist or {}, actor, deadline)
            state, why, signature = self._conclude(current, spec, checked, status, then, in_words)
            answer = self._decide(run, spec, iteration, state, why, signature, actor, skills, checked.tree)
            if cut:
                answer["cut_off"] = cut
            if state == "continue" and checked.failed is None and checked.unanswered and checked.unanswered.step.level == 2:
                answer["awaiting"] = "checklist"  # every command passed: only the agent's answers are missing
            return answer

    def _verify(self, run: str, spec: loops.Loop, iteration: int, status: str, checklist: dict[str, bool], actor: str,
                deadline: float | None = None) -> Checked:
        """Run the ladder cheapest first, recording each outcome, up to the first failure of the work."""
        unanswered: verify.Outcome | None = None
        reached = 0
        token = verify.run_token(run)
        verify.end_leftovers(token)  # we hold the run's lock: a step still running is one a killed server left
        tree = snapshot.of_worktree(Git(self.store.root, self.store.config.git_dir), self.store.config.state_dir,
                                    experience.EXPERIENCE_DIR)  # the files given to check: see triggers.settled
        for step in spec.steps:
            outcome = self._check(step, status, checklist, token, deadline)
            self._record_outcome(run, iteration, outcome, actor)
            if outcome.cannot_run or (not outcome.passed and not outcome.unanswered):
                return Checked(iteration, outcome, unanswered, reached, tree)
            if outcome.passed and step.level <= spec.success_requires_level:
                reached = step.level
            # The agent's word missing (a checklist unanswered, 'progress') is not against the work: the commands still judge it.
            unanswered = unanswered or (outcome if outcome.unanswered else None)
        return Checked(iteration, None, unanswered, reached, tree)

    def _conclude(self, current: RunState, spec: loops.Loop, checked: Checked, status: str, then: str,
                  in_words: bool) -> tuple[str, str, str]:
        """The decision on a verified iteration: its state, why (or the next instruction), and its failure signature."""
        iteration, wanted, unanswered = checked.iteration, spec.success_requires_level, checked.unanswered
        failed = checked.failed
        if failed is not None and failed.cannot_run:
            return "unverifiable", f"Step '{failed.step.name}' cannot run: {failed.reason}.", ""
        if failed is None and unanswered is not None and unanswered.step.level <= wanted:
            failed = unanswered
        # Steps stop at the first failure, so a failure above the required level means every step up to it passed.
        if failed is None or failed.step.level > wanted:
            if checked.reached < wanted:
                return "unverifiable", f"No step at level {wanted} passed, and success needs one: fix the ladder (loop lint says how).", ""
            return ("no_op" if status == "no_op" else "succeeded"), f"Every step up to level {wanted} passed.", ""
        ask = checklist.wanted(spec, unanswered, in_words)
        signature = self._signature(failed)
        recent = (*current.signatures, signature)
        minutes = (time.time() - current.started) / 60
        # A checklist never answered while every command passed says nothing about the work or its skills.
        why_not = (f"every command passed, but the checklist was never answered ({failed.reason.split(': ', 1)[-1]})"
                   if failed is unanswered and failed.step.level == 2 else "")
        n = spec.no_progress_after
        if signature and n and len(recent) >= n and len(set(recent[-n:])) == 1:
            if why_not:
                return "unverifiable", f"{why_not[0].upper()}{why_not[1:]}, {n} times in a row.", signature
            telling = f": {failed.telling_line}" if failed.telling_line else ""
            return "no_progress", f"The same failure ({failed.step.name}: {failed.reason}) {n} times in a row{telling}.", signature
        if iteration >= spec.max_iterations or (spec.max_minutes and minutes > spec.max_minutes):
            used = (f"{iteration} of {spec.max_iterations} iterations used" if iteration >= spec.max_iterations
                    else f"{minutes:.1f} of {spec.max_minutes:g} minutes used")
            if why_not:
                return "unverifiable", f"{used}; {why_not}.", signature
            return "budget_exhausted", f"{used}; last failure: {failed.step.name}: {failed.reason}.", signature
        if failed is unanswered:
            return "continue", f"Iteration {iteration}: every command passed, but {failed.reason}. {ask or then}", signature
        return "continue", (f"Iteration {iteration} failed at step '{failed.step.name}' (level {failed.step.level}): "
                            f"{failed.reason}.\nOutput:\n{failed.excerpt}\n{then}" + (f"\n{ask}" if ask else "")), signature

    def _spec_if_any(self, name: str) -> loops.Loop | None:
        try:
            return self.spec(name)
        except (NotFoundError, InvalidRecordError):
            return None

    def _spec_of_live(self, current: RunState) -> loops.Loop:
        try:
            return self.spec(current.loop)
        except (NotFoundError, InvalidRecordError) as exc:
            raise ConflictError(f"Run {current.run} cannot be verified: {exc} Restore or fix the spec and call loop_step again; "
                                f"or end the run: loop_step(run='{current.run}', report=<why>, status='blocked'), or a person runs "
                                f"`repo-memory loop abort {quoted(current.run)}`.") from None

    @staticmethod
    def _signature(failed: verify.Outcome) -> str:
        # The agent still working ('progress' at level 1) is no failure to see repeated; only the budget bounds it.
        return "" if failed.unanswered and failed.step.level == 1 else failed.signature

    def _check(self, step: loops.Step, status: str, checklist: dict[str, bool], token: str,
               deadline: float | None = None) -> verify.Outcome:
        if step.level == 1:
            ok = status in ("done", "no_op")
            return verify.Outcome(step, ok, "the agent reports the goal met" if ok else f"the agent reports status '{status}'",
                                  unanswered=not ok and status == "progress")
        if step.level == 2:
            missing = [item for item in step.checklist if checklist.get(item) is not True]
            denied = [item for item in missing if checklist.get(item) is False]
            return verify.Outcome(step, not missing, "every checklist item answered yes" if not missing
                                  else "checklist items not answered yes: " + "; ".join(missing), unanswered=bool(missing) and not denied)
        return verify.run(step, self.store.root, token, deadline)

    def _record_outcome(self, run: str, iteration: int, outcome: verify.Outcome, actor: str) -> None:
        # outcome.output is already redacted and capped (verify.run): nothing unredacted reaches a blob or a record.
        blob = self.store.put_blob(outcome.output.encode("utf-8")) if len(outcome.output) > verify.EXCERPT_CHARS else None
        self._append(run, "loop.verify", f"L{outcome.step.level} {outcome.step.name}: {outcome.reason}", actor, "loop_step", {
            "iteration": iteration, "step": outcome.step.index, "level": outcome.step.level, "run": outcome.step.run,
            "passed": outcome.passed, "exit": outcome.exit, "timed_out": outcome.timed_out, "seconds": round(outcome.seconds, 3),
            "excerpt": outcome.excerpt if not outcome.passed else "", "output_blob": blob, "output_bytes": outcome.output_bytes,
            **({"redacted": list(outcome.redacted)} if outcome.redacted else {}),
        })

    def _decide(self, run: str, spec: loops.Loop | None, iteration: int, state: str, why: str, signature: str, actor: str,
                skills: list[str] | None, tree: str = "") -> dict[str, Any]:
        data = {"iteration": iteration, "state": state, "signature": signature, **({"tree": tree} if tree else {})}
        decision = self._append(run, "loop.decision", f"{state}: {why}", actor, "loop_step", data)
        if state == "continue":
            return {"run": run, "state": "continue", "iteration": iteration, "instruction": why, "decision": decision["id"]}
        receipt = self._end(self.state(run), spec, state, why, actor, skills)
        answer = {"run": run, "state": state, "iteration": iteration, "instruction": f"Stop: the run ended {state}. {why}",
                  "receipt": receipt["id"], "decision": decision["id"], "credited": receipt["data"]["credited"]}
        if receipt["data"]["not_credited"]:
            answer["not_credited"] = (f"{', '.join(receipt['data']['not_credited'])}: a run credits the skills its spec binds and "
                                      "those read (the read tool) during the run, not the ones a report names")
        return answer

    def _end(self, current: RunState, spec: loops.Loop | None, state: str, why: str, actor: str,
             skills: list[str] | None = None) -> dict[str, Any]:
        """Write the run's receipt and credit its skills; `spec` is None when the run's spec went away (renamed,
        deleted, invalid): the run still ends, naming the spec it started with."""
        bound = spec.skills if spec else ()
        minutes = round((time.time() - current.started) / 60, 2)
        self._read_during.pop(current.run, None)
        # Only a run that verified at least once judges the skills it used; only skills that exist are credited, and
        # only those the spec binds or the server saw read during the run: naming a skill in loop_step is not evidence.
        read = sorted({str(r["data"].get("skill")) for r in self.store.trusted(current.run) if r["kind"] == "loop.read"
                       and isinstance(r.get("data"), dict)})
        judged = state in CREDITED and current.iterations > 0
        credited = [s for s in dict.fromkeys([*bound, *read]) if judged and self._active(s)]
        named = [s for s in dict.fromkeys(skills or []) if s not in bound and s not in read]
        receipt = self._append(current.run, "loop.end", f"Run {current.run} of loop {current.loop} ended {state} after "
                               f"{current.iterations} iteration(s): {why}", actor, "loop", {
                                   "loop": current.loop, "run": current.run, "state": state, "iterations": current.iterations,
                                   "minutes": minutes, "evidence": list(current.ids), "spec_sha256": spec.sha256 if spec else current.spec_sha,
                                   "credited": credited, "not_credited": named})
        entries = []
        for skill in credited:
            entries.append(experience.Entry("skill.used", text=f"skill:{skill} used in run {current.run}", refs=[f"skill:{skill}", receipt["id"]],
                                            source=self.store.source(actor, "loop")))
            entries.append(experience.Entry("outcome", text=f"skill:{skill}: run {current.run} ended {state}",
                                            data={"skill": skill, "outcome": state, "verified": state == "succeeded", "run": current.run},
                                            refs=[f"skill:{skill}", receipt["id"]], source=self.store.source(actor, "loop")))
        if entries:
            self.store.log(current.run, entries, captured=True)
        self.store.flush(session=receipt["session"])  # a run's end is its log's commit point (RUN.<clone>, ended elsewhere)
        return receipt

    def _active(self, skill: str) -> bool:
        """Whether `skill` is one a run may credit: it exists and is active (a draft no person has reviewed is neither
        served to the run nor credited by it)."""
        try:
            return self.store.skill_exists(skill) and self.store.read(f"skill:{skill}").status == "active"
        except RepoMemoryError:
            return False

    def abort(self, run: str, reason: str = "stopped by a person") -> dict[str, Any]:
        """End a live run as aborted (a person's decision)."""
        with runstate.turn(self.store, run):
            current = self.state(run)
            if current.state in TERMINAL:
                raise ConflictError(f"Run {run} already ended: {current.state}.")
            spec = self._spec_if_any(current.loop)  # a run whose spec went away can still be ended
            self._append(run, "loop.decision", f"aborted: {reason}", "human", "loop",
                         {"iteration": current.iterations, "state": "aborted"})
            for token in (verify.agent_token(run), verify.run_token(run)):  # what a killed driver or server left running
                verify.end_leftovers(token)
            return self._end(self.state(run), spec, "aborted", reason, "human")

    def _append(self, run: str, kind: str, text: str, actor: str, tool: str, data: dict[str, Any]) -> dict[str, Any]:
        entry = experience.Entry(kind, text=text, data=data, source=self.store.source(actor, tool))
        return self.store.log(run, [entry], captured=True)[0]  # command output: secrets redacted, not refused

    # --- reading runs --------------------------------------------------------------------------

    def state(self, run: str) -> RunState:
        """The run rebuilt from its log."""
        return runstate.read(self.store, run)

    def runs(self) -> list[str]:
        """Every run id, newest first."""
        return self.store.runs()

    def live(self, name: str) -> list[RunState]:
        """The runs of loop `name` that have not ended, newest first (one look at the files, then each run's log)."""
        self.store.refresh()
        return [s for rid in self.runs() if rid.startswith(f"{name}-") and (s := self.state(rid)).loop == name and s.state == "running"]

    def status(self, run: str | None = None) -> list[dict[str, Any]]:
        """Live and past runs (or one), newest first."""
        self.store.refresh()
        out = []
        for rid in [run] if run else self.runs():
            s = self.state(rid)
            out.append({"run": s.run, "loop": s.loop, "state": s.state, "iterations": s.iterations, "started": when.at(s.started),
                        "harness_session": s.harness_session,  # and, a live run's check cut off, when it began:
                        **({"cut_off": at} if s.state == "running" and (at := runstate.left_off(self.store, rid)) else {})})
        return out

    def receipts(self, name: str, limit: int = 5) -> list[dict[str, Any]]:
        """What earlier runs of loop `name` ended with (their loop.end receipts), newest first."""
        return self.store.receipts(name, limit)

    def live_for(self, harness_session: str, harness_pid: int = 0) -> list[str]:
        """The live runs this harness session started, newest first (see runstate.live_for)."""
        return runstate.live_for(self.store, harness_session, harness_pid)
