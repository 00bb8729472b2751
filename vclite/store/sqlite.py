"""The durable object store: MemoryStore semantics, every write committed to SQLite before it counts.

Reads are served from memory (this class is a MemoryStore). A write — create, update, delete,
with every cascade it triggers (finalizer completion, owner garbage collection, orphaning) — is
one SQLite transaction (WAL journal, synchronous=FULL: the commit is on disk when it returns). The
transaction commits before the write returns and before any of its watch events is delivered, so
nothing acknowledged or observed can be lost by a crash. If the commit fails, the in-memory state
is reloaded from the database (the write never happened) and `WriteFailed` is raised.

On open, every object is loaded; resourceVersions continue from the largest stored; the newest
`history` watch events are kept (table `events`, pruned as the in-memory history rolls over), so
a watch resumes across a restart from any version still retained and older ones get Gone, exactly
as in memory. The table also holds at most `event_bytes` of JSON (the oldest events go first, as an
etcd compaction): a big object written often — a 10,000-job JobFlow's status is over a megabyte —
would otherwise fill it with thousands of its versions, gigabytes on disk and many more in memory
when the store is opened again; a watch from before the events kept then gets Gone and lists again. generateName suffixes continue past the stored resourceVersion (never reused).

One process owns a database: `<db>.lock` is held with flock for the store's lifetime (the kernel
releases it when the process dies, even by SIGKILL). A second opener gets `Locked`; a file that is
not a sound vclite store gets `Corrupt`; both name the file. A single object row that does not decode
(not JSON, not an object, no metadata object) is skipped with a warning naming its kind, namespace and
name, and a watch event row that does not decode drops the history before it: the rest is served.
Objects are served as stored: what admission refuses today but an older vclite (or another tool) wrote
is read as it is, as kube-apiserver serves what etcd holds.

Tables: meta(key, value) with `schema` and `rv`; objects(kind, namespace, name, created, data) —
`created` keeps creation order, which lists follow; events(rv, type, kind, object, old).
This module knows nothing of admission or of what a kind means (as memory.py).
"""
from __future__ import annotations

import collections
import contextlib
import fcntl
import itertools
import json
import logging
import os
import pathlib
import sqlite3
import threading
from typing import Any, Callable, Iterator

from vclite.api import kinds
from vclite.lib import clock as clock_mod
from vclite.lib import errors
from vclite.store import memory

Obj = dict[str, Any]
log = logging.getLogger(__name__)
SCHEMA_VERSION = 1
DEFAULT_HISTORY = memory.DEFAULT_HISTORY
PRUNE_EVERY = 64      # commits between prunings of the events table
DEFAULT_EVENT_BYTES = 64 * 2 ** 20   # JSON kept in the events table at most (objects and old objects)
RECENT_JSON = 256     # objects whose last written JSON is kept, to store it again as the next event's old object

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects (
    kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    created INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (kind, namespace, name)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    rv INTEGER PRIMARY KEY, type TEXT NOT NULL, kind TEXT NOT NULL, object TEXT NOT NULL, old TEXT);
"""
_UPSERT = ("INSERT INTO objects (kind, namespace, name, created, data) VALUES (?, ?, ?, ?, ?) "
           "ON CONFLICT (kind, namespace, name) DO UPDATE SET data = excluded.data")
_DELETE = "DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?"
_EVENT = "INSERT INTO events (rv, type, kind, object, old) VALUES (?, ?, ?, ?, ?)"


class StoreError(Exception):
    """The store's file cannot be used; the message names it and says what to do."""


class Locked(StoreError):
    """Another process holds the store."""


class Corrupt(StoreError):
    """The file is torn, corrupt, or not a vclite store."""


class WriteFailed(errors.ApiError):
    """A write could not be committed (disk full, I/O error, store closed); nothing was changed."""


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _bytes_cutoff(sizes: "collections.deque[tuple[int, int]]", excess: int) -> int:
    """The resourceVersion from which the events table keeps its rows, the oldest dropped until at
    least `excess` bytes go (`sizes`: (rv, bytes) per row, oldest first); the newest row always stays."""
    dropped = 0
    for i, (rv, size) in enumerate(sizes):
        if dropped >= excess or i == len(sizes) - 1:
            return rv
        dropped += size
    return 0


def lock_path(db_path: pathlib.Path) -> pathlib.Path:
    return db_path.with_name(db_path.name + ".lock")


def _acquire_lock(db_path: pathlib.Path) -> int:
    """Hold `<db>.lock` exclusively (flock; not inherited by child processes) and write our pid in it."""
    path = lock_path(db_path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise Locked(f"{db_path}: in use by vclite process (pid {holder}); one process owns a data "
                     f"directory at a time: stop that process, or use another data directory") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _connect(path: pathlib.Path) -> sqlite3.Connection:
    db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    try:
        mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"{path}: cannot use the WAL journal (got {mode!r})")
        db.execute("PRAGMA synchronous=FULL")
        check = [row[0] for row in db.execute("PRAGMA quick_check")]
        if check != ["ok"]:
            raise Corrupt(f"{path}: the store database is corrupt ({'; '.join(map(str, check[:3]))}); move it "
                          "aside (or restore a backup) to start again")
        db.executescript(_SCHEMA)
        db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('rv', '0')")
        schema = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0]
        if schema != str(SCHEMA_VERSION):
            raise StoreError(f"{path}: store schema {schema} is not the schema this vclite reads "
                             f"({SCHEMA_VERSION})")
    except BaseException:
        db.close()
        raise
    return db


