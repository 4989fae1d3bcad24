"""Live re-index: a person's edit is searchable within 300 ms; bursts and editor saves become one sync."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from repo_memory.core.store import Store
from repo_memory.shells.watch import Watcher, ignorable

from tests.conftest import index_snapshot, kept, skill_names, skill_row, sqlite_steps, write_skill_file


def test_a_hand_edit_is_searchable_within_300_ms(store: Store, repo: Path):
    watcher = Watcher(store)
    watcher.start()
    found = threading.Event()
    watcher.listeners.append(lambda: found.set() if store.recall("quokka migration", kinds=["skill"]).hits else None)
    try:
        started = time.monotonic()
        write_skill_file(repo, "quokka", "The quokka migration procedure.", "Steps")
        assert found.wait(5)
        elapsed = time.monotonic() - started
    finally:
        watcher.stop()
    assert elapsed < 0.3, f"searchable after {elapsed * 1000:.0f} ms"


def test_a_record_another_process_appends_is_indexed_without_reading_every_skill_again(store: Store, repo: Path):
    """Hooks append to the logs from their own processes on every tool call; the server's watcher re-reads the logs
    alone for them (looking at every skill file cost 145 ms a time at 10k skills). A burst that also touched a skill
    has that skill and the logs read, and the listeners told."""
    from repo_memory.config import Config

    write_skill_file(repo, "deploy", "How we deploy.", "Steps")
    watcher = Watcher(store)
    told: list[int] = []
    watcher.listeners.append(lambda: told.append(1))  # a server compares every skill with its last look for these
    watcher.start()
    other = Store(Config.load(repo))
    try:
        assert watcher.wait_idle(5)
        full, listened = watcher.full_syncs, len(told)
        other.remember("The canary for the wombat service failed on region b.", session="hook-session", kind="observation")
        time.sleep(0.3)
        assert watcher.wait_idle(5)
        assert [h.id for h in store.recall("wombat canary", kinds=["observation"]).hits] == [f"{kept(other, 'hook-session')}#1"]
        assert watcher.full_syncs == full and len(told) == listened, "the skills were read again for a log append"
        other.remember("Deploys now wait for the wombat canary.", session="hook-session", kind="decision")
        write_skill_file(repo, "deploy", "How we deploy, wombat canary first.", "Steps")
        time.sleep(0.3)
        assert watcher.wait_idle(5)
        assert len(told) > listened, "a skill changed: the server compares skills for its notifications"
        assert store.recall("wombat canary first", kinds=["skill"]).hits[0].id == "skill:deploy"
        assert store.recall("wait for the wombat canary", kinds=["decision"]).hits[0].id == f"{kept(other, 'hook-session')}#2"
    finally:
        other.close()
        watcher.stop()


def test_a_skill_edited_by_hand_is_read_alone_and_the_index_is_what_a_look_at_every_file_gives(store: Store, repo: Path, tmp_path: Path):
    """A person saving a SKILL.md at 10k skills waited 350-450 ms for it to be found: every burst that touched a skill
    had every skill file looked at (145 ms) and the server's listener compare every skill (70 ms). A burst that names
    only skill folders' files has the SKILL.md files read, whatever happened to them — edited, deleted to reveal a
    shadowed copy, written by `sed -i` through a temporary file beside it — and leaves the index as a full look would.
    A folder made or removed, or a skill shown through a link (its target changes under another path), still has
    everything looked at."""
    for name in ("deploy", "release", "rollback", "canary"):
        write_skill_file(repo, name, f"How we {name}.", "Steps")
    write_skill_file(repo, "release", "The release steps of the Claude copy.", "Steps", folder=".claude/skills")
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: rollback\ndescription: 'Not in the repository: the numbat rollback.'\n---\n\nSteps\n", encoding="utf-8")
    watcher = Watcher(store)
    told: list[int] = []
    watcher.listeners.append(lambda: told.append(1))
    watcher.start()
    try:
        assert watcher.wait_idle(5)
        full = watcher.full_syncs

        def burst(*changes, alone: bool = True) -> None:
            nonlocal full
            listened = len(told)
            for change in changes:
                change()
            time.sleep(0.3)
            assert watcher.wait_idle(5)
            assert (watcher.full_syncs == full) is alone, f"full syncs {full} -> {watcher.full_syncs}"
            assert len(told) > listened
            full = watcher.full_syncs
            ours = index_snapshot(store)
            store.refresh()  # a look at every file
            assert index_snapshot(store) == ours

        burst(lambda: write_skill_file(repo, "deploy", "How we deploy the quokka service.", "Steps"))
        assert [h.id for h in store.recall("quokka service", kinds=["skill"]).hits] == ["skill:deploy"]
        burst(lambda: (repo / ".agents/skills/release/SKILL.md").unlink())  # the Claude copy is the one found now
        assert skill_row(store, "release")["description"] == "The release steps of the Claude copy."
        burst(lambda: write_skill_file(repo, "release", "How we release, the wallaby way.", "Steps"))
        assert skill_row(store, "release")["description"] == "How we release, the wallaby way."
        burst(lambda: subprocess.run(["sed", "-i", "s/How we canary./How we canary the platypus./", str(repo / ".agents/skills/canary/SKILL.md")], check=True),
              lambda: (repo / ".agents/skills/canary/notes.md").write_text("Notes beside the skill.", encoding="utf-8"))
        assert skill_row(store, "canary")["description"] == "How we canary the platypus."

        burst(lambda: (repo / ".agents/skills/rollback/SKILL.md").unlink(), lambda: (repo / ".agents/skills/rollback/SKILL.md").symlink_to(outside),
              alone=False)
        assert "rollback" not in skill_names(store) and not store.recall("numbat rollback", kinds=["skill"]).hits
        burst(lambda: (repo / ".agents/skills/rollback/SKILL.md").unlink(), alone=False)  # a link seen: read all until none is
        burst(lambda: (repo / ".claude/skills/alias").symlink_to(repo / ".agents/skills/deploy"), alone=False)  # shown twice
        burst(lambda: write_skill_file(repo, "deploy", "How we deploy the echidna service.", "Steps"), alone=False)  # edits come under one path
        burst(lambda: (repo / ".claude/skills/alias").unlink(), alone=False)  # no link left: files are read alone again
        burst(lambda: write_skill_file(repo, "deploy", "How we deploy the bilby service.", "Steps"))
        burst(lambda: write_skill_file(repo, "new-one", "How we do the new one.", "Steps"), alone=False)  # a new folder
        assert "new-one" in skill_names(store)
    finally:
        watcher.stop()


def test_an_editor_save_by_rename_is_one_sync_and_temp_files_are_ignored(store: Store, repo: Path):
    path = write_skill_file(repo, "edited", "Before the edit.", "Old")
    watcher = Watcher(store, debounce=0.2)
    watcher.start()
    edited = threading.Event()
    watcher.listeners.append(lambda: edited.set() if skill_row(store, "edited")["description"] == "After the edit." else None)
    try:
        assert watcher.wait_idle(5)
        before = watcher.syncs
        folder = path.parent
        (folder / ".SKILL.md.swp").write_text("swap", encoding="utf-8")
        (folder / "4913").write_text("", encoding="utf-8")
        (folder / "4913").unlink()
        tmp = folder / "SKILL.md.tmp"
        tmp.write_text(path.read_text(encoding="utf-8").replace("Before the edit.", "After the edit."), encoding="utf-8")
        os.replace(tmp, path)
        assert edited.wait(5) and watcher.wait_idle(5)
    finally:
        watcher.stop()
    assert watcher.syncs - before == 1
    assert store.read("edited").description == "After the edit."
    assert ignorable("/r/.agents/skills/x/.SKILL.md.swp") and ignorable("/r/x/SKILL.md~") and not ignorable("/r/x/SKILL.md")


@pytest.mark.slow
def test_a_thousand_files_changed_at_once_end_equal_to_a_full_rescan(store: Store, repo: Path):
    watcher = Watcher(store)
    watcher.start()
    try:
        for i in range(1000):
            write_skill_file(repo, f"bulk-{i}", f"Bulk skill {i}.", f"Step {i}")
        assert watcher.wait_idle(60)
    finally:
        watcher.stop()
    live = index_snapshot(store)[0]
    store.reindex()
    assert index_snapshot(store)[0] == live and len(skill_names(store)) == 1000


def test_two_indexers_syncing_the_same_new_files_at_once_both_succeed(store: Store, repo: Path):
    """A hook process and the server (two connections to one index) can both find the same new files;
    the second to commit must not fail on rows the first just wrote."""
    from repo_memory.config import Config

    other = Store(Config.load(repo))
    try:
        for i in range(300):
            write_skill_file(repo, f"race-{i}", f"Race skill {i}.", f"Step {i}")
        errors: list[BaseException] = []

        def run(s: Store) -> None:
            try:
                s.refresh()
            except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(s,)) for s in (store, other)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert errors == []
        live = index_snapshot(store)[0]
        store.reindex()
        assert index_snapshot(store)[0] == live and len(skill_names(store)) == 300
    finally:
        other.close()


def test_clients_listening_hear_when_a_skill_or_loop_changes(store: Store, repo: Path):
    import anyio
    from mcp import Client

    from repo_memory.shells import mcp as server

    write_skill_file(repo, "watched", "Before.", "Old")
    store.refresh()
    watcher = Watcher(store)
    mcp_server = server.build(store, watcher)
    watcher.start()
    heard: list[str] = []

    async def listen() -> None:
        async with Client(mcp_server) as client:
            async with client.listen(resource_subscriptions=["skill://watched", "loop://nightly"], resources_list_changed=True) as sub:
                write_skill_file(repo, "watched", "After.", "New")
                (repo / ".agents/loops/nightly.md").write_text("---\nname: nightly\n---\n", encoding="utf-8")
                with anyio.fail_after(10):
                    async for event in sub:
                        heard.append(getattr(event, "uri", type(event).__name__))
                        if {"skill://watched", "loop://nightly"} <= set(heard):
                            break

    try:
        anyio.run(listen)
    finally:
        watcher.stop()
    assert {"skill://watched", "loop://nightly"} <= set(heard)


def test_reading_memory_files_never_floods_a_running_servers_watcher(repo: Path):
    """Found by bench/scale.py at 10k skills: every open and close of a memory file (the server's own re-index, a
    person's grep, an agent reading skills) was an inotify event the watcher then ignored, so reads alone overflowed
    the kernel's queue and the server logged "Inotify queue overflowed" and re-walked its folders, again and again.
    Reads must not reach the watcher at all; edits still must."""
    from tests.shells.stdio_server import StdioServer

    for i in range(300):
        write_skill_file(repo, f"skill-{i}", f"Skill number {i}.")
    server = StdioServer(repo)
    try:
        server.initialize()
        files = sorted((repo / ".agents" / "skills").glob("*/SKILL.md"))
        for _ in range(120):  # 36,000 opens and closes: twice the kernel's default queue of 16,384 events
            for path in files:
                path.read_bytes()
        write_skill_file(repo, "skill-7", "Skill number 7, edited: rotate the signing keys first.")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            found = server.call("recall", {"query": "rotate signing keys"})
            if "skill-7" in str(found):
                break
            time.sleep(0.2)
        assert "skill-7" in str(found), "the edit after the reads was not indexed"
    finally:
        server.close_input()
        server.wait(10)
    assert b"overflow" not in server.stderr, server.stderr.decode(errors="replace")[-2000:]


def test_a_skill_edited_by_hand_costs_the_index_as_much_at_thousands_of_memories_as_at_a_few(store: Store, repo: Path):
    """What the watcher does for one edited SKILL.md must not grow with the library: it read every document's row to
    find the file's own (15 ms at 10k skills) and every record to find those citing code (19 ms at 100k records).
    Counted in SQLite's virtual-machine steps, which do not depend on how busy the machine is."""
    from repo_memory.formats import experience

    path = write_skill_file(repo, "deploy", "How we deploy.", "Steps")
    store.refresh()

    def steps(edit: int) -> int:
        write_skill_file(repo, "deploy", f"How we deploy, take {edit}.", "Steps")
        reports = []
        counted = sqlite_steps(store, lambda: reports.append(store.refresh(changed=[str(path)])))
        assert reports[0].looked == "files" and reports[0].updated == 1
        return counted

    few = steps(1)
    source = store.source("human", "import")
    for batch in range(10):
        store.log(f"notes-{batch}", [experience.Entry("observation", text=f"Note {batch}-{i} on the build.", source=source) for i in range(300)])
    for n in range(600):
        write_skill_file(repo, f"skill-{n}", f"Skill number {n}.", "Steps")
    store.refresh()
    many = steps(2)
    assert many < 2 * few, f"{few} steps at 1 skill and no records, {many} at 600 skills and 3,000 records"


def test_what_only_a_look_at_every_file_can_tell_is_never_read_alone(store: Store, repo: Path):
    """Found by a review (differential fuzzing against full looks): a link that showed no skill at the last full look
    (its target had no SKILL.md yet) still makes the target's edits a look at every file; the mirror marker appearing
    or going changes whether the SKILL.md beside it is read; and a path that is not absolute and normal is not read
    alone. Each leaves the index as a full look would."""
    import os

    def alone_then_full(*paths: str) -> None:
        store.refresh(changed=list(paths))
        ours = index_snapshot(store)
        store.refresh()
        assert index_snapshot(store) == ours

    (repo / ".agents/skills/linked").mkdir(parents=True)
    (repo / ".claude/skills").mkdir(parents=True, exist_ok=True)
    os.symlink(repo / ".agents/skills/linked", repo / ".claude/skills/linked")  # shows nothing yet
    store.refresh()
    alone_then_full(str(write_skill_file(repo, "linked", "Shown twice now.")))
    assert sorted(r["path"] for r in store.skills() if r["name"] == "linked") == [".agents/skills/linked/SKILL.md", ".claude/skills/linked/SKILL.md"]
    os.unlink(repo / ".claude/skills/linked")
    store.refresh()
    write_skill_file(repo, "mirrored", "A generated copy.", folder=".claude/skills")
    store.refresh()
    marker = repo / ".claude/skills/mirrored/.repo-memory-generated"
    marker.write_text("", encoding="utf-8")
    alone_then_full(str(marker))
    assert "mirrored" not in skill_names(store)
    marker.unlink()
    alone_then_full(str(marker))
    assert "mirrored" in skill_names(store)
    assert not ignorable(str(marker))
    gone = write_skill_file(repo, "gone", "Soon deleted.")
    store.refresh()
    gone.unlink()
    alone_then_full(os.path.relpath(gone, repo))
    alone_then_full(str(repo / ".agents/skills/x/../gone/SKILL.md"))
    assert "gone" not in skill_names(store)


def test_a_server_keeps_seeing_hand_edits_after_a_checkout_took_the_memory_folder_away_and_back(repo: Path):
    """A branch from before repo-memory was set up has no .agents/: checking it out and back removed the watched folder,
    and the server saw no hand edit for the next 30 s (until its periodic full look)."""
    from tests.conftest import git
    from tests.shells.stdio_server import StdioServer

    (repo / "app.py").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "before repo-memory")
    git(repo, "branch", "old")
    write_skill_file(repo, "deploy-steps", "How we deploy.", "Run the deploy job.")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory")
    server = StdioServer(repo)
    try:
        server.initialize()
        git(repo, "checkout", "-q", "old")
        assert not (repo / ".agents").exists()
        time.sleep(0.5)
        git(repo, "checkout", "-q", "main")
        time.sleep(0.5)
        write_skill_file(repo, "deploy-steps", "How we deploy with the zephyrine pipeline.", "Run the deploy job.")
        deadline, hits = time.monotonic() + 5, []
        while time.monotonic() < deadline and not hits:
            hits = server.call("recall", {"query": "zephyrine"})["structuredContent"]["hits"]
            time.sleep(0.2)
        assert [h["id"] for h in hits] == ["skill:deploy-steps"]
        server.close_input()
        assert server.wait(30) == 0
    finally:
        if server.wait(0) is None:
            server.kill()


def test_a_server_answers_from_the_files_within_seconds_after_another_process_put_a_new_index_in_place(repo: Path):
    """The state folder deleted, then any command made a new, empty index: the server moved to it and answered nothing
    until its periodic full look, 30 s later."""
    import shutil
    import sys

    from tests.shells.stdio_server import StdioServer

    write_skill_file(repo, "build-notes", "Team notes about the build.", "Run make all with the zebracorn flag.")
    server = StdioServer(repo)
    try:
        server.initialize()
        assert server.call("recall", {"query": "zebracorn"})["structuredContent"]["hits"]
        shutil.rmtree(repo / ".git/repo-memory")
        subprocess.run([sys.executable, "-m", "repo_memory", "doctor"], cwd=repo, capture_output=True, timeout=60)
        deadline, hits = time.monotonic() + 15, []  # a glance a second; the full look it replaces came after 30 s
        while time.monotonic() < deadline and not hits:
            hits = server.call("recall", {"query": "zebracorn"})["structuredContent"]["hits"]
            time.sleep(0.2)
        assert [h["id"] for h in hits] == ["skill:build-notes"]
        server.close_input()
        assert server.wait(30) == 0
    finally:
        if server.wait(0) is None:
            server.kill()


def test_a_read_sent_right_after_a_change_on_disk_answers_from_the_files_as_they_are_now(repo: Path):
    """A recall sent the moment after a change on disk (a pull, a checkout, a hand edit) was answered from the index as
    it was before: the watcher's sync waits out its debounce first. In a CI run, test_team's stash-and-pull test got 3 of
    its 5 records: the rebase had taken the committed log away and put it back, and the sync that read it back had not
    run yet."""
    from tests.shells.stdio_server import StdioServer

    server = StdioServer(repo)
    try:
        server.initialize()
        assert server.call("recall", {"query": "anything"})["structuredContent"]["hits"] == []  # the store is open and watched
        for n in range(5):
            write_skill_file(repo, f"quokka-{n}", f"The quokka {n} migration procedure.", "Steps")
            hits = server.call("recall", {"query": f"quokka {n} migration", "kinds": ["skill"]})["structuredContent"]["hits"]
            assert [h["id"] for h in hits[:1]] == [f"skill:quokka-{n}"], (n, hits)
            (repo / ".agents/skills" / f"quokka-{n}" / "SKILL.md").unlink()
            hits = server.call("recall", {"query": f"quokka {n} migration", "kinds": ["skill"]})["structuredContent"]["hits"]
            assert f"skill:quokka-{n}" not in [h["id"] for h in hits], (n, hits)
    finally:
        server.close_input()
        assert server.wait(30) == 0


