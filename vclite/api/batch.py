"""batch.volcano.sh/v1alpha1 (vcjob) and bus.volcano.sh names: phases, events, actions, label and
annotation keys, exactly as Volcano spells them."""
from __future__ import annotations

import enum


class JobPhase(enum.StrEnum):
    PENDING = "Pending"
    ABORTING = "Aborting"
    ABORTED = "Aborted"
    RUNNING = "Running"
    RESTARTING = "Restarting"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    TERMINATING = "Terminating"
    TERMINATED = "Terminated"
    FAILED = "Failed"


FINISHED_PHASES = frozenset({JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.TERMINATED, JobPhase.ABORTED})
TERMINAL_PHASES = frozenset({JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.TERMINATED})


class Event(enum.StrEnum):
    ANY = "*"
    POD_FAILED = "PodFailed"
    POD_EVICTED = "PodEvicted"
    POD_PENDING = "PodPending"
    POD_RUNNING = "PodRunning"
    JOB_UNKNOWN = "Unknown"
    TASK_COMPLETED = "TaskCompleted"
    OUT_OF_SYNC = "OutOfSync"
    COMMAND_ISSUED = "CommandIssued"
    JOB_UPDATED = "JobUpdated"
    TASK_FAILED = "TaskFailed"


POLICY_EVENTS = frozenset({Event.ANY, Event.POD_FAILED, Event.POD_EVICTED, Event.POD_PENDING, Event.JOB_UNKNOWN,
                           Event.TASK_COMPLETED, Event.TASK_FAILED, Event.JOB_UPDATED})
INTERNAL_EVENTS = frozenset({Event.OUT_OF_SYNC, Event.COMMAND_ISSUED, Event.POD_RUNNING})


class Action(enum.StrEnum):
    ABORT_JOB = "AbortJob"
    RESTART_JOB = "RestartJob"
    RESTART_TASK = "RestartTask"
    RESTART_POD = "RestartPod"
    RESTART_PARTITION = "RestartPartition"
    TERMINATE_JOB = "TerminateJob"
    COMPLETE_JOB = "CompleteJob"
    RESUME_JOB = "ResumeJob"
    SYNC_JOB = "SyncJob"
    ENQUEUE_JOB = "EnqueueJob"
    SYNC_QUEUE = "SyncQueue"
    OPEN_QUEUE = "OpenQueue"
    CLOSE_QUEUE = "CloseQueue"


POLICY_ACTIONS = frozenset({Action.ABORT_JOB, Action.RESTART_JOB, Action.RESTART_TASK, Action.RESTART_POD,
                            Action.RESTART_PARTITION, Action.TERMINATE_JOB, Action.COMPLETE_JOB, Action.RESUME_JOB})

# Labels and annotations on pods / podgroups created for a vcjob.
TASK_INDEX = "volcano.sh/task-index"
TASK_SPEC = "volcano.sh/task-spec"
JOB_NAME = "volcano.sh/job-name"
JOB_NAMESPACE = "volcano.sh/job-namespace"
QUEUE_NAME = "volcano.sh/queue-name"
JOB_VERSION = "volcano.sh/job-version"
TEMPLATE_UID = "volcano.sh/template-uid"
JOB_RETRY_COUNT = "volcano.sh/job-retry-count"
PARTITION_ID = "volcano.sh/partition-id"
NUMA_POLICY = "volcano.sh/numa-topology-policy"
PREEMPTABLE = "volcano.sh/preemptable"
COOLDOWN_TIME = "volcano.sh/cooldown-time"
REVOCABLE_ZONE = "volcano.sh/revocable-zone"
JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
OUT_OF_SYNC_ANNOTATION = "volcano.sh/controller-out-of-sync"
JOB_FORWARDING = "volcano.sh/job-forwarding"   # a job (and its pods) whose queue names extendClusters
GROUP_NAME = "scheduling.k8s.io/group-name"
TASK_PRIORITY = "volcano.sh/task-priority"

# batch.volcano.sh CronJob: the scheduled time of the run a vcjob was made for (RFC 3339, in the CronJob's zone)
CRONJOB_SCHEDULED_TIMESTAMP = "volcano.sh/cronjob-scheduled-timestamp"


class ConcurrencyPolicy(enum.StrEnum):
    ALLOW = "Allow"
    FORBID = "Forbid"
    REPLACE = "Replace"


# the CronJob CRD's defaults
CRONJOB_DEFAULTS = {"concurrencyPolicy": ConcurrencyPolicy.ALLOW.value, "suspend": False,
                    "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}

DEFAULT_SCHEDULER = "volcano"
DEFAULT_QUEUE = "default"
DEFAULT_MAX_RETRY = 3

KNOWN_PLUGINS = frozenset({"env", "svc", "ssh", "tensorflow", "mpi", "pytorch", "ray", "hcclrank"})
# the mpi and ray plugins' Go flags and their defaults (read by admission and by the plugins)
MPI_PLUGIN_FLAGS = {"master": "master", "worker": "worker", "port": 22}
RAY_PLUGIN_FLAGS = {"head": "head", "headContainer": "head", "worker": "worker", "workerContainer": "worker",
                    "port": 6379, "dashboardPort": 8265, "clientPort": 10001}
# every job plugin's Go flags and their defaults, by plugin (the plugins read them; `vcctl validate` warns
# about an argument they cannot parse); `env` reads no argument
PLUGIN_FLAGS = {
    "svc": {"publish-not-ready-addresses": False, "disable-network-policy": False, "inject-hosts-env": True},
    "ssh": {"ssh-key-file-path": "/root/.ssh", "ssh-private-key": "", "ssh-public-key": "", "ssh-port": 22},
    "pytorch": {"master": "master", "worker": "worker", "port": 23456, "wait-master-enabled": False,
                "wait-master-timeout": 300, "wait-master-image": "busybox:1.36.1"},
    "tensorflow": {"ps": "ps", "worker": "worker", "chief": "chief", "evaluator": "evaluator", "port": 2222},
    "mpi": MPI_PLUGIN_FLAGS,
    "ray": RAY_PLUGIN_FLAGS,
    "hcclrank": {"master": "master", "worker": "worker"},
}
