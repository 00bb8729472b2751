"""The table of API kinds vclite serves: group, version, kind, plural, short names, scope.

One row per kind; `crd` marks Volcano's kinds, which a real cluster serves from
CustomResourceDefinitions (they take no strategic merge patch). Lookups accept any accepted
apiVersion (JobFlow and JobTemplate are also accepted under batch.volcano.sh/v1alpha1, as older
Volcano documents write them) and normalise to the canonical one.
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    has_status: bool = True
    also_accepted: tuple[str, ...] = ()  # extra apiVersions accepted on input
    crd: bool = False   # a custom resource on a real cluster (Volcano's CRDs), not a built-in kind
    generation: bool = False   # a built-in kind whose metadata.generation kube-apiserver tracks (see tracks_generation)

    @property
    def tracks_generation(self) -> bool:
        """Whether the store sets metadata.generation (1, bumped by a spec change): custom resources, and the
        built-in kinds whose registry strategy does (PodDisruptionBudget, Pod: their status.observedGeneration)."""
        return self.crd or self.generation

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource(self) -> str:
        """`plural.group` as kubectl names it (`jobflows.flow.volcano.sh`)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def selector_kind(self) -> str:
        """The name field selectors are looked up by (store/selectors.py): the kind's, or for a view
        (VIEWS) `group/kind`, whose field names are its own."""
        return f"{self.group}/{self.kind}" if self in VIEWS else self.kind


JOB = Kind("batch.volcano.sh", "v1alpha1", "Job", "jobs", "job", True, ("vcjob", "vj"), crd=True)
# Volcano's CronJob (pkg/controllers/cronjob): vcjobs made from a template on a cron schedule.
CRONJOB = Kind("batch.volcano.sh", "v1alpha1", "CronJob", "cronjobs", "cronjob", True, ("cronvcjob", "cronvj"),
               crd=True)
JOBFLOW = Kind("flow.volcano.sh", "v1alpha1", "JobFlow", "jobflows", "jobflow", True, ("jf",),
               also_accepted=("batch.volcano.sh/v1alpha1",), crd=True)
JOBTEMPLATE = Kind("flow.volcano.sh", "v1alpha1", "JobTemplate", "jobtemplates", "jobtemplate", True, ("jt",),
                   also_accepted=("batch.volcano.sh/v1alpha1",), crd=True)
QUEUE = Kind("scheduling.volcano.sh", "v1beta1", "Queue", "queues", "queue", False, ("q", "queue-v1beta1"), crd=True)
PODGROUP = Kind("scheduling.volcano.sh", "v1beta1", "PodGroup", "podgroups", "podgroup", True,
                ("pg", "podgroup-v1beta1"), crd=True)
# Volcano's network topology (topology.volcano.sh): a group of nodes or of other HyperNodes, one tier.
HYPERNODE = Kind("topology.volcano.sh", "v1alpha1", "HyperNode", "hypernodes", "hypernode", False, ("hn",), crd=True)
# Volcano's per-node NUMA report (resource-exporter): policies, CPU topology and free CPU sets, for numa-aware.
NUMATOPOLOGY = Kind("nodeinfo.volcano.sh", "v1alpha1", "Numatopology", "numatopologies", "numatopology", False,
                    ("numatopo",), has_status=False, crd=True)
PRIORITYCLASS = Kind("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", "priorityclass", False, ("pc",),
                     has_status=False)
# (generation: since Kubernetes 1.33 the pod strategy sets it and bumps it on spec changes; the kubelet reports
# the generation its status was made from in status.observedGeneration)
POD = Kind("", "v1", "Pod", "pods", "pod", True, ("po",), generation=True)
NODE = Kind("", "v1", "Node", "nodes", "node", False, ("no",))
NAMESPACE = Kind("", "v1", "Namespace", "namespaces", "namespace", False, ("ns",))
EVENT = Kind("", "v1", "Event", "events", "event", True, ("ev",), has_status=False)
CONFIGMAP = Kind("", "v1", "ConfigMap", "configmaps", "configmap", True, ("cm",), has_status=False)
SERVICE = Kind("", "v1", "Service", "services", "service", True, ("svc",))
SECRET = Kind("", "v1", "Secret", "secrets", "secret", True, has_status=False)
# An identity for the processes of pods (every namespace has `default`); tokens from its `token` subresource.
SERVICEACCOUNT = Kind("", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", True, ("sa",),
                      has_status=False)
