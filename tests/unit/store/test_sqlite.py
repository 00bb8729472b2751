"""The durable store: the memory store's semantic table run against both stores, then what only a
durable store promises (reopen, resume, crash, lock, corruption, failed commits)."""
import importlib.util
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import types

import pytest

from vclite.api import kinds
from vclite.lib import clock, errors
from vclite.store import sqlite

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def _load_semantics():
    spec = importlib.util.spec_from_file_location("vclite_store_semantics", HERE / "test_memory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SEMANTICS = _load_semantics()
pod, job = SEMANTICS.pod, SEMANTICS.job


@pytest.fixture
def stores(tmp_path):
    """Opens stores in tmp_path (each its own file unless `name` is given); closes them at the end."""
    opened = []

    def open_store(name=None, history=sqlite.DEFAULT_HISTORY, clk=None, event_bytes=sqlite.DEFAULT_EVENT_BYTES):
        s = sqlite.SqliteStore(clk or clock.VirtualClock(), tmp_path / (name or f"s{len(opened)}.db"),
                               history=history, event_bytes=event_bytes)
        opened.append(s)
        return s
    yield open_store
    for s in opened:
        s.close()


FACTORIES = [pytest.param("memory", id="memory"), pytest.param("sqlite", id="sqlite")]
CASES = [pytest.param(getattr(SEMANTICS, n), id=n) for n in sorted(dir(SEMANTICS)) if n.startswith("test_")]


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize("case", CASES)
def test_memory_semantics_hold_for_both_stores(case, factory, stores, monkeypatch):
    if factory == "sqlite":
        def make(clk, history=sqlite.DEFAULT_HISTORY, **kw):
            return stores(history=history, clk=clk)
        monkeypatch.setattr(SEMANTICS, "new_store", lambda: make(clock.VirtualClock()))
        monkeypatch.setattr(SEMANTICS, "memory", types.SimpleNamespace(MemoryStore=make))
    case()


def names(store, kind=kinds.POD):
    return [o["metadata"]["name"] for o in store.list(kind)]


# ---- persistence ------------------------------------------------------------------------------------
def test_reopen_restores_objects_versions_uids_and_order(stores):
    s = stores("a.db")
    j = s.create(kinds.JOB, job("j"))
    for n in ("c", "a", "b"):
        s.create(kinds.POD, pod(n, owners=[j], labels={"n": n}))
    a = s.get(kinds.POD, "default", "a")
    s.update(kinds.POD, dict(a, status={"phase": "Running"}), subresource="status")
    s.update(kinds.POD, dict(s.get(kinds.POD, "default", "b"), spec={"containers": [{"name": "z"}]}))
    s.create(kinds.QUEUE, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                           "metadata": {"name": "q"}, "spec": {"weight": 2}})
    before = {k.kind: s.list(k) for k in (kinds.POD, kinds.JOB, kinds.QUEUE)}
    rv = s.resource_version
    s.close()
    r = stores("a.db")
    assert {k.kind: r.list(k) for k in (kinds.POD, kinds.JOB, kinds.QUEUE)} == before
    assert names(r) == ["c", "a", "b"], "lists keep creation order across a reopen"
    assert r.resource_version == rv
    new = r.create(kinds.POD, pod("d"))
    assert int(new["metadata"]["resourceVersion"]) == int(rv) + 1
    assert new["metadata"]["uid"] not in {o["metadata"]["uid"] for o in before["Pod"]}


def test_owner_index_survives_reopen_so_deletion_cascades(stores):
    s = stores("a.db")
    j = s.create(kinds.JOB, job("j"))
    p = s.create(kinds.POD, pod("child", owners=[j]))
    s.create(kinds.POD, pod("grandchild", owners=[p]))
    s.create(kinds.POD, pod("other"))
    s.close()
    r = stores("a.db")
    r.delete(kinds.JOB, "default", "j")
    assert names(r) == ["other"]
    r.close()
    assert names(stores("a.db")) == ["other"], "the whole cascade was committed"


def test_finalizer_marks_survive_reopen(stores):
    s = stores("a.db")
    s.create(kinds.POD, pod("a", finalizers=["example.com/f"]))
    s.delete(kinds.POD, "default", "a")
    s.close()
    r = stores("a.db")
    marked = r.get(kinds.POD, "default", "a")
    assert marked["metadata"]["deletionTimestamp"]
    marked["metadata"]["finalizers"] = []
    r.update(kinds.POD, marked)
    with pytest.raises(errors.NotFound):
        r.get(kinds.POD, "default", "a")


