"""Embedded mode only (`vcctl run`): the ServiceAccounts a vcjob's pods name and its namespace lacks, made when
the vcjob is created.

`vcctl run` makes, before anything runs, each account the files' pods name and no file defines
(cli/manifests.py, with a warning at the field): it stands for the account the cluster the manifests come from
has. A name a JobFlow fills in only when it makes the vcjob — `serviceAccountName: "{{item}}"`, one read from
a flow's output — is not known then; without this hook the vcjob's pods were refused (as kube-apiserver's
ServiceAccount admission refuses them) until the run timed out. So the embedded API calls `make_accounts`
after it stores a vcjob (InProcessClient.after_create, installed by Runtime(accounts_on_demand=True)): each
missing account is created and a Warning Event (`STAND_IN`) on the vcjob says so; `vcctl run` prints the
warning at the end (Runtime.made_accounts), at the field that wrote the name (cli/runaccounts.py).

Why here and not in the vcjob controller: the accounts are the embedded control plane's stand-ins for the
cluster's, as the namespaces it makes on demand are — an API-side behaviour of that mode, decided once where the
runtime is built —, while the controllers run unchanged under `vcctl server` and on a cluster, which keep
refusing the pods as kube does; and at the vcjob's creation, not its pods', so the account exists before the
first pod is tried (no refused create, no back-off) and a bare pod is still refused as on a cluster.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from vclite.admission import serviceaccount
from vclite.api import kinds, meta
from vclite.lib import errors

Obj = dict[str, Any]
STAND_IN = "StandInServiceAccount"   # the Warning Event's reason
Record = Callable[[Obj, str, str, str], None]   # (object, type, reason, message): events.Recorder.record


def named_accounts(job: Obj) -> list[tuple[str, str]]:
    """(field path, account) of each task's pods' ServiceAccount but `default` (every namespace has it), in task
    order: `serviceAccountName`, else the deprecated `serviceAccount`."""
    out = []
    tasks = (job.get("spec") or {}).get("tasks")
    for i, task in enumerate(tasks if isinstance(tasks, list) else ()):
        spec = ((task or {}).get("template") or {}).get("spec") if isinstance(task, dict) else None
        if not isinstance(spec, dict):
            continue
        key = "serviceAccountName" if spec.get("serviceAccountName") else "serviceAccount"
        name = spec.get(key)
        if isinstance(name, str) and name and name != serviceaccount.DEFAULT:
            out.append((f"spec.tasks[{i}].template.spec.{key}", name))
    return out


def message(namespace: str, name: str, job: str) -> str:
    """The warning, in the words of the one `vcctl validate`/`run` give a file's undefined account."""
    return (f'ServiceAccount "{name}" is not defined in the files given: the embedded control plane made one in '
            f"namespace {namespace} for the run when it created vcjob {job} (on a cluster it must exist, or its pods "
            "are refused)")


class Made(NamedTuple):
    """An account made for a vcjob: the vcjob (as stored), the field of its that names the account, the name."""
    job: Obj
    field: str
    name: str


def make_accounts(client: Any, record: Record, kind: kinds.Kind, obj: Obj) -> list[Made]:
    """After a create: for a vcjob, make each account its pods name that its namespace lacks (once per name);
    what was made."""
    if kind is not kinds.JOB:
        return []
    namespace = meta.namespace(obj) or "default"
    made: dict[str, Made] = {}
    for field, name in named_accounts(obj):
        if name in made:
            continue
        try:
            client.get(kinds.SERVICEACCOUNT, namespace, name)
            continue
        except errors.NotFound:
            pass
        try:
            client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                           "metadata": {"name": name, "namespace": namespace}})
        except (errors.AlreadyExists, errors.NotFound, errors.Invalid, errors.Forbidden):
            continue   # (a name the pod admission will refuse anyway, a namespace going away: the pods say why)
        made[name] = Made(obj, field, name)
        why = message(namespace, name, f"{namespace}/{meta.name(obj)}")
        record(obj, "Warning", STAND_IN, f"{field}: {why}")
    return list(made.values())
