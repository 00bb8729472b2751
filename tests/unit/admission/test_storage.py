"""PersistentVolumeClaim, PersistentVolume and StorageClass admission: kube-apiserver's defaults, its
DefaultStorageClass and StorageObjectInUseProtection plugins, and its validation messages."""
from __future__ import annotations

import copy

import pytest

from vclite.admission import admit
from vclite.admission import persistentvolumeclaim as admit_pvc
from vclite.api import kinds, storage
from vclite.lib import errors

from . import views

Op = admit.Operation


def claim(spec=None, name="data", **md):
    base = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default", **md},
            "spec": base if spec is None else spec}


def volume(spec=None, **extra):
    base = {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/srv/v"}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
            "spec": {**base, **extra} if spec is None else spec}


def sc(name="fast", **fields):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": "example.com/fast", **fields}


def default_sc(name="standard", created="2026-01-01T00:00:00Z"):
    obj = storage.default_class()
    obj["metadata"] = {**obj["metadata"], "name": name, "creationTimestamp": created}
    return obj


def refused(kind, new, old=None, op=Op.CREATE, view=None):
    with pytest.raises(errors.Invalid) as e:
        admit.admit(op, kind, new, old, view or views.default_view())
    return [f"{fe.path}: {fe.message}" for fe in e.value.errors]


# ---- claims ----------------------------------------------------------------------------------------

def test_a_claim_is_defaulted_protected_and_pending():
    got = admit.admit(Op.CREATE, kinds.PERSISTENTVOLUMECLAIM, claim(), None, views.default_view())
    assert got["spec"]["volumeMode"] == "Filesystem"
    assert got["metadata"]["finalizers"] == [storage.PVC_PROTECTION]
    assert got["status"] == {"phase": "Pending"}


@pytest.mark.parametrize("spec_class, annotations, classes, expected", [
    pytest.param(None, {}, [default_sc()], "standard", id="no class: the default's name"),
    pytest.param("", {}, [default_sc()], "", id="empty: no class, stays"),
    pytest.param("gold", {}, [default_sc()], "gold", id="named: kept"),
    pytest.param(None, {}, [sc("fast")], None, id="no default class: none set"),
    pytest.param(None, {"volume.beta.kubernetes.io/storage-class": "slow"}, [default_sc()], None,
                 id="beta annotation names one"),
    pytest.param(None, {}, [default_sc("old", "2026-01-01T00:00:00Z"), default_sc("new", "2026-02-01T00:00:00Z")],
                 "new", id="two defaults: the newest"),
    pytest.param(None, {}, [default_sc("b"), default_sc("a")], "a", id="two defaults as old: by name"),
])
def test_default_storage_class(spec_class, annotations, classes, expected):
    c = claim(annotations=annotations) if annotations else claim()
    if spec_class is not None:
        c["spec"]["storageClassName"] = spec_class
    got = admit.admit(Op.CREATE, kinds.PERSISTENTVOLUMECLAIM, c, None, views.default_view(*classes))
    assert got["spec"].get("storageClassName") == expected


@pytest.mark.parametrize("spec, message", [
    pytest.param({"resources": {"requests": {"storage": "1Gi"}}},
                 "spec.accessModes: Required value: at least 1 access mode is required", id="no access modes"),
    pytest.param({"accessModes": ["ReadWriteSometimes"], "resources": {"requests": {"storage": "1Gi"}}},
                 'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", '
                 '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"', id="unknown access mode"),
    pytest.param({"accessModes": ["ReadWriteOncePod", "ReadOnlyMany"], "resources": {"requests": {"storage": "1"}}},
                 "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes", id="rwop+other"),
    pytest.param({"accessModes": ["ReadWriteOnce"]}, "spec.resources[storage]: Required value", id="no storage"),
    pytest.param({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}},
                 'spec.resources[storage]: Invalid value: "0": must be greater than zero', id="zero storage"),
    pytest.param({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "-1Gi"}}},
                 'spec.resources[storage]: Invalid value: "-1Gi": must be greater than zero', id="negative storage"),
    pytest.param({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "lots"}}},
                 "spec.resources[storage]: ", id="not a quantity"),
    pytest.param({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                  "volumeMode": "Raw"},
                 'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"', id="volumeMode"),
    pytest.param({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                  "storageClassName": "Fast_SSD"}, 'spec.storageClassName: Invalid value: "Fast_SSD": a lowercase '
                 "RFC 1123 subdomain", id="class name"),
    pytest.param({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                  "selector": {"matchExpressions": [{"key": "tier", "operator": "Near"}]}},
                 'spec.selector.matchExpressions[0].operator: Unsupported value: "Near"', id="selector"),
    pytest.param({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                  "dataSource": {"kind": "Snapshot", "name": "s"}},
                 "spec.dataSource: Invalid value: \"Snapshot\": must be 'PersistentVolumeClaim' when referencing "
                 "the default apiGroup", id="data source"),
    pytest.param({"accessModes": "ReadWriteOnce", "resources": {"requests": {"storage": "1Gi"}}},
                 'spec.accessModes: Invalid value: "ReadWriteOnce": must be of type array of strings',
                 id="access modes a string"),
])
def test_claim_refused(spec, message):
    found = refused(kinds.PERSISTENTVOLUMECLAIM, claim(spec))
    assert any(m.startswith(message) for m in found), found