def test_watch_resumes_across_reopen_from_a_retained_version(stores):
    s = stores("a.db")
    a = s.create(kinds.POD, pod("a"))
    s.update(kinds.POD, dict(a, spec={"containers": [{"name": "z"}]}))
    s.create(kinds.JOB, job("j"))
    s.delete(kinds.POD, "default", "a")
    s.close()
    r = stores("a.db")
    seen = []
    r.watch(kinds.POD, lambda ev: seen.append((ev.type, ev.object["metadata"]["resourceVersion"],
                                               ev.old and ev.old["spec"]["containers"][0]["name"])),
            resource_version=a["metadata"]["resourceVersion"])
    assert seen == [("MODIFIED", "2", "c"), ("DELETED", "4", "z")]
    r.create(kinds.POD, pod("b"))
    assert seen[-1] == ("ADDED", "5", None), "live events follow the replay"


def test_watch_from_a_version_older_than_the_retained_history_is_gone_after_reopen(stores, monkeypatch):
    monkeypatch.setattr(sqlite, "PRUNE_EVERY", 4)
    s = stores("a.db", history=3)
    for i in range(3 * sqlite.PRUNE_EVERY):
        s.create(kinds.POD, pod(f"p{i}"))
    s.close()
    db = sqlite3.connect(str(s.path))
    (count,) = db.execute("SELECT count(*) FROM events").fetchone()
    db.close()
    assert count <= 3 + sqlite.PRUNE_EVERY, "the events table is bounded"
    r = stores("a.db", history=3)
    with pytest.raises(errors.Gone):
        r.watch(kinds.POD, lambda ev: None, resource_version="1")
    replay = []
    r.watch(kinds.POD, lambda ev: replay.append(ev.object["metadata"]["name"]),
            resource_version=str(int(r.resource_version) - 2))
    assert replay == [f"p{3 * sqlite.PRUNE_EVERY - 2}", f"p{3 * sqlite.PRUNE_EVERY - 1}"]


def test_the_events_table_holds_a_bounded_amount_of_json_however_big_the_objects(stores):
    """A big object written often (a 10,000-job JobFlow's status) does not fill the events table with
    its versions: at most event_bytes of JSON stay (oldest first out, the newest always), so reopening
    loads a bounded history; a watch from before it is Gone, one from within it replays as before."""
    cap = 200_000
    s = stores("big.db", event_bytes=cap)
    p = s.create(kinds.POD, pod("big"))
    for i in range(40):   # each version ~20 kB: event rows of ~40 kB (object and old object)
        p = s.update(kinds.POD, dict(p, metadata={**p["metadata"], "annotations": {"blob": str(i) * 20_000}}))
    s.close()
    db = sqlite3.connect(str(s.path))
    (stored,) = db.execute("SELECT sum(length(object) + coalesce(length(old), 0)) FROM events").fetchone()
    (oldest,) = db.execute("SELECT min(rv) FROM events").fetchone()
    db.close()
    assert stored <= cap, stored
    r = stores("big.db", event_bytes=cap)
    with pytest.raises(errors.Gone):
        r.watch(kinds.POD, lambda ev: None, resource_version="1")
    replay = []
    r.watch(kinds.POD, lambda ev: replay.append((ev.type, ev.old["metadata"]["annotations"]["blob"][:2])),
            resource_version=str(oldest))
    assert replay and all(t == "MODIFIED" for t, _ in replay) and replay[-1][1] == "38", replay


def test_an_update_stores_its_old_object_without_encoding_it_again(stores, monkeypatch):
    """The old object of an update is the version written before: its JSON, kept from then, is stored
    again (a big JobFlow's status is encoded once per write, not twice), and reads back the same."""
    s = stores("enc.db")
    p = s.create(kinds.POD, pod("a"))
    encoded = []
    real = sqlite._dumps
    monkeypatch.setattr(sqlite, "_dumps", lambda obj: encoded.append(obj) or real(obj))
    for i in range(5):
        p = s.update(kinds.POD, dict(p, metadata={**p["metadata"], "annotations": {"n": str(i)}}))
    assert len(encoded) == 5, "one encoding per write"
    s.close()
    seen = []
    stores("enc.db").watch(kinds.POD, lambda ev: seen.append((ev.old["metadata"].get("annotations"),
                                                            ev.object["metadata"]["annotations"])),
                           resource_version="1")
    assert seen == [(None, {"n": "0"})] + [({"n": str(i)}, {"n": str(i + 1)}) for i in range(4)]


