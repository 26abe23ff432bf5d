"""The practice database, in one sqlite3 file in the work folder: what the rest of practice/
needs of it. `Store(home)` opens (or makes, upgrades, or sets aside and salvages) the file,
and runs each write as one transaction; its errors say what went wrong in words for the user.

- database: the file and its transactions (Store, and its errors).
- schema: the tables, their version and the migrations from each older version.
- rows: the records it reads (Attempt, Grading, Mock, ...), as frozen dataclasses.
- records: every query, by name.
- upgrade: the migrations that SQL alone cannot make.
- damage: records whose text does not decode, set aside.
- salvage: what can still be read of a damaged file, copied into a new one.
"""
from practice.store.database import ReadOnly, RecordsSetAside, Store, StoreError, WriteFailed
from practice.store.rows import Attempt, Event, Grading, LastResult, Mock, Rating

__all__ = ["Attempt", "Event", "Grading", "LastResult", "Mock", "Rating", "ReadOnly", "RecordsSetAside",
           "Store", "StoreError", "WriteFailed"]
