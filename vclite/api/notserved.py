"""Why vclite does not run a kind that manifests written for Volcano often carry.

Volcano's own examples apply apps/v1 ReplicaSets and Deployments with `schedulerName: volcano`
(Volcano's podgroup controller gangs their pods), RBAC objects for Argo, Argo Workflows, Spark
operator applications and NetworkPolicies (the svc plugin's guide), CSI objects of storage.k8s.io (its
StorageClasses are served); Kubernetes' batch/v1 Jobs and CronJobs
share their kind names with Volcano's but not their spec. vclite serves none of them; `yamlio` refuses
such a document, and this table says why and what to write instead, in place of the bare list of the kinds
served. Pure data.
"""
from __future__ import annotations

WORKLOAD = ("vclite runs no Kubernetes workload controller: write the pods as a Volcano Job "
            "(batch.volcano.sh/v1alpha1, one gang) or as Pods with schedulerName: volcano")
RBAC = ("vclite has one user, who may do everything (no RBAC): leave this document out of a vclite run; "
        "a cluster needs it")
ARGO = ("Argo's controller runs it, not vclite: a JobFlow (flow.volcano.sh/v1alpha1) runs a DAG of Volcano Jobs, "
        "`vcctl jobtemplate from-job` turns a Job into its JobTemplate")
OPERATOR = "its operator runs it, not vclite: write the pods as a Volcano Job (batch.volcano.sh/v1alpha1)"
KUBE_BATCH = ("Kubernetes' job controller runs it, not vclite: write it as Volcano's Job or CronJob "
              "(batch.volcano.sh/v1alpha1), whose spec differs in more than apiVersion: a Job's pod template goes "
              "under spec.tasks[].template, a CronJob's spec.jobTemplate.spec is a Volcano Job's spec")
STORAGE = ("vclite serves PersistentVolumeClaims, PersistentVolumes and StorageClasses (its provisioner makes a "
           "directory per claim), not this kind of storage.k8s.io, which a CSI driver's cluster uses: leave this "
           "document out of a vclite run; a cluster needs it")
NETWORK = ("vclite's pods are processes of one machine, with no network isolation or ingress: leave this document "
           "out of a vclite run; a cluster needs it")

# API group -> why (every kind of the group)
BY_GROUP = {
    "apps": WORKLOAD,
    "rbac.authorization.k8s.io": RBAC,
    "argoproj.io": ARGO,
    "sparkoperator.k8s.io": OPERATOR,
    "kubeflow.org": OPERATOR,
    "ray.io": OPERATOR,
    "batch": KUBE_BATCH,
    "networking.k8s.io": NETWORK,
    "storage.k8s.io": STORAGE,
}

# (apiVersion, kind) -> why, where the group alone does not say
BY_KIND = {
    ("v1", "ReplicationController"): WORKLOAD,
}


def reason(api_version: str, kind: str) -> str:
    """Why vclite does not run `kind` of `api_version` and what to write instead; "" when not known."""
    group = api_version.rpartition("/")[0]
    return BY_KIND.get((api_version, kind)) or BY_GROUP.get(group, "")