@pytest.mark.parametrize("sizes, excess, cutoff", [
    ([(1, 10), (2, 10), (3, 10)], 5, 2),      # dropping the first row is enough
    ([(1, 10), (2, 10), (3, 10)], 10, 2),
    ([(1, 10), (2, 10), (3, 10)], 11, 3),
    ([(1, 10), (2, 10), (3, 10)], 100, 3),    # the newest row always stays
    ([(7, 50)], 1, 7),
])
def test_bytes_cutoff(sizes, excess, cutoff):
    import collections
    assert sqlite._bytes_cutoff(collections.deque(sizes), excess) == cutoff


def test_generated_names_are_not_reused_after_reopen(stores):
    s = stores("a.db")
    first = s.create(kinds.POD, {**pod(""), "metadata": {"generateName": "x-", "namespace": "default"}})
    s.close()
    r = stores("a.db")
    second = r.create(kinds.POD, {**pod(""), "metadata": {"generateName": "x-", "namespace": "default"}})
    assert first["metadata"]["name"] != second["metadata"]["name"]


def test_a_write_is_on_disk_before_its_watch_event_is_delivered(stores):
    s = stores("a.db")
    on_disk = []

    def handler(ev):
        db = sqlite3.connect(f"file:{s.path}?mode=ro", uri=True)
        row = db.execute("SELECT data FROM objects WHERE kind = 'Pod' AND name = ?",
                         (ev.object["metadata"]["name"],)).fetchone()
        db.close()
        on_disk.append(row is not None)
    s.watch(kinds.POD, handler)
    s.create(kinds.POD, pod("a"))
    assert on_disk == [True]


def test_a_failed_commit_changes_nothing_and_delivers_nothing(stores):
    s = stores("a.db")
    j = s.create(kinds.JOB, job("j"))
    s.create(kinds.POD, pod("child", owners=[j]))
    seen = []
    s.watch(None, lambda ev: seen.append(ev.type))
    rv = s.resource_version
    s._db.execute("PRAGMA query_only = ON")  # every write now fails inside the transaction
    with pytest.raises(sqlite.WriteFailed, match="a.db"):
        s.delete(kinds.JOB, "default", "j")
    with pytest.raises(sqlite.WriteFailed):
        s.create(kinds.POD, pod("new"))
    assert seen == [] and s.resource_version == rv
    assert names(s) == ["child"] and s.get(kinds.JOB, "default", "j")
    s._db.execute("PRAGMA query_only = OFF")
    s.delete(kinds.JOB, "default", "j")
    assert seen == ["DELETED", "DELETED"] and names(s) == []


def test_writes_after_close_fail_clearly(stores):
    s = stores("a.db")
    s.close()
    with pytest.raises(sqlite.WriteFailed, match="closed"):
        s.create(kinds.POD, pod("a"))


# ---- ownership and damage ---------------------------------------------------------------------------
def test_one_process_owns_a_store_at_a_time(stores, tmp_path):
    s = stores("a.db")
    with pytest.raises(sqlite.Locked, match=str(tmp_path / "a.db")):
        sqlite.SqliteStore(clock.VirtualClock(), tmp_path / "a.db")
    s.close()
    assert stores("a.db").resource_version == s.resource_version


@pytest.mark.parametrize("damage", [
    pytest.param(lambda p: p.write_bytes(b"this is not a database" * 100), id="garbage"),
    pytest.param(lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), id="torn"),
])
def test_a_damaged_store_is_a_clear_error_naming_the_file(stores, tmp_path, damage):
    s = stores("a.db")
    for i in range(30):
        s.create(kinds.POD, pod(f"p{i}", labels={"pad": "x" * 2000}))   # many pages, so a cut tears some
    s.close()
    db = sqlite3.connect(str(s.path))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    damage(s.path)
    with pytest.raises(sqlite.StoreError, match=str(s.path)) as info:
        stores("a.db")
    assert isinstance(info.value, sqlite.Corrupt)
    assert sqlite.SqliteStore(clock.VirtualClock(), tmp_path / "fresh.db").resource_version == "0", \
        "the lock of the failed open was released"


