"""The index schema is made by sqlite-utils (index/db.py `build_schema`) and replayed from what it made (index/ddl.py),
so that making an index imports no sqlite-utils: the two must make the same database."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from repo_memory.index import db, ddl

REGENERATE = "cd server && python -m repo_memory.index.db"


def test_the_recorded_schema_is_what_sqlite_utils_makes_now():
    conn = sqlite3.connect(":memory:")
    db.build_schema(conn)
    assert ddl.VERSION == db.SCHEMA_VERSION, f"the index schema changed; record it again: {REGENERATE}"
    assert list(ddl.STATEMENTS) == db.schema_statements(conn), f"build_schema makes another schema; record it: {REGENERATE}"


def test_an_index_made_from_the_recorded_schema_equals_one_sqlite_utils_makes_and_imports_no_sqlite_utils(tmp_path: Path):
    made = sqlite3.connect(":memory:")
    db.build_schema(made)
    index = db.Database(tmp_path / "index.db")
    try:
        assert index.version() == db.SCHEMA_VERSION
        replayed = index.conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").fetchall()
    finally:
        index.close()
    assert replayed == made.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").fetchall()
    script = ("import sys; from pathlib import Path; from repo_memory.index.db import Database\n"
              "Database(Path(sys.argv[1])).close(); print('sqlite_utils' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "fresh.db")], capture_output=True, text=True,
                         timeout=60, env={"PYTHONPATH": str(Path(db.__file__).parents[2]), "PATH": "/usr/bin:/bin"})
    assert out.stdout.split() == ["False", "False"], out.stdout + out.stderr