def test_the_cookie_folders_a_killed_server_left_are_swept_and_never_seen_by_git(store: Store, repo: Path):
    from repo_memory.shells.watch import COOKIE

    def status() -> str:
        return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, capture_output=True, text=True,
                              check=True).stdout

    dead = subprocess.Popen(["true"])
    dead.wait()
    before = status()
    left = repo / ".agents" / f"{COOKIE}{dead.pid}-7"
    left.mkdir()
    assert status() == before  # an empty folder: git never lists it
    watcher = Watcher(store)
    watcher.start()
    try:
        assert watcher.settle() and not left.exists()
        assert [p.name for p in (repo / ".agents").iterdir() if p.name.startswith(COOKIE)] == []  # settle's own are gone too
    finally:
        watcher.stop()


def test_reads_stop_waiting_for_a_watch_that_hears_nothing(store: Store, repo: Path):
    """A watch on .agents/ that stopped reporting (an inotify limit, a folder watched no more) cost every read the
    whole settle bound; after one miss, reads go on without waiting for it."""
    watcher = Watcher(store)
    watcher.start()
    try:
        assert watcher._observer is not None
        watcher._observer.unschedule_all()  # what the kernel no longer reports
        started = time.monotonic()
        watcher.settle(timeout=1.0)
        first = time.monotonic() - started
        started = time.monotonic()
        for _ in range(5):
            watcher.settle(timeout=1.0)
        assert first >= 1.0 and time.monotonic() - started < 1.0, first
    finally:
        watcher.stop()
