"""The annotations a task's binding carries, as predicates' TestTaskPodAnnotations checks upstream's
TaskInfo.MergePodAnnotations / DeletePodAnnotations: a later allocation's values replace the earlier ones, an
undone allocation takes back the keys it wrote and leaves any other. vclite keeps them in
`TaskInfo.bind_annotations`, written by deviceshare's allocate and deallocate handlers; this drives them through
a session's statements (allocate on node-a, discard, allocate on node-b)."""
from vclite.scheduler.framework import session
from vclite.scheduler.plugins import vgpu

from .. import objects
from .test_deviceshare import ds_conf, gpod, vg, vgpu_node

OTHER = "example.com/unrelated"


def test_volcano_task_pod_annotations():
    nodes = [vgpu_node("node-a", [("gpu-a", 10, 16000)]), vgpu_node("node-b", [("gpu-b", 10, 16000)])]
    st = objects.state(nodes=nodes, podgroups=[objects.pg("default/pg1")], pods=[gpod("default/p", vg(1, 2000))])
    ssn = session.open_session(st, ds_conf(**{"deviceshare.VGPUEnable": True}), objects.NOW)
    task = next(iter(ssn.jobs["default/pg1"].tasks.values()))
    task.bind_annotations = {OTHER: "kept"}

    stmt = ssn.statement()
    stmt.allocate(task, ssn.nodes.index["node-a"])
    assert (task.bind_annotations[vgpu.ASSIGNED_NODE], task.bind_annotations[OTHER]) == ("node-a", "kept")
    assert task.bind_annotations[vgpu.ASSIGNED_IDS].startswith("gpu-a,")
    stmt.discard()
    assert task.bind_annotations == {OTHER: "kept"}   # the undone allocation's keys only are taken back

    stmt = ssn.statement()
    stmt.allocate(task, ssn.nodes.index["node-b"])
    assert task.bind_annotations[vgpu.ASSIGNED_NODE] == "node-b"
    assert task.bind_annotations[vgpu.ASSIGNED_IDS].startswith("gpu-b,")
    assert task.bind_annotations[OTHER] == "kept"
