"""The practice database's schema: its tables (SCHEMA), the version that numbers them
(`PRAGMA user_version`), the mark that makes a file ours (`application_id`), and the steps
from each older version to the next (MIGRATIONS).
"""
from __future__ import annotations

import sqlite3

from practice.store import upgrade

SCHEMA_VERSION = 5
APPLICATION_ID = 0x6B617461  # "kata"

# Times are seconds since the epoch; durations are seconds.
SCHEMA = """
CREATE TABLE mocks (
    id          INTEGER PRIMARY KEY,
    started_at  REAL NOT NULL,
    budget      REAL NOT NULL,               -- seconds for the whole interview
    seed        INTEGER NOT NULL,            -- `kata mock --seed`, or the one drawn
    seeded      INTEGER NOT NULL DEFAULT 1,  -- 1: picked by --seed alone; 0: by need
    clock       TEXT NOT NULL,               -- running | solved | stopped
    run_since   REAL,                        -- when the clock last started (NULL unless running)
    elapsed     REAL NOT NULL DEFAULT 0,     -- clock seconds before run_since
    state       TEXT NOT NULL,               -- running | ended
    ended_at    REAL,
    end_reason  TEXT,                        -- submitted | deadline
    time_used   REAL,
    strict      INTEGER NOT NULL DEFAULT 0   -- 1: `kata mock --strict` (three gradings a question)
);
CREATE TABLE attempts (
    id              INTEGER PRIMARY KEY,
    kata            TEXT NOT NULL,
    mode            TEXT NOT NULL,           -- practice | mock
    mock_id         INTEGER REFERENCES mocks(id),
    position        INTEGER NOT NULL DEFAULT 0,   -- order within a mock
    path            TEXT NOT NULL,           -- the file the user edits, relative to the work folder
    archive         TEXT,                    -- where its code was kept when set aside (relative too)
    restarted_from  INTEGER REFERENCES attempts(id),
    started_at      REAL NOT NULL,
    touched_at      REAL NOT NULL,           -- last start, resume, check or submit
    budget          REAL NOT NULL,           -- seconds: the kata's own budget (in a mock too)
    clock           TEXT NOT NULL,           -- running | paused | solved | stopped
    run_since       REAL,
    elapsed         REAL NOT NULL DEFAULT 0,
    solved_at       REAL,                    -- clock seconds when it last came to pass every check
    state           TEXT NOT NULL,           -- open | submitted | archived
    ended_at        REAL,
    end_reason      TEXT,                    -- submitted | fresh | reset | mock-ended
    passed          INTEGER,                 -- final result, NULL while open
    time_used       REAL,                    -- clock seconds at the end
    overtime        INTEGER,
    hints           INTEGER NOT NULL DEFAULT 0,
    solution_viewed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX attempts_by_kata ON attempts(kata, started_at);
CREATE INDEX attempts_by_state ON attempts(state, touched_at);
CREATE TABLE gradings (                      -- one row per grading of an attempt
    id              INTEGER PRIMARY KEY,
    attempt_id      INTEGER NOT NULL REFERENCES attempts(id),
    at              REAL NOT NULL,
    clock           REAL NOT NULL,           -- the attempt's clock seconds when graded
    command         TEXT NOT NULL,           -- the command that graded: check | watch | submit | mock-end
    passed          INTEGER NOT NULL,
    not_implemented INTEGER NOT NULL,
    n_passed        INTEGER NOT NULL,
    n_total         INTEGER NOT NULL,
    code            BLOB NOT NULL,           -- the bytes graded (text in version 1 rows)
    report          TEXT NOT NULL            -- the grader's report, JSON
);
CREATE INDEX gradings_by_attempt ON gradings(attempt_id, at);
CREATE TABLE events (
    id          INTEGER PRIMARY KEY,
    at          REAL NOT NULL,
    kata        TEXT,
    attempt_id  INTEGER REFERENCES attempts(id),
    mock_id     INTEGER REFERENCES mocks(id),
    kind        TEXT NOT NULL,   -- start resume pause unpause solved unsolved hint solution
                                 -- compare submit archive restart reset mock-start mock-end
    detail      TEXT
);
CREATE INDEX events_by_kata ON events(kata, kind);
""" + """
CREATE TABLE ratings (                       -- how well a follow-up question was answered
    id          INTEGER PRIMARY KEY,
    at          REAL NOT NULL,
    round       REAL NOT NULL,               -- when its round of questions began (one round, one step
                                             -- of the schedule)
    kata        TEXT NOT NULL,
    question    INTEGER NOT NULL,            -- its place among the kata's follow-ups, from 1
    text        TEXT NOT NULL,               -- the question as it was asked
    rating      TEXT NOT NULL,               -- knew | partly | missed
    answer      TEXT,                        -- the number typed at the prompt, as typed
    mock_id     INTEGER REFERENCES mocks(id) -- the mock interview it followed, if any
);
CREATE INDEX ratings_by_kata ON ratings(kata, at);
""" + """
CREATE TABLE set_aside (                     -- records that could not be read, kept
    id      INTEGER PRIMARY KEY,
    at      REAL NOT NULL,
    tbl     TEXT NOT NULL,                   -- the table the record was in
    row_id  INTEGER NOT NULL,                -- its id there
    reason  TEXT NOT NULL,
    data    TEXT NOT NULL                    -- the record as JSON; undecodable text as {"hex": ...}
);
"""
# From each older version to the next, SQL or a function (practice.store.upgrade). Version 1 lacked `seeded`
# and `set_aside` (its `code` column is TEXT and holds both kinds); version 2 called the gradings `checks`
# and their command `source`; version 3 had no strict interviews, no `ratings`; 4 recorded whole paths.
MIGRATIONS = {1: ["ALTER TABLE mocks ADD COLUMN seeded INTEGER NOT NULL DEFAULT 1",
                  SCHEMA[SCHEMA.index("CREATE TABLE set_aside"):].strip()],
              2: ["ALTER TABLE checks RENAME TO gradings",
                  "ALTER TABLE gradings RENAME COLUMN source TO command",
                  "DROP INDEX IF EXISTS checks_by_attempt",
                  "CREATE INDEX gradings_by_attempt ON gradings(attempt_id, at)",
                  "UPDATE set_aside SET tbl = 'gradings' WHERE tbl = 'checks'"],
              3: ["ALTER TABLE mocks ADD COLUMN strict INTEGER NOT NULL DEFAULT 0",
                  SCHEMA[SCHEMA.index("CREATE TABLE ratings"):SCHEMA.index("CREATE INDEX ratings_")].strip(),
                  "CREATE INDEX ratings_by_kata ON ratings(kata, at)"],
              4: [upgrade.anchor_paths, upgrade.kata_budgets]}


def statements_of(script: str) -> list[str]:
    """Split a schema script into statements (run one by one inside our own transaction;
    executescript would commit it early)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return out