@pytest.mark.parametrize("data, why", [
    pytest.param("{not json", "is not valid JSON", id="not-json"),
    pytest.param('"text"', "is not an object", id="not-an-object"),
    pytest.param('{"metadata": 5}', "has no metadata object", id="no-metadata"),
])
def test_an_object_row_that_does_not_decode_is_skipped_with_a_warning_naming_it(stores, data, why, caplog):
    s = stores("a.db")
    for i in range(10):
        s.create(kinds.POD, pod(f"p{i}"))
    s.close()
    _poke_row(s.path, data)
    reopened = stores("a.db")
    assert names(reopened) == [f"p{i}" for i in range(10) if i != 7]
    assert f"object Pod default/p7 {why}" in caplog.text and "skipped" in caplog.text
    reopened.create(kinds.POD, pod("p7"))   # (a new object of that name replaces the damaged row)
    reopened.close()
    assert "p7" in names(stores("a.db"))


def test_a_watch_event_row_that_does_not_decode_drops_the_history_before_it(stores, caplog):
    s = stores("a.db")
    for i in range(4):
        s.create(kinds.POD, pod(f"p{i}"))
    first = int(s.get(kinds.POD, "default", "p0")["metadata"]["resourceVersion"])
    s.close()
    db = sqlite3.connect(str(s.path))
    db.execute("UPDATE events SET object = '{torn' WHERE rv = ?", (first + 1,))
    db.commit()
    db.close()
    reopened = stores("a.db")
    assert names(reopened) == ["p0", "p1", "p2", "p3"]
    assert f"event {first + 1} is not valid JSON" in caplog.text
    seen = []
    reopened.watch(kinds.POD, seen.append, str(first + 1))   # (from after the damaged one: still kept)
    assert [e.object["metadata"]["name"] for e in seen] == ["p2", "p3"]
    with pytest.raises(errors.Gone):
        reopened.watch(kinds.POD, seen.append, str(first))


def _poke_row(path, data):
    db = sqlite3.connect(str(path))
    db.execute("UPDATE objects SET data = ? WHERE name = 'p7'", (data,))
    db.commit()
    db.close()


# ---- crash ------------------------------------------------------------------------------------------
CHILD = """
import sys
from vclite.api import kinds
from vclite.lib import clock
from vclite.store import sqlite
s = sqlite.SqliteStore(clock.RealClock(), sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    p = s.create(kinds.POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                             "spec": {"containers": [{"name": "c"}]}})
    print(p["metadata"]["name"], p["metadata"]["resourceVersion"], flush=True)
    if i % 3 == 0:
        s.update(kinds.POD, dict(p, status={"phase": "Running", "n": i}), subresource="status")
    if i % 5 == 4:
        s.delete(kinds.POD, "default", f"p{i - 1}")
    i += 1
"""


def test_every_acknowledged_write_survives_sigkill(tmp_path):
    path = tmp_path / "crash.db"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    acked = []
    try:
        assert proc.stdout.readline().strip() == "ready"
        while len(acked) < 60:
            line = proc.stdout.readline()
            assert line, "the writer died early"
            acked.append(line.split())
    finally:
        proc.send_signal(signal.SIGKILL)
        rest = proc.stdout.read()   # lines already written to the pipe were acknowledged too
        proc.wait()
    acked += [line.split() for line in rest.splitlines() if line.strip()]
    last = len(acked) - 1
    deleted = {f"p{i - 1}" for i in range(last) if i % 5 == 4}     # acknowledged: a later create was
    maybe = {f"p{last - 1}"} if last % 5 == 4 else set()           # perhaps committed, not acknowledged
    with sqlite.SqliteStore(clock.VirtualClock(), path) as s:
        for name, rv in acked:
            if name in deleted:
                assert s.peek(kinds.POD, "default", name) is None, name
            elif name not in maybe:
                got = s.get(kinds.POD, "default", name)
                assert int(got["metadata"]["resourceVersion"]) >= int(rv), name
        assert int(s.resource_version) >= int(acked[-1][1])
