"""v1 (core) names: pod phases, QoS classes, restart policies, well-known node labels and resources."""
from __future__ import annotations

import enum


class PodPhase(enum.StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


class QOSClass(enum.StrEnum):
    """A pod's `status.qosClass` (Kubernetes' PodQOSClass)."""
    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


class RestartPolicy(enum.StrEnum):
    ALWAYS = "Always"
    ON_FAILURE = "OnFailure"
    NEVER = "Never"


HOSTNAME_LABEL = "kubernetes.io/hostname"
DEFAULT_NAMESPACE = "default"
SYSTEM_NAMESPACE = "kube-system"
PUBLIC_NAMESPACE = "kube-public"
NODE_LEASE_NAMESPACE = "kube-node-lease"
# the namespaces kube-apiserver keeps (its system namespaces controller), and those it never lets go
SYSTEM_NAMESPACES = (SYSTEM_NAMESPACE, PUBLIC_NAMESPACE, NODE_LEASE_NAMESPACE)
IMMORTAL_NAMESPACES = (DEFAULT_NAMESPACE, SYSTEM_NAMESPACE, PUBLIC_NAMESPACE)
NAMESPACE_FINALIZER = "kubernetes"   # a Namespace's spec.finalizers: the namespace controller empties it
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"   # every Namespace carries its name as this label
CPU, MEMORY, PODS = "cpu", "memory", "pods"
DEFAULT_TERMINATION_GRACE = 30   # seconds: a pod's terminationGracePeriodSeconds when it names none
TERMINATION_MESSAGE_LIMIT = 4096   # bytes of a container's termination message the kubelet keeps: the last ones


def cut_message_note(message: str) -> str:
    """What to add when `message`, a JobFlow output that is not the JSON it should be, may have been cut to
    the kubelet's TERMINATION_MESSAGE_LIMIT (its start lost); "" otherwise."""
    if len(message.encode(errors="replace")) < TERMINATION_MESSAGE_LIMIT:
        return ""
    return (f"; it may have been cut: a termination message keeps only its last {TERMINATION_MESSAGE_LIMIT} "
            "bytes, as the kubelet keeps them")


def deletion_grace(pod: dict, requested: int | None = None) -> int:
    """Seconds a deleted pod gets to stop, as the pod registry's CheckGracefulDelete decides: 0 (it is
    removed at once) for a pod no node runs or whose containers have all ended; else `requested`
    (DeleteOptions.gracePeriodSeconds), else its `terminationGracePeriodSeconds` (30 when unset).
    A negative value counts as 1, as the API server reads it."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    phase = (pod.get("status") or {}).get("phase") if isinstance(pod.get("status"), dict) else None
    if not spec.get("nodeName") or phase in (PodPhase.SUCCEEDED, PodPhase.FAILED):
        return 0
    grace = requested if requested is not None else spec.get("terminationGracePeriodSeconds",
                                                             DEFAULT_TERMINATION_GRACE)
    if not isinstance(grace, int) or isinstance(grace, bool):
        grace = DEFAULT_TERMINATION_GRACE
    return 1 if grace < 0 else grace