# Volcano's bus: a request to the vcjob or queue controller to run an action on its target, once.
COMMAND = Kind("bus.volcano.sh", "v1alpha1", "Command", "commands", "command", True, has_status=False, crd=True)
# A lock with a holder and a term: `vcctl controller`'s leader election (as every Kubernetes controller's).
LEASE = Kind("coordination.k8s.io", "v1", "Lease", "leases", "lease", True, has_status=False)
# How many of a set of pods may be disrupted at once: evictions and the scheduler's `pdb` plugin honour it.
PODDISRUPTIONBUDGET = Kind("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "poddisruptionbudget", True,
                           ("pdb",), generation=True)

# A namespace's limits on what its objects may use (`spec.hard`) and what they use (`status.used`).
RESOURCEQUOTA = Kind("", "v1", "ResourceQuota", "resourcequotas", "resourcequota", True, ("quota",))

# Storage (api/storage.py): a claim on a volume, the volumes, and the classes that provision them (vclite's
# provisioner makes a directory; a PersistentVolume's hostPath or local path is used where it says).
PERSISTENTVOLUMECLAIM = Kind("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim",
                             True, ("pvc",))
PERSISTENTVOLUME = Kind("", "v1", "PersistentVolume", "persistentvolumes", "persistentvolume", False, ("pv",))
STORAGECLASS = Kind("storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass", False, ("sc",),
                    has_status=False)

ALL: tuple[Kind, ...] = (JOB, CRONJOB, JOBFLOW, JOBTEMPLATE, QUEUE, PODGROUP, HYPERNODE, NUMATOPOLOGY, PRIORITYCLASS,
                         POD, NODE, NAMESPACE, EVENT, CONFIGMAP, SERVICE, SECRET, SERVICEACCOUNT, COMMAND, LEASE,
                         PODDISRUPTIONBUDGET, RESOURCEQUOTA, PERSISTENTVOLUMECLAIM, PERSISTENTVOLUME, STORAGECLASS)
_BY_KIND = {k.kind: k for k in ALL}

# Kinds served over HTTP as another version of a stored kind, never stored themselves (vcctl server
# converts: api/eventsv1.py): events.k8s.io/v1 Events are the core/v1 Events.
EVENT_V1 = Kind("events.k8s.io", "v1", "Event", "events", "event", True, ("ev",), has_status=False)
VIEWS: dict[Kind, Kind] = {EVENT_V1: EVENT}    # view -> the stored kind it shows


def lookup_view(api_version: str, kind: str) -> Kind | None:
    """The view kind (VIEWS) for an (apiVersion, kind) pair, or None."""
    return next((v for v in VIEWS if v.kind == kind and v.api_version == api_version), None)


def by_kind(kind: str) -> Kind | None:
    return _BY_KIND.get(kind)


def lookup(api_version: str, kind: str) -> Kind | None:
    """The Kind for an (apiVersion, kind) pair as written in a manifest, or None if not served."""
    k = _BY_KIND.get(kind)
    if k is None:
        return None
    if api_version == k.api_version or api_version in k.also_accepted:
        return k
    return None


def by_resource_name(name: str) -> Kind | None:
    """Resolve a kubectl-style resource name: plural, singular, kind (any case) or short name."""
    n = name.lower()
    for k in ALL:
        if n in (k.plural, k.singular, k.kind.lower(), k.resource) or n in k.short_names:
            return k
    return None
