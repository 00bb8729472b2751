"""The described schemas of Volcano's kinds (`kubectl explain vcjob.spec.tasks`, served under /openapi/v3):
every field described, structural, Volcano's fields exactly, and the fields admission knows."""
import pytest

from vclite.admission import fields
from vclite.api import kinds, kindschemas, schemabuild
from vclite.httpserver import openapi

DESCRIBED = (kinds.JOB, kinds.CRONJOB, kinds.JOBTEMPLATE, kinds.QUEUE, kinds.PODGROUP, kinds.JOBFLOW)


def top_level(kind):
    description, props = kindschemas.described(kind)
    return {"type": "object", "description": description, "properties": props,
            "x-kubernetes-preserve-unknown-fields": True}


NODES = [(f"{k.kind}{p}", n) for k in DESCRIBED for p, n in schemabuild.walk(top_level(k), "")]
FIELDS = [(p, n) for p, n in NODES if not p.endswith(("[]", "{}"))]


@pytest.mark.parametrize("path, node", FIELDS, ids=[p for p, _ in FIELDS])
def test_every_field_is_described(path, node):
    assert len(node.get("description", "")) > 10, path


@pytest.mark.parametrize("path, node", NODES, ids=[p for p, _ in NODES])
def test_every_node_is_structural(path, node):
    assert schemabuild.structural_problems(node) == [], path


def paths(schema, path):
    """Field paths under `schema`, items and map values transparent (`spec.tasks.name`)."""
    out = set()
    for name, sub in (schema.get("properties") or {}).items():
        out.add(f"{path}.{name}")
        inner = sub.get("items") or (sub["additionalProperties"] if isinstance(sub.get("additionalProperties"), dict)
                                     else sub)
        out |= paths(inner, f"{path}.{name}")
    return out


def under(prefix, names):
    return " ".join(f"{prefix}.{n}" for n in names.split())


# Volcano's CRDs (volcano-sh/volcano config/crd/{volcano,jobflow}/bases, 2026-08), below spec and status,
# not into the PodTemplateSpec, the PersistentVolumeClaimSpec and the LabelSelector.
_NT = "networkTopology networkTopology.highestTierAllowed networkTopology.highestTierName networkTopology.mode"
_POLICY = "policies policies.action policies.event policies.events policies.exitCode policies.timeout"
_NODE_GROUPS = "preferredDuringSchedulingIgnoredDuringExecution requiredDuringSchedulingIgnoredDuringExecution"
_JOB_SPEC = under("spec", f"""
    maxRetry minAvailable minSuccess {_NT} plugins {_POLICY} priorityClassName queue runningEstimate schedulerName
    tasks tasks.dependsOn tasks.dependsOn.iteration tasks.dependsOn.name tasks.maxRetry tasks.minAvailable tasks.name
    tasks.partitionPolicy tasks.partitionPolicy.minPartitions {under("tasks.partitionPolicy", _NT)}
    tasks.partitionPolicy.partitionSize tasks.partitionPolicy.totalPartitions {under("tasks", _POLICY)}
    tasks.replicas tasks.template tasks.topologyPolicy ttlSecondsAfterFinished volumes volumes.mountPath
    volumes.volumeClaim volumes.volumeClaimName""")
