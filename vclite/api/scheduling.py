"""scheduling.volcano.sh/v1beta1 names: PodGroup phases and condition reasons, Queue states."""
from __future__ import annotations

import enum

# The scheduling gate Volcano's webhook may put on a pod until its queue admits it (QueueAllocationGateKey).
QUEUE_ALLOCATION_GATE = "scheduling.volcano.sh/queue-allocation-gate"
# The queue of a pod no vcjob made (QueueNameAnnotationKey); a vcjob's pods carry batch.QUEUE_NAME instead.
QUEUE_NAME_ANNOTATION = "scheduling.volcano.sh/queue-name"
# The ConfigMap Volcano's Helm chart mounts into the scheduler, and its key: the scheduler's configuration.
SCHEDULER_CONFIGMAP_NAMESPACE, SCHEDULER_CONFIGMAP = "volcano-system", "volcano-scheduler-configmap"
SCHEDULER_CONF_KEY = "volcano-scheduler.conf"


class PodGroupPhase(enum.StrEnum):
    PENDING = "Pending"
    INQUEUE = "Inqueue"
    RUNNING = "Running"
    UNKNOWN = "Unknown"
    COMPLETED = "Completed"


class PodGroupConditionType(enum.StrEnum):
    UNSCHEDULABLE = "Unschedulable"
    SCHEDULED = "Scheduled"


class ConditionReason(enum.StrEnum):
    NOT_ENOUGH_RESOURCES = "NotEnoughResources"
    NOT_ENOUGH_TASKS = "NotEnoughTasks"
    NOT_ENOUGH_PODS_OF_TASK = "NotEnoughPodsOfTask"
    POD_FAILED = "PodFailed"
    POD_DELETED = "PodDeleted"


class QueueState(enum.StrEnum):
    OPEN = "Open"
    CLOSED = "Closed"
    CLOSING = "Closing"
    UNKNOWN = "Unknown"


ROOT_QUEUE = "root"
DEFAULT_QUEUE = "default"
