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
