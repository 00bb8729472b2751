"""The JobTemplate controller: `status.jobDependsOnList` = the vcjobs created from each template.

A vcjob is "created from" template `<ns>/<name>` when it carries the label
`volcano.sh/createdByJobTemplate: <ns>.<name>` (written by the JobFlow controller); vcjobs of every
JobFlow using the template are listed, ordered by creation time then name. Volcano's contract, with
its bugs fixed: the list is recomputed on vcjob add *and* delete (Volcano only on add, so deleted
jobs linger), it is cleared when no vcjob is left (Volcano never writes an empty list), and names
and namespaces with dots are handled (the namespace, a DNS label, never has one).

Reads templates and vcjobs from informers (the vcjobs indexed by template), so a sync costs in
proportion to the template's own vcjobs, not to every vcjob kept. Talks to the cluster only
through the Client protocol; watch handlers only enqueue `ns/name`.
"""
from __future__ import annotations

from typing import Any, Hashable

from vclite.api import flow, kinds, meta
from vclite.apiserver import client as client_mod
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue
from vclite.lib import jsoncopy

Obj = dict[str, Any]
DEPENDS_ON_LIST = "jobDependsOnList"


def template_key_of(job: Obj | None) -> str | None:
    """`ns/name` from a vcjob's `volcano.sh/createdByJobTemplate: <ns>.<name>` label, else None.
    The namespace is a DNS label (no dots), so the first dot splits; the name may contain dots."""
    value = meta.labels(job).get(flow.CREATED_BY_JOB_TEMPLATE, "") if job else ""
    ns, dot, name = value.partition(".")
    return f"{ns}/{name}" if dot and ns and name else None


def _template_index(job: Obj) -> str | None:
    """The template key a vcjob counts for: its label's, when that names the job's own namespace."""
    key = template_key_of(job)
    return key if key is not None and key.partition("/")[0] == meta.namespace(job) else None


def depends_on_status(previous: Obj | None, jobs: list[Obj]) -> Obj:
    """The template status for these vcjobs (pure); other status fields are kept."""
    out = jsoncopy.deep_copy(previous or {})
    names = [meta.name(j) for j in sorted(jobs, key=lambda j: (j.get("metadata", {}).get("creationTimestamp")
                                                               or "", meta.name(j)))]
    if names:
        out[DEPENDS_ON_LIST] = names
    else:
        out.pop(DEPENDS_ON_LIST, None)
    return out


class JobTemplateController:
    name = "jobtemplate-controller"
    background = True   # bookkeeping no other component waits for (the runtime runs it last)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock):
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock)
        self.templates = informer_mod.Informer(client, kinds.JOBTEMPLATE, self._on_template)
        self.jobs = informer_mod.Informer(client, kinds.JOB, self._on_job, indexers={"template": _template_index})

    def start(self) -> None:
        self.jobs.start()
        self.templates.start()
        for tmpl in self.templates.items():
            self.queue.add(meta.key(tmpl))

    def stop(self) -> None:
        self.templates.stop()
        self.jobs.stop()

    def _on_template(self, ev: client_mod.WatchEvent) -> None:
        if ev.type == client_mod.EventType.MODIFIED and ev.old is not None and \
                meta.status_only_change(ev.object, ev.old):
            return   # our own status write
        if ev.type in (client_mod.EventType.ADDED, client_mod.EventType.MODIFIED):
            self.queue.add(meta.key(ev.object))

    def _on_job(self, ev: client_mod.WatchEvent) -> None:
        if ev.type == client_mod.EventType.MODIFIED:
            if ev.old is not None and meta.labels(ev.old) is meta.labels(ev.object) or \
                    template_key_of(ev.old) == template_key_of(ev.object):
                return   # a phase change does not change which template a job came from
        for obj in (ev.object, ev.old):
            key = template_key_of(obj)
            if key:
                self.queue.add(key)

    def sync(self, key: Hashable) -> None:
        ns, _, name = str(key).partition("/")
        template = self.templates.get(ns, name)
        if template is None:
            return
        jobs = self.jobs.by_index("template", f"{ns}/{name}")
        new_status = depends_on_status(template.get("status"), jobs)
        if new_status != (template.get("status") or {}):
            try:
                self.client.update_status({**template, "status": new_status})
            except errors.NotFound:
                return   # deleted meanwhile