def stored_claim(phase="Bound", capacity="1Gi", **spec):
    c = admit.admit(Op.CREATE, kinds.PERSISTENTVOLUMECLAIM, claim(), None, views.default_view(default_sc()))
    c["spec"].update(spec)
    c["status"] = {"phase": phase, "capacity": {"storage": capacity}} if phase == "Bound" else {"phase": phase}
    return c


def update(old, change):
    new = copy.deepcopy(old)
    change(new)
    return new


@pytest.mark.parametrize("old, change", [
    pytest.param(stored_claim("Pending"), lambda c: c["spec"].update(volumeName="pv1"), id="binder sets volumeName"),
    pytest.param(stored_claim(), lambda c: c["spec"]["resources"]["requests"].update(storage="1073741824"),
                 id="same amount written otherwise"),
    pytest.param(stored_claim("Pending", storageClassName=None),
                 lambda c: c["spec"].update(storageClassName="gold"), id="class set once from none"),
    pytest.param(stored_claim(), lambda c: c["metadata"].update(labels={"a": "b"}), id="metadata"),
    pytest.param(stored_claim(), lambda c: c["spec"].pop("volumeMode"), id="volumeMode left out: defaulted"),
])
def test_claim_update_allowed(old, change):
    admit.admit(Op.UPDATE, kinds.PERSISTENTVOLUMECLAIM, update(old, change), old, views.default_view())


def grown(c):
    c["spec"]["resources"]["requests"]["storage"] = "2Gi"


@pytest.mark.parametrize("classes, old, refusal", [
    pytest.param([default_sc()], stored_claim(), "", id="the default class allows expansion"),
    pytest.param([sc("standard", allowVolumeExpansion=True)], stored_claim(), "", id="a class allowing it"),
    pytest.param([sc("standard")], stored_claim(), admit_pvc.RESIZE_REFUSED, id="a class not saying so"),
    pytest.param([sc("standard", allowVolumeExpansion=False)], stored_claim(), admit_pvc.RESIZE_REFUSED,
                 id="a class refusing it"),
    pytest.param([], stored_claim(), admit_pvc.RESIZE_REFUSED, id="no such class"),
    pytest.param([default_sc()], stored_claim(storageClassName=""), admit_pvc.RESIZE_REFUSED, id="no class"),
])
def test_a_bound_claim_grows_only_where_its_class_allows_expansion(classes, old, refusal):
    """kube's PersistentVolumeClaimResize admission plugin (after validation: a claim not Bound is refused
    there, its spec immutable)."""
    view = views.default_view(*classes)
    if not refusal:
        admit.admit(Op.UPDATE, kinds.PERSISTENTVOLUMECLAIM, update(old, grown), old, view)
        return
    with pytest.raises(errors.Forbidden) as e:
        admit.admit(Op.UPDATE, kinds.PERSISTENTVOLUMECLAIM, update(old, grown), old, view)
    assert str(e.value) == f'persistentvolumeclaims "data" is forbidden: {refusal}'
    shrunk = update(update(old, grown), lambda c: c["spec"]["resources"]["requests"].update(storage="1536Mi"))
    admit.admit(Op.UPDATE, kinds.PERSISTENTVOLUMECLAIM, shrunk, update(old, grown), view)   # (not a growth)


