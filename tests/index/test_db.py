"""The index file as several processes meet it: many connections opening one fresh file at once."""

from __future__ import annotations

import threading
from pathlib import Path

from repo_memory.index.db import SCHEMA_VERSION, Database


def test_connections_opening_a_new_index_at_once_all_open_it(tmp_path: Path):
    # A harness starting its server and its first hooks together opens one new index from several processes: switching
    # the file to WAL takes an exclusive lock, and two connections asking for it at once made one fail "database is
    # locked" at once, whatever the busy timeout (seen as a writer exiting 1 in CI).
    failures: list[BaseException] = []
    for round_ in range(40):
        path = tmp_path / f"r{round_}" / "index.db"
        start = threading.Barrier(8)

        def open_it() -> None:
            start.wait()
            try:
                db = Database(path)
                assert db.version() == SCHEMA_VERSION
                db.close()
            except BaseException as exc:  # noqa: BLE001 - collected and reported below
                failures.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []
