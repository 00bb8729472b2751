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
NAMESPACE_FINALIZER = "kubernetes"   # a Namespace's spec.finalizers: the namespace controller empties it
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"   # every Namespace carries its name as this label
CPU, MEMORY, PODS = "cpu", "memory", "pods"
