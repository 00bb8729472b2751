"""meta.status_only_change: how controllers tell their own status writes from real changes."""
import pytest

from vclite.api import meta

BASE = {"apiVersion": "v1", "kind": "X", "metadata": {"name": "a", "resourceVersion": "1", "labels": {"l": "1"}},
        "spec": {"n": 1}, "status": {"phase": "A"}}


def with_(**changes):
    out = {**BASE, "metadata": dict(BASE["metadata"])}
    for k, v in changes.items():
        if k.startswith("md_"):
            out["metadata"][k[3:]] = v
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("new, want", [
    pytest.param(with_(status={"phase": "B"}, md_resourceVersion="2"), True, id="status write"),
    pytest.param(with_(md_resourceVersion="2"), True, id="nothing but the version"),
    pytest.param({k: v for k, v in BASE.items() if k != "status"}, True, id="status removed"),

    pytest.param(with_(spec={"n": 2}, md_resourceVersion="2"), False, id="spec changed"),
    pytest.param(with_(md_labels={"l": "2"}), False, id="labels changed"),
    pytest.param(with_(md_finalizers=["f"]), False, id="finalizer added"),
    pytest.param(with_(extra=1), False, id="a new top-level field"),
])
def test_status_only_change(new, want):
    assert meta.status_only_change(new, BASE) is want


def test_the_first_status_write_is_status_only():
    """An object created without `status` (a JobTemplate): its first status write adds the key."""
    bare = {k: v for k, v in BASE.items() if k != "status"}
    assert meta.status_only_change(with_(md_resourceVersion="2"), bare) is True
    assert meta.status_only_change({**bare, "spec": {"n": 2}}, BASE) is False


@pytest.mark.parametrize("obj, want", [
    pytest.param({"metadata": {"name": "a", "labels": {}, "annotations": {}}}, {"metadata": {"name": "a"}},
                 id="both-empty"),
    pytest.param({"metadata": {"labels": {"l": "1"}, "annotations": {}}}, {"metadata": {"labels": {"l": "1"}}},
                 id="annotations-empty"),
    pytest.param({"metadata": {"finalizers": [], "ownerReferences": []}},
                 {"metadata": {"finalizers": [], "ownerReferences": []}}, id="other-empty-fields-kept"),
    pytest.param({"spec": {"labels": {}}, "metadata": {}}, {"spec": {"labels": {}}, "metadata": {}},
                 id="spec-not-metadata"),
    pytest.param({"metadata": {"labels": []}}, {"metadata": {"labels": []}}, id="not-a-map-left-for-admission"),
    pytest.param({"metadata": {"labels": None}}, {"metadata": {"labels": None}}, id="null-left-for-admission"),
    pytest.param({"metadata": "x"}, {"metadata": "x"}, id="metadata-not-an-object"),
    pytest.param([], [], id="not-an-object"),
])
def test_without_empty_maps(obj, want):
    before = repr(obj)
    assert meta.without_empty_maps(obj) == want
    assert repr(obj) == before   # (the argument is not changed)
