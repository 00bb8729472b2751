"""`vcctl jobflow create|list|get|describe|delete` and `vcctl jobtemplate create|list|get|describe|
delete` against an API server, as Volcano's vcctl (pkg/cli/jobflow, pkg/cli/jobtemplate): the same
flags, messages and table/YAML/JSON output. Plus `vcctl jobflow get NAME -w`: a live view of the
flow (see client_live.py).

The two command sets differ only by the `Resource` row (kind, wording, columns), so one factory
builds both. Pure formatting (`table_rows`, `describe_shape`) is separate from the commands.

vclite extension: `vcctl jobflow suspend|resume NAME` set or remove the JobFlow annotation
`flow.volcano.sh/suspend: "true"` (metadata, so it works on a cluster with Volcano's CRDs): while it
is set the JobFlow controller starts no new vcjob (running ones go on), and the flows ready to start
show `Suspended`.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import shlex
import sys
from typing import Any, Callable

import click

from vclite.api import flow, kinds, meta
from vclite.cli import client_common as common
from vclite.cli import flowtypes, gotyped
from vclite.cli import stdinput
from vclite.cli.context import CONTEXT
from vclite.lib import errors

Obj = dict[str, Any]

FINISHED = (flow.FlowPhase.SUCCEED, flow.FlowPhase.FAILED, flow.FlowPhase.TERMINATING)   # (nothing to resume)


@dataclasses.dataclass(frozen=True)
class Resource:
    kind: kinds.Kind
    group: str                  # the vcctl group: `Failed to <sub> <group>`
    what: str                   # wording in help and messages: "jobflow", "job template"
    with_phase: bool            # Phase and Age columns (JobFlow) or only Name, Namespace
    all_namespaces: bool        # `list --all-namespaces`
    gotype: gotyped.Struct      # what Volcano's vcctl decodes it into (describe)


JOBFLOW = Resource(kinds.JOBFLOW, "jobflow", "jobflow", True, True, flowtypes.JOBFLOW)
JOBTEMPLATE = Resource(kinds.JOBTEMPLATE, "jobtemplate", "job template", False, False, flowtypes.JOBTEMPLATE)


# ---- pure formatting -------------------------------------------------------------------------------
_PHASE_TYPES = ("v1alpha1.JobFlowStatus", "v1alpha1.State", "v1alpha1.Phase")   # (a mistyped one: Go's words)


def _age(obj: Obj, now: dt.datetime) -> str:
    """translateTimestampSince of the creationTimestamp, failing in the Go decoder's words when it is no time."""
    common.stored_time(obj, "metadata", "creationTimestamp")
    return common.age((obj.get("metadata") or {}).get("creationTimestamp"), now)


def table(res: Resource, objs: list[Obj], now: dt.datetime) -> str:
    """`Name  Namespace  Phase  Age` (JobFlow) or `Name  Namespace` (JobTemplate)."""
    if res.with_phase:
        rows = [[meta.name(o), meta.namespace(o), common.stored_str(o, ("status", "state", "phase"), _PHASE_TYPES),
                 _age(o, now)] for o in objs]
        return common.padded_table(["Name", "Namespace", "Phase", "Age"], rows)
    return common.padded_table(["Name", "Namespace"], [[meta.name(o), meta.namespace(o)] for o in objs])


def suspended_note(jobflow: Obj) -> str:
    """vclite: `get`'s line (on stderr, after Volcano's table) for a suspended JobFlow that has not finished, whose
    Phase column says only Pending or Running: no new job of it starts until it is resumed; then its nextFlows
    (those the resume starts, and those waiting only on running flows) are next."""
    if not _is_suspended(jobflow) or meta.phase(jobflow) in FINISHED:
        return ""
    ns, name = meta.namespace(jobflow) or "default", meta.name(jobflow)
    nxt = [str(n) for n in (jobflow.get("status") or {}).get("nextFlows") or []]
    return (f"JobFlow {ns}/{name} is suspended: no new job of it starts until it is resumed "
            f"(vcctl jobflow resume {shlex.quote(name)}" + ("" if ns == "default" else f" -n {shlex.quote(ns)}") + ")"
            + (f"; next: {', '.join(nxt)}" if nxt else ""))


def describe_shape(res: Resource, obj: Obj) -> Obj:
    """The object as Volcano's vcctl prints it: decoded into its Go type (fields it does not have dropped,
    unset ones as Go writes them), managedFields removed, apiVersion and kind filled in when missing."""
    obj = dict(obj, metadata=dict(obj.get("metadata") or {}, managedFields=None))
    if not obj.get("apiVersion") or not obj.get("kind"):
        obj.update(apiVersion=res.kind.api_version, kind=res.kind.kind)
    return gotyped.marshal(obj, res.gotype)


