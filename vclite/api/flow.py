"""flow.volcano.sh/v1alpha1 names: JobFlow phases, retain policies, labels written on created vcjobs."""
from __future__ import annotations

import enum


class FlowPhase(enum.StrEnum):
    """JobFlow status.state.phase (Volcano spells success `Succeed`)."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEED = "Succeed"
    FAILED = "Failed"
    TERMINATING = "Terminating"


class RetainPolicy(enum.StrEnum):
    RETAIN = "retain"
    DELETE = "delete"


CREATED_BY_JOB_TEMPLATE = "volcano.sh/createdByJobTemplate"
CREATED_BY_JOB_FLOW = "volcano.sh/createdByJobFlow"


def job_name(jobflow: str, flow: str) -> str:
    """The vcjob a flow creates: `<jobflow>-<flow>`."""
    return f"{jobflow}-{flow}"


def object_string(namespace: str, name: str) -> str:
    """The `<ns>.<name>` label value Volcano writes."""
    return f"{namespace}.{name}"


# vclite's flow primitives (annotations, so they work on a cluster with Volcano's CRDs unchanged).
SUSPEND_ANNOTATION = "flow.volcano.sh/suspend"          # "true": no new vcjob of the JobFlow starts
OUTPUT_TASK_ANNOTATION = "flow.volcano.sh/output-task"  # on a JobTemplate: whose termination message is the output