@pytest.mark.parametrize("old, change, message", [
    pytest.param(stored_claim("Pending"), lambda c: c["spec"]["resources"]["requests"].update(storage="2Gi"),
                 "spec: Forbidden: spec is immutable after creation except resources.requests and "
                 "volumeAttributesClassName for bound claims\n", id="pending: no resize"),
    pytest.param(stored_claim(), lambda c: c["spec"].update(accessModes=["ReadWriteMany"]),
                 "spec: Forbidden: spec is immutable after creation", id="access modes"),
    pytest.param(stored_claim(volumeName="pv1"), lambda c: c["spec"].update(volumeName="pv2"),
                 "spec: Forbidden: spec is immutable after creation", id="volumeName once"),
    pytest.param(stored_claim(), lambda c: c["spec"].update(storageClassName="other"),
                 "spec: Forbidden: spec is immutable after creation", id="class changed"),
    pytest.param(stored_claim(capacity="1Gi"), lambda c: c["spec"]["resources"]["requests"].update(storage="512Mi"),
                 "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity",
                 id="shrunk below capacity"),
    pytest.param(stored_claim(), lambda c: c["spec"].update(volumeMode="Block"),
                 'volumeMode: Invalid value: "Block": field is immutable', id="volumeMode"),
])
def test_claim_update_refused(old, change, message):
    found = refused(kinds.PERSISTENTVOLUMECLAIM, update(old, change), old, Op.UPDATE)
    assert any(m.startswith(message) for m in found), found


# ---- volumes ---------------------------------------------------------------------------------------

def test_a_volume_is_defaulted_protected_and_pending():
    got = admit.admit(Op.CREATE, kinds.PERSISTENTVOLUME, volume(), None, views.default_view())
    assert got["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert got["spec"]["volumeMode"] == "Filesystem" and got["spec"]["hostPath"]["type"] == ""
    assert got["metadata"]["finalizers"] == [storage.PV_PROTECTION]
    assert got["status"] == {"phase": "Pending"}


def test_vclites_provisioned_volume_is_admitted():
    c = admit.admit(Op.CREATE, kinds.PERSISTENTVOLUMECLAIM, claim(), None, views.default_view(default_sc()))
    c["metadata"]["uid"] = "1234"
    import pathlib
    pv = storage.provisioned_volume(c, default_sc(), pathlib.Path("/w/default/_pvc/data"))
    got = admit.admit(Op.CREATE, kinds.PERSISTENTVOLUME, pv, None, views.default_view())
    assert got["spec"]["claimRef"]["name"] == "data"


LOCAL_AFFINITY = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}


@pytest.mark.parametrize("spec, message", [
    pytest.param({"accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"}}, "spec.capacity: Required value",
                 id="no capacity"),
    pytest.param({"capacity": {"storage": "1Gi", "cpu": "1"}, "accessModes": ["ReadWriteOnce"],
                  "hostPath": {"path": "/x"}}, "spec.capacity: Unsupported value: ", id="capacity other than storage"),
    pytest.param({"capacity": {"storage": "0"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"}},
                 'spec.capacity[storage]: Invalid value: "0": must be greater than zero', id="zero capacity"),
    pytest.param({"capacity": {"storage": "1Gi"}, "hostPath": {"path": "/x"}}, "spec.accessModes: Required value",
                 id="no access modes"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]},
                 "spec: Required value: must specify a volume type", id="no source"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"},
                  "nfs": {"server": "s", "path": "/e"}},
                 "spec.nfs: Forbidden: may not specify more than 1 volume type", id="two sources"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": ""}},
                 "spec.hostPath.path: Required value", id="hostPath without path"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/a/../b"}},
                 "spec.hostPath.path: Invalid value: \"/a/../b\": must not contain '..'", id="hostPath backsteps"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                  "hostPath": {"path": "/a", "type": "Dir"}},
                 'spec.hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice"',
                 id="hostPath type"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/d"}},
                 "spec.nodeAffinity: Required value: Local volume requires node affinity", id="local without affinity"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "local": {},
                  "nodeAffinity": LOCAL_AFFINITY}, "spec.local.path: Required value", id="local without path"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/d"},
                  "nodeAffinity": {"required": {"nodeSelectorTerms": []}}},
                 "spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node "
                 "selector term", id="affinity without terms"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "nfs": {"server": "s",
                  "path": "export"}}, 'spec.nfs.path: Invalid value: "export": must be an absolute path',
                 id="nfs relative path"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "d"}},
                 "spec.csi.volumeHandle: Required value", id="csi without handle"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"},
                  "persistentVolumeReclaimPolicy": "Keep"},
                 'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", '
                 '"Recycle", "Retain"', id="reclaim policy"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/"},
                  "persistentVolumeReclaimPolicy": "Recycle"},
                 "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
                 id="recycle /"),
    pytest.param({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/x"},
                  "claimRef": "data"}, 'spec.claimRef: Invalid value: "data": must be of type object',
                 id="claimRef a string"),
])
def test_volume_refused(spec, message):
    found = refused(kinds.PERSISTENTVOLUME, volume(spec))
    assert any(m.startswith(message) for m in found), found


def test_a_local_volume_with_node_affinity_is_admitted():
    spec = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/d"},
            "nodeAffinity": LOCAL_AFFINITY}
    admit.admit(Op.CREATE, kinds.PERSISTENTVOLUME, volume(spec), None, views.default_view())