# ---- command bodies --------------------------------------------------------------------------------
def _create(res: Resource, client: Any, path: str) -> None:
    for doc in common.of_kind(common.read_documents(path), res.kind.kind, res.kind.api_version,
                              stdinput.name(path)):
        ns = meta.namespace(doc) or "default"
        doc["metadata"] = dict(doc.get("metadata") or {}, namespace=ns)
        try:
            client.create(doc)
            click.echo(f"Created {res.kind.kind}: {ns}/{meta.name(doc)}")
        except errors.ApiError as exc:
            click.echo(f"Failed to create {res.kind.kind}: {exc.message}")


def _delete(res: Resource, client: Any, name: str, namespace: str, path: str) -> None:
    if path:
        for doc in common.of_kind(common.read_documents(path), res.kind.kind, res.kind.api_version,
                                  stdinput.name(path)):
            ns = meta.namespace(doc) or "default"
            try:
                client.delete(res.kind, ns, meta.name(doc))
                click.echo(f"Deleted {res.kind.kind}: {ns}/{meta.name(doc)}")
            except errors.ApiError as exc:
                click.echo(f"Failed to delete {res.kind.kind}: {exc.message}")
        return
    if not name:
        raise common.CommandError(f"{res.what} name must be specified")
    obj = client.get(res.kind, namespace, name)
    client.delete(res.kind, meta.namespace(obj) or namespace, meta.name(obj))
    click.echo(f"Deleted {res.kind.kind}: {meta.namespace(obj) or namespace}/{meta.name(obj)}")


def _list(res: Resource, client: Any, namespace: str, all_namespaces: bool, now: dt.datetime) -> None:
    objs = client.list(res.kind, None if all_namespaces else namespace)
    if not objs:
        click.echo("No resources found")
        return
    click.echo(table(res, objs, now), nl=False)


def _describe(res: Resource, client: Any, name: str, namespace: str, fmt: str) -> None:
    if name:
        click.echo(common.describe_text(describe_shape(res, client.get(res.kind, namespace, name)), fmt), nl=False)
        return
    objs = client.list(res.kind, namespace)
    for i, obj in enumerate(objs):
        click.echo(common.describe_text(describe_shape(res, obj), fmt), nl=False)
        if len(objs) != 1 and i < len(objs) - 1:
            click.echo("\n")


# ---- the commands ----------------------------------------------------------------------------------
def _checked(res: Resource, sub: str, body: Callable[[], Any]) -> Any:
    return common.run_checked(sub, res.group, body)


def build(res: Resource) -> list[click.Command]:
    """The five client commands of one resource, ready to be added to its click group."""
    ns_opt, name_opt = common.namespace_option(res.what), common.name_option(res.what)
    file_help = f"the path to the YAML file containing the {res.what} (- for standard input)"

    @click.command("create", context_settings=CONTEXT, help=f"create a {res.group}")
    @common.common_options
    @click.option("-f", "--file", "path", default="", help=file_help)
    def create(master, kubeconfig, path):
        _checked(res, "create", lambda: _create(res, common.connect(master, kubeconfig), path))

    @click.command("delete", context_settings=CONTEXT, help=f"delete a {res.group}")
    @common.common_options
    @name_opt
    @ns_opt
    @click.option("-f", "--file", "path", default="", help=file_help)
    def delete(master, kubeconfig, name, namespace, path):
        _checked(res, "delete", lambda: _delete(res, common.connect(master, kubeconfig), name, namespace, path))

    @click.command("list", context_settings=CONTEXT, help=f"list {res.group}s")
    @common.common_options
    @ns_opt
    @click.pass_context
    def list_(ctx, master, kubeconfig, namespace, all_namespaces=False):
        now = common.clock_of(ctx).now()
        _checked(res, "list", lambda: _list(res, common.connect(master, kubeconfig), namespace, all_namespaces, now))

    if res.all_namespaces:
        list_ = click.option("--all-namespaces", "all_namespaces", is_flag=True,
                             help=f"list {res.group}s in all namespaces")(list_)

    @click.command("describe", context_settings=CONTEXT, help=f"describe a {res.group}")
    @common.common_options
    @name_opt
    @ns_opt
    @click.option("-o", "--format", "fmt", default="yaml", show_default=True, help="the format of output")
    def describe(master, kubeconfig, name, namespace, fmt):
        _checked(res, "describe", lambda: _describe(res, common.connect(master, kubeconfig), name, namespace, fmt))

    commands = [create, delete, list_, _get_command(res), describe]
    if res.kind is kinds.JOBFLOW:
        commands += [_suspend_command(res, True), _suspend_command(res, False)]
    return commands


