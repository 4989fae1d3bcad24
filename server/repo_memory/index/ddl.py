"""The index schema's SQL as sqlite-utils makes it (index/db.py `build_schema`), recorded so that making an index
imports no sqlite-utils (0.1 s, 0.25 s with the numpy it imports). Generated: python -m repo_memory.index.db"""

VERSION = 30
STATEMENTS = (
    'CREATE TABLE "docs" (\n   "rowid" INTEGER PRIMARY KEY,\n   "path" TEXT NOT NULL,\n   "kind" TEXT NOT NULL,\n   "rank" INTEGER,\n   "name" TEXT NOT NULL,\n   "source" TEXT,\n   "sha256" TEXT,\n   "mtime_ns" INTEGER,\n   "size" INTEGER,\n   "checked_ns" INTEGER,\n   "valid" INTEGER,\n   "status" TEXT,\n   "origin" TEXT,\n   "winner" INTEGER,\n   "flags" TEXT,\n   "anchors" TEXT,\n   "problems" TEXT,\n   "vkey" INTEGER,\n   "notes" TEXT,\n   "tags" TEXT,\n   "words" TEXT,\n   "description" TEXT,\n   "body" TEXT\n)',
    'CREATE UNIQUE INDEX "idx_docs_path"\n    ON "docs" ("path")',
    'CREATE INDEX "idx_docs_kind_name"\n    ON "docs" ("kind", "name")',
    'CREATE VIRTUAL TABLE "docs_fts" USING FTS5 (\n    "name", "description", "tags", "body", "words",\n    tokenize=\'porter unicode61 remove_diacritics 2\',\n    content="docs"\n)',
    'CREATE TABLE "records" (\n   "rowid" INTEGER PRIMARY KEY,\n   "id" TEXT NOT NULL,\n   "session" TEXT NOT NULL,\n   "seq" INTEGER NOT NULL,\n   "ts" TEXT NOT NULL,\n   "kind" TEXT NOT NULL,\n   "actor" TEXT,\n   "harness" TEXT,\n   "tool" TEXT,\n   "flags" TEXT DEFAULT \'\',\n   "outcome" TEXT DEFAULT \'\',\n   "file" TEXT NOT NULL,\n   "offset" INTEGER,\n   "length" INTEGER,\n   "sha256" TEXT,\n   "origin" TEXT DEFAULT \'\',\n   "speaker" TEXT,\n   "covers" TEXT,\n   "refs" TEXT,\n   "anchors" TEXT DEFAULT \'\',\n   "vkey" INTEGER,\n   "vlen" INTEGER,\n   "text" TEXT\n)',
    'CREATE UNIQUE INDEX "idx_records_id"\n    ON "records" ("id")',
    'CREATE INDEX "idx_records_kind"\n    ON "records" ("kind")',
    'CREATE INDEX "idx_records_session_seq"\n    ON "records" ("session", "seq")',
    'CREATE INDEX "idx_records_ts"\n    ON "records" ("ts")',
    'CREATE INDEX "idx_records_file"\n    ON "records" ("file")',
    'CREATE INDEX "idx_records_vkey"\n    ON "records" ("vkey")',
    'CREATE INDEX "idx_docs_vkey"\n    ON "docs" ("vkey")',
    "CREATE INDEX records_anchored ON records (id, anchors) WHERE anchors != ''",
    "CREATE INDEX records_origin ON records (origin) WHERE origin != ''",
    "CREATE INDEX docs_anchored ON docs (winner, kind, name, anchors) WHERE anchors != ''",
    "CREATE VIRTUAL TABLE records_fts USING fts5(text, speaker, date, context, tokenize='porter unicode61 remove_diacritics 2')",
    'CREATE TABLE "logs" (\n   "path" TEXT PRIMARY KEY,\n   "size" INTEGER,\n   "mtime_ns" INTEGER,\n   "checked_ns" INTEGER,\n   "indexed_to" INTEGER,\n   "tail_sha" TEXT\n)',
    'CREATE TABLE "anchor_state" (\n   "memory" TEXT,\n   "anchor" TEXT,\n   "baseline" TEXT,\n   "current" TEXT,\n   "problem" TEXT,\n   "stamp" TEXT,\n   PRIMARY KEY ("memory", "anchor")\n)',
    'CREATE INDEX "idx_anchor_state_anchor"\n    ON "anchor_state" ("anchor")',
    'CREATE TABLE "changes" (\n   "name" TEXT PRIMARY KEY,\n   "count" INTEGER\n)',
)