UPSTREAM = {
    "Job": _JOB_SPEC + " " + under("status", """
        conditions conditions.lastTransitionTime conditions.status controlledResources failed minAvailable pending
        retryCount running runningDuration state state.lastTransitionTime state.message state.phase state.reason
        succeeded taskStatusCount taskStatusCount.phase terminating unknown version"""),
    "JobTemplate": _JOB_SPEC + " status.jobDependsOnList",
    "CronJob": " ".join(p.replace("spec.", "spec.jobTemplate.spec.", 1) for p in _JOB_SPEC.split()) + " " + under(
        "spec", """concurrencyPolicy failedJobsHistoryLimit jobTemplate jobTemplate.metadata jobTemplate.metadata.annotations
        jobTemplate.metadata.finalizers jobTemplate.metadata.labels jobTemplate.metadata.name
        jobTemplate.metadata.namespace jobTemplate.spec schedule startingDeadlineSeconds successfulJobsHistoryLimit
        suspend timeZone""") + " " + under("status", """active active.apiVersion active.fieldPath active.kind
        active.name active.namespace active.resourceVersion active.uid lastScheduleTime lastSuccessfulTime"""),
    "Queue": under("spec", f"""
        affinity affinity.nodeGroupAffinity {under("affinity.nodeGroupAffinity", _NODE_GROUPS)}
        affinity.nodeGroupAntiAffinity {under("affinity.nodeGroupAntiAffinity", _NODE_GROUPS)} capability
        dequeueStrategy deserved extendClusters extendClusters.capacity extendClusters.name extendClusters.weight
        guarantee guarantee.resource parent priority reclaimable type weight""") + " " + under("status", """
        allocated completed inqueue pending reservation reservation.nodes reservation.resource running state
        unknown"""),
    "PodGroup": under("spec", f"""
        minMember minResources minTaskMember {_NT} priorityClassName queue subGroupPolicy
        subGroupPolicy.labelSelector subGroupPolicy.matchLabelKeys subGroupPolicy.minSubGroups subGroupPolicy.name
        {under("subGroupPolicy", _NT)} subGroupPolicy.subGroupSize""") + " " + under("status", """
        conditions conditions.lastTransitionTime conditions.message conditions.reason conditions.status
        conditions.transitionID conditions.type failed phase running succeeded"""),
}
VOLCANO_KINDS = [pytest.param(k, id=k.kind) for k in (kinds.JOB, kinds.CRONJOB, kinds.JOBTEMPLATE, kinds.QUEUE,
                                                      kinds.PODGROUP)]


@pytest.mark.parametrize("kind", VOLCANO_KINDS)
def test_the_fields_are_volcanos(kind):
    _, props = kindschemas.described(kind)
    got = paths(props["spec"], "spec") | paths(props["status"], "status")
    assert got == set(UPSTREAM[kind.kind].split())


def admission_paths(table, path):
    """Field paths admission's unknown-field table looks into; a task's pod template is not described."""
    out = set()
    for name, sub in table.items():
        out.add(f"{path}.{name}")
        sub = sub[0] if isinstance(sub, list) else sub
        if isinstance(sub, dict) and name != "template":
            out |= admission_paths(sub, f"{path}.{name}")
    return out


@pytest.mark.parametrize("kind", VOLCANO_KINDS)
def test_admission_knows_every_field_the_schema_names_where_it_looks(kind):
    known = admission_paths(fields.BY_KIND[kind.kind]["spec"], "spec")
    _, props = kindschemas.described(kind)
    described = paths(props["spec"], "spec")
    looked_into = {p.rsplit(".", 1)[0] for p in known}   # the objects whose fields admission lists
    assert known <= described
    assert {p for p in described if p.rsplit(".", 1)[0] in looked_into} == known


@pytest.mark.parametrize("kind", DESCRIBED, ids=lambda k: k.kind)
def test_served_described(kind):
    schema = openapi.group_version_document(kind.group, kind.version)["components"]["schemas"][
        openapi.schema_name(kind)]
    assert schema["description"] == kindschemas.described(kind)[0]
    assert schema["properties"]["spec"]["properties"] and schema["properties"]["status"]["properties"]
    assert schema["x-kubernetes-preserve-unknown-fields"] is True


@pytest.mark.parametrize("kind", [kinds.POD, kinds.COMMAND, kinds.NODE], ids=lambda k: k.kind)
def test_other_kinds_stay_open(kind):
    assert kindschemas.described(kind) is None
    schema = openapi.group_version_document(kind.group, kind.version)["components"]["schemas"][
        openapi.schema_name(kind)]
    assert "properties" not in schema["properties"]["spec"]


def test_a_copy_each_time():
    _, first = kindschemas.described(kinds.JOB)
    first["spec"]["properties"]["tasks"]["description"] = "changed"
    assert kindschemas.described(kinds.JOB)[1]["spec"]["properties"]["tasks"]["description"] != "changed"


def test_policy_lists_come_from_the_api_tables():
    _, props = kindschemas.described(kinds.JOB)
    policy = props["spec"]["properties"]["policies"]["items"]["properties"]
    assert "RestartPartition" in policy["action"]["description"] and "TaskFailed" in policy["event"]["description"]
    assert "OutOfSync" not in policy["event"]["description"]   # an internal event: no policy may name it