def _is_suspended(jobflow: Obj) -> bool:
    return str(meta.annotations(jobflow).get(flow.SUSPEND_ANNOTATION, "")).lower() == "true"


def _suspend(client: Any, name: str, namespace: str, suspend: bool) -> None:
    """Set (suspend) or remove (resume) the annotation. A JobFlow already as asked is left unwritten and said so,
    exit 0, as `kubectl cordon` says `node/n already cordoned`: `JobFlow ns/name is already suspended`,
    `JobFlow ns/name is not suspended`."""
    if not name:
        raise common.CommandError("jobflow name must be specified")
    current = client.get(kinds.JOBFLOW, namespace, name)
    where = f"{meta.namespace(current) or namespace}/{name}"
    phase = meta.phase(current)
    if suspend and phase in (flow.FlowPhase.SUCCEED, flow.FlowPhase.FAILED):
        # as Argo's `argo suspend`: a finished flow has nothing left to hold
        raise common.CommandError(f"JobFlow {where} has finished ({phase}): there is nothing to suspend")
    if _is_suspended(current) == suspend:
        click.echo(f"JobFlow {where} is {'already' if suspend else 'not'} suspended")
        return
    value = "true" if suspend else None     # merge patch: null removes the annotation
    obj = client.patch(kinds.JOBFLOW, namespace, name, {"metadata": {"annotations": {flow.SUSPEND_ANNOTATION: value}}})
    click.echo(f"{'Suspended' if suspend else 'Resumed'} JobFlow: {meta.namespace(obj) or namespace}/{meta.name(obj)}")


def _suspend_command(res: Resource, suspend: bool) -> click.Command:
    sub = "suspend" if suspend else "resume"
    text = ("suspend a jobflow: no new job of it starts until it is resumed; running jobs go on "
            "(vclite extension: annotation flow.volcano.sh/suspend)") if suspend else \
        "resume a suspended jobflow: jobs whose dependencies are met start (vclite extension)"

    @click.command(sub, context_settings=CONTEXT, help=text)
    @common.common_options
    @common.name_option(res.what)
    @common.namespace_option(res.what)
    @click.argument("name_arg", metavar="[NAME]", required=False)
    def command(master, kubeconfig, name, namespace, name_arg):
        _checked(res, sub, lambda: _suspend(common.connect(master, kubeconfig), name or name_arg or "", namespace,
                                            suspend))

    return command


def _get_command(res: Resource) -> click.Command:
    def get_body(ctx: click.Context, master: str, kubeconfig: str, name: str, namespace: str, watch: bool) -> int:
        if not name:
            raise common.CommandError(f"name is mandatory to get the particular {res.what} details")
        client = common.connect(master, kubeconfig)
        clock = common.clock_of(ctx)
        obj = client.get(res.kind, namespace, name)
        click.echo(table(res, [obj], clock.now()), nl=False)
        note = suspended_note(obj) if res.kind is kinds.JOBFLOW else ""
        if note:
            click.echo(note, err=True)
        if not watch:
            return 0
        from vclite.cli import client_live   # (rich and the live view load only to watch)
        return client_live.follow(client, namespace, name, clock, jobflow=obj)

    @click.command("get", context_settings=CONTEXT, help=f"get a {res.group}" + (
        "\n\nWith -w, then follow it: a live view of its DAG, each job's phase and task progress, "
        "until it finishes (exit 0 if it succeeded, 1 if it failed)." if res.kind is kinds.JOBFLOW else ""))
    @common.common_options
    @common.name_option(res.what)
    @common.namespace_option(res.what)
    @click.argument("name_arg", metavar="[NAME]", required=False)
    @click.pass_context
    def get(ctx, master, kubeconfig, name, namespace, name_arg, watch=False):
        code = _checked(res, "get", lambda: get_body(ctx, master, kubeconfig, name or name_arg or "", namespace, watch))
        if code:
            sys.exit(code)

    if res.kind is kinds.JOBFLOW:
        get = click.option("-w", "--watch", is_flag=True,
                           help="follow the flow live until it finishes (vclite extension)")(get)
    return get