def stored_volume(**extra):
    return admit.admit(Op.CREATE, kinds.PERSISTENTVOLUME, volume(**extra), None, views.default_view())


@pytest.mark.parametrize("change, message", [
    pytest.param(lambda v: v["spec"]["hostPath"].update(path="/elsewhere"),
                 "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation",
                 id="source"),
    pytest.param(lambda v: v["spec"].update(volumeMode="Block"), 'volumeMode: Invalid value: "Block": field is '
                 "immutable", id="volumeMode"),
])
def test_volume_update_refused(change, message):
    old = stored_volume()
    found = refused(kinds.PERSISTENTVOLUME, update(old, change), old, Op.UPDATE)
    assert any(m.startswith(message) for m in found), found


@pytest.mark.parametrize("change", [
    pytest.param(lambda v: v["spec"].update(persistentVolumeReclaimPolicy="Delete"), id="reclaim policy"),
    pytest.param(lambda v: v["spec"].update(claimRef={"namespace": "default", "name": "data"}), id="claimRef"),
    pytest.param(lambda v: v["spec"]["capacity"].update(storage="10Gi"), id="capacity"),
])
def test_volume_update_allowed(change):
    old = stored_volume()
    admit.admit(Op.UPDATE, kinds.PERSISTENTVOLUME, update(old, change), old, views.default_view())


# ---- classes ---------------------------------------------------------------------------------------

def test_a_class_gets_kubes_defaults():
    got = admit.admit(Op.CREATE, kinds.STORAGECLASS, sc(), None, views.default_view())
    assert (got["reclaimPolicy"], got["volumeBindingMode"]) == ("Delete", "Immediate")
    admit.admit(Op.CREATE, kinds.STORAGECLASS, storage.default_class(), None, views.default_view())


@pytest.mark.parametrize("obj, message", [
    pytest.param({**sc(), "provisioner": None}, "provisioner: Required value", id="no provisioner"),
    pytest.param(sc(provisioner="bad provisioner!"), 'provisioner: Invalid value: "bad provisioner!": name part must',
                 id="provisioner not a qualified name"),
    pytest.param(sc(reclaimPolicy="Recycle"), 'reclaimPolicy: Unsupported value: "Recycle": supported values: '
                 '"Delete", "Retain"', id="reclaim policy"),
    pytest.param(sc(volumeBindingMode="Later"), 'volumeBindingMode: Unsupported value: "Later": supported values: '
                 '"Immediate", "WaitForFirstConsumer"', id="binding mode"),
    pytest.param(sc(parameters={"": "x"}), 'parameters: Invalid value: "": field can not be empty.', id="empty key"),
    pytest.param(sc(parameters={"replicas": 3}), "parameters[replicas]: Invalid value: 3: must be of type string",
                 id="parameter a number"),
    pytest.param(sc(allowVolumeExpansion="yes"), 'allowVolumeExpansion: Invalid value: "yes": must be of type boolean',
                 id="expansion flag"),
    pytest.param(sc("Fast"), 'metadata.name: Invalid value: "Fast"', id="name"),
])
def test_class_refused(obj, message):
    found = refused(kinds.STORAGECLASS, obj)
    assert any(m.startswith(message) for m in found), found


@pytest.mark.parametrize("change, message", [
    pytest.param(lambda c: c.update(provisioner="other.io/x"), "provisioner: Forbidden: updates to provisioner are "
                 "forbidden.", id="provisioner"),
    pytest.param(lambda c: c.update(parameters={"a": "b"}), "parameters: Forbidden: updates to parameters are "
                 "forbidden.", id="parameters"),
    pytest.param(lambda c: c.update(reclaimPolicy="Retain"), "reclaimPolicy: Forbidden: updates to reclaimPolicy are "
                 "forbidden.", id="reclaimPolicy"),
    pytest.param(lambda c: c.update(volumeBindingMode="WaitForFirstConsumer"),
                 'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable', id="binding mode"),
])
def test_class_update_refused(change, message):
    old = admit.admit(Op.CREATE, kinds.STORAGECLASS, sc(), None, views.default_view())
    found = refused(kinds.STORAGECLASS, update(old, change), old, Op.UPDATE)
    assert message in found, found


def test_class_update_of_annotations_and_expansion_allowed():
    old = admit.admit(Op.CREATE, kinds.STORAGECLASS, sc(), None, views.default_view())
    new = update(old, lambda c: (c["metadata"].update(annotations={storage.ANN_DEFAULT_CLASS: "true"}),
                                 c.update(allowVolumeExpansion=True)))
    admit.admit(Op.UPDATE, kinds.STORAGECLASS, new, old, views.default_view())