class SqliteStore(memory.MemoryStore):
    def __init__(self, clock: clock_mod.Clock, path: str | os.PathLike, history: int = DEFAULT_HISTORY,
                 uid_factory: Callable[[], str] | None = None, event_bytes: int = DEFAULT_EVENT_BYTES):
        super().__init__(clock, history=history, uid_factory=uid_factory)
        self.path = pathlib.Path(path)
        self._event_bytes = event_bytes
        self._event_sizes: collections.deque[tuple[int, int]] = collections.deque()   # (rv, bytes) per row
        self._event_total = 0
        # key -> (resourceVersion, JSON) of the objects written last: an update's old object is the version
        # written before, so its JSON need not be made again (a big JobFlow's status: a megabyte each time)
        self._recent_json: collections.OrderedDict[tuple[str, str, str], tuple[int, str]] = collections.OrderedDict()
        self._pending: list[memory.Event] = []
        self._depth = 0
        self._commits = 0
        self._mutex = threading.RLock()
        self._broken: str | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_fd: int | None = _acquire_lock(self.path)
        self._db: sqlite3.Connection | None = None
        try:
            self._db = _connect(self.path)
            self._load()
        except sqlite3.OperationalError as e:
            self.close()
            raise StoreError(f"{self.path}: cannot open the store ({e})") from None
        except sqlite3.DatabaseError as e:
            self.close()
            raise Corrupt(f"{self.path}: not a readable vclite store ({e}); move it aside (or restore a "
                          "backup) to start again") from None
        except BaseException:
            self.close()
            raise

    # ---- opening -----------------------------------------------------------------------------
    def _load(self) -> None:
        assert self._db is not None
        rv = int(self._db.execute("SELECT value FROM meta WHERE key = 'rv'").fetchone()[0])
        rows = self._db.execute("SELECT kind, namespace, name, data FROM objects ORDER BY created")
        for kind_name, ns, name, data in rows:
            obj = self._decode_object(data, kind_name, ns, name)
            if obj is None:
                continue
            md = obj["metadata"]
            self._objects[kind_name][(ns, name)] = obj
            if md.get("uid"):
                self._uids.add(md["uid"])
            for ref in md.get("ownerReferences") or []:
                if ref.get("uid"):
                    self._dependents[ref["uid"]].add((kind_name, ns, name))
            rv = max(rv, int(md.get("resourceVersion") or 0))
        for ev_rv, type_, kind_name, data, old in self._db.execute(
                "SELECT rv, type, kind, object, old FROM events ORDER BY rv"):
            self._count_event(ev_rv, len(data) + len(old or ""))
            rv = max(rv, ev_rv)
            kind = kinds.by_kind(kind_name)
            if kind is None:
                continue
            try:
                event = memory.Event(ev_rv, type_, kind, self._decode(data, f"event {ev_rv}"),
                                     None if old is None else self._decode(old, f"event {ev_rv}"))
            except Corrupt as e:   # (the history starts after it: a watch from before gets Gone, as compacted)
                log.warning("%s; the watch history before it is dropped", e)
                self._history.clear()
                continue
            self._history.append(event)
        self._rv = rv
        self._seq = itertools.count(rv + 1)   # generateName suffixes never repeat across restarts

    def _decode_object(self, data: str, kind_name: str, ns: str, name: str) -> Obj | None:
        """A stored object, or None (with a warning naming it) when its row cannot be decoded: skipped, so one
        damaged row does not stop the store, and left in the database until an object of its name is written."""
        what = f"object {kind_name} {ns + '/' if ns else ''}{name}"
        try:
            obj = self._decode(data, what)
        except Corrupt as e:
            log.warning("%s: skipped", e)
            return None
        if not isinstance(obj.get("metadata"), dict):
            log.warning("%s: %s has no metadata object; skipped", self.path, what)
            return None
        return obj

    def _decode(self, data: str, what: str) -> Obj:
        try:
            obj = json.loads(data)
        except (TypeError, ValueError) as e:
            raise Corrupt(f"{self.path}: {what} is not valid JSON ({e}); the store is corrupt") from None
        if not isinstance(obj, dict):
            raise Corrupt(f"{self.path}: {what} is not an object; the store is corrupt")
        return obj

    def close(self) -> None:
        """Close the database and release the lock (idempotent). Later writes raise WriteFailed."""
        with self._mutex:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None

    def __enter__(self) -> "SqliteStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- writes: buffer events, commit, then publish ---------------------------------------------
    def _emit(self, type_: str, kind: kinds.Kind, obj: Obj, old: Obj | None) -> None:
        self._pending.append(memory.Event(self._rv, type_, kind, obj, old))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._mutex:
            if self._depth == 0 and (self._db is None or self._broken):
                raise WriteFailed(f"{self.path}: the store is {'closed' if self._db is None else 'unusable'}"
                                  f"{': ' + self._broken if self._broken else ''}")
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._pending:
                    events, self._pending = self._pending, []
                    self._commit(events)
                    self._publish(events)

    def _commit(self, events: list[memory.Event]) -> None:
        assert self._db is not None
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            for ev in events:
                md = ev.object["metadata"]
                key = (ev.kind.kind, md.get("namespace", "") if ev.kind.namespaced else "", md["name"])
                data = _dumps(ev.object)
                if ev.type == "DELETED":
                    db.execute(_DELETE, key)
                else:
                    db.execute(_UPSERT, (*key, ev.rv, data))
                old = None if ev.old is None else self._json_of_old(key, ev.old)
                if ev.type == "DELETED":
                    self._recent_json.pop(key, None)
                else:
                    self._recent_json[key] = (ev.rv, data)
                    self._recent_json.move_to_end(key)
                    if len(self._recent_json) > RECENT_JSON:
                        self._recent_json.popitem(last=False)
                db.execute(_EVENT, (ev.rv, ev.type, ev.kind.kind, data, old))
                self._count_event(ev.rv, len(data) + len(old or ""))
            db.execute("UPDATE meta SET value = ? WHERE key = 'rv'", (str(self._rv),))
            self._commits += 1
            if self._commits % PRUNE_EVERY == 0 and len(self._history) == self._history.maxlen:
                self._prune_events(self._history[0].rv)
            if self._event_total > self._event_bytes:
                self._prune_events(_bytes_cutoff(self._event_sizes, self._event_total - self._event_bytes))
            db.execute("COMMIT")
        except (sqlite3.Error, TypeError, ValueError) as e:
            self._abandon(e)

    def _json_of_old(self, key: tuple[str, str, str], old: Obj) -> str:
        """The JSON of `old`, the stored version an event replaces: as written then, if still at hand."""
        recent = self._recent_json.get(key)
        if recent is not None and str(recent[0]) == (old.get("metadata") or {}).get("resourceVersion"):
            return recent[1]
        return _dumps(old)

    def _count_event(self, rv: int, size: int) -> None:
        self._event_sizes.append((rv, size))
        self._event_total += size

    def _prune_events(self, before: int) -> None:
        """Delete the events older than resourceVersion `before` (in the transaction under way)."""
        assert self._db is not None
        self._db.execute("DELETE FROM events WHERE rv < ?", (before,))
        while self._event_sizes and self._event_sizes[0][0] < before:
            self._event_total -= self._event_sizes.popleft()[1]

    def _abandon(self, cause: Exception) -> None:
        """The commit failed: roll back, make memory match the database again, and raise."""
        assert self._db is not None
        try:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            self._objects.clear()
            self._dependents.clear()
            self._uids.clear()
            self._history.clear()
            self._event_sizes.clear()
            self._event_total = 0
            self._recent_json.clear()
            self._load()
        except Exception as e:  # noqa: BLE001 - memory may now differ from disk: refuse further writes
            self._broken = f"reloading after a failed commit failed: {e}"
        raise WriteFailed(f"{self.path}: write not committed: {cause}") from cause

    def _publish(self, events: list[memory.Event]) -> None:
        self._history.extend(events)
        first: BaseException | None = None
        for ev in events:   # (every event to every subscriber, even after one raised: all of them are stored)
            try:
                memory.deliver(self.subscribers_of(ev.kind.kind), ev)
            except Exception as exc:  # noqa: BLE001 - re-raised below, after the other events
                first = first or exc
        if first is not None:
            raise first

    def create(self, kind: kinds.Kind, obj: Obj, owned: bool = False, copy_result: bool = True,
               dry_run: bool = False) -> Obj:
        with self._transaction():
            return super().create(kind, obj, owned, copy_result, dry_run)

    def update(self, kind: kinds.Kind, obj: Obj, subresource: str | None = None, owned: bool = False,
               copy_result: bool = True, dry_run: bool = False) -> Obj:
        with self._transaction():
            return super().update(kind, obj, subresource, owned, copy_result, dry_run)

    def delete(self, kind: kinds.Kind, namespace: str, name: str, propagation: str = "Background",
               dry_run: bool = False, grace_period: int | None = None, preconditions: Obj | None = None) -> Obj | None:
        with self._transaction():
            return super().delete(kind, namespace, name, propagation, dry_run, grace_period, preconditions)

    def snapshot(self, kind: kinds.Kind, resource_version: int) -> list[memory.Obj]:
        with self._mutex:   # (the objects and the history read at one moment)
            return super().snapshot(kind, resource_version)

    def watch(self, kind: kinds.Kind | None, handler: memory.Handler, resource_version: str | None = None):
        with self._mutex:   # no write can slip between the replay and the subscription
            return super().watch(kind, handler, resource_version)
