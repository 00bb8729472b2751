"""`vcctl queue create|list|get|operate|delete` against an API server, as Volcano's vcctl
(pkg/cli/queue): the same flags (`-n` is the queue's *name* here, as in Volcano), messages and
output; create, operate and delete print nothing when they succeed, as Volcano's do.

operate open/close: where the server serves bus.volcano.sh `commands` (Volcano, and vclite's
server) this creates an OpenQueue/CloseQueue Command in namespace `default`, as Volcano's vcctl
does, and the queue controller changes the state (a queue that still has PodGroups stays Closing
until they are gone). Against a server without commands it writes `status.state` (Open / Closed)
through the status subresource itself. `operate -a update` patches `spec.weight` on both. `create
-S` there also writes the requested state through the status subresource when the server did not
keep it from the create body.
"""
from __future__ import annotations

from typing import Any

import click

from vclite.api import batch, bus, kinds, meta, scheduling
from vclite.cli import client_common as common
from vclite.cli.context import CONTEXT
from vclite.lib import errors

Obj = dict[str, Any]
HEADERS = ("Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown", "Completed")
COUNTED = (scheduling.PodGroupPhase.INQUEUE, scheduling.PodGroupPhase.PENDING, scheduling.PodGroupPhase.RUNNING,
           scheduling.PodGroupPhase.UNKNOWN, scheduling.PodGroupPhase.COMPLETED)
ACTIONS = {"open": (batch.Action.OPEN_QUEUE, scheduling.QueueState.OPEN),
           "close": (batch.Action.CLOSE_QUEUE, scheduling.QueueState.CLOSED)}


# ---- pure -----------------------------------------------------------------------------------------
def podgroup_counts(podgroups: list[Obj], queue: str) -> dict[str, int]:
    """PodGroups of `queue` by phase (PodGroupStatistics)."""
    counts = {str(p): 0 for p in COUNTED}
    for pg in podgroups:
        phase = (pg.get("status") or {}).get("phase")
        if (pg.get("spec") or {}).get("queue") == queue and phase in counts:
            counts[phase] += 1
    return counts


def queue_fields(queue: Obj) -> tuple[int, str, str]:
    """The queue's weight, state and parent as vcctl's Go client decodes them (CommandError in its words when one
    of them, or the spec or status holding it, is stored with another type)."""
    parent = common.stored_str(queue, ("spec", "parent"), ("v1beta1.QueueSpec", "string"))
    state = common.stored_str(queue, ("status", "state"), ("v1beta1.QueueStatus", "v1beta1.QueueState"))
    return common.stored_int(queue, "spec", "weight"), state, parent


def queue_line(queue: Obj, counts: dict[str, int]) -> str:
    weight, state, parent = queue_fields(queue)
    head = f"{meta.name(queue):<25}{weight:<8}{state:<8}{parent:<8}"
    return head + "".join(f"{counts[str(p)]:<8}" for p in COUNTED) + "\n"


def queues_text(queues: list[Obj], podgroups: list[Obj]) -> str:
    header = f"{HEADERS[0]:<25}" + "".join(f"{h:<8}" for h in HEADERS[1:]) + "\n"
    return header + "".join(queue_line(q, podgroup_counts(podgroups, meta.name(q))) for q in queues)


# ---- command bodies --------------------------------------------------------------------------------
def _create(client: Any, name: str, weight: int, state: str) -> None:
    queue = {"apiVersion": kinds.QUEUE.api_version, "kind": kinds.QUEUE.kind, "metadata": {"name": name},
             "spec": {"weight": weight}, "status": {"state": state}}
    created = client.create(queue)
    if state and (created.get("status") or {}).get("state") != state and \
            not client.serves("bus.volcano.sh/v1alpha1", "commands"):
        client.patch(kinds.QUEUE, "", name, {"status": {"state": state}}, status=True)


def _operate(client: Any, name: str, weight: int, action: str) -> None:
    if not name:
        raise common.CommandError("queue name must be specified")
    if action == "update":
        if weight == 0:
            raise common.CommandError(f"when update queue {name}, weight must be specified, "
                                      "the value must be greater than 0")
        client.patch(kinds.QUEUE, "", name, {"spec": {"weight": weight}})
        return
    if action == "":
        raise common.CommandError("action can not be null")
    if action not in ACTIONS:
        raise common.CommandError(f"action {action} invalid, valid actions are open, close and update")
    bus_action, state = ACTIONS[action]
    queue = client.get(kinds.QUEUE, "", name)
    if client.serves("bus.volcano.sh/v1alpha1", "commands"):
        client.request("POST", "/apis/bus.volcano.sh/v1alpha1/namespaces/default/commands",
                       bus.command_for(queue, kinds.QUEUE, str(bus_action)))
    else:
        client.patch(kinds.QUEUE, "", name, {"status": {"state": str(state)}}, status=True)


def _podgroups(client: Any, wording: str) -> list[Obj]:
    """Every PodGroup (the counts per queue); a failure in Volcano's words: `<wording> with err: <error>`."""
    try:
        return client.list(kinds.PODGROUP)
    except errors.ApiError as exc:
        raise common.CommandError(f"{wording} with err: {exc.message}") from exc


def _list(client: Any) -> None:
    queues = client.list(kinds.QUEUE)
    if not queues:
        click.echo("No resources found")
        return
    click.echo(queues_text(queues, _podgroups(client, "failed to list podgroups")), nl=False)


def _get(client: Any, name: str) -> None:
    if not name:
        raise common.CommandError("name is mandatory to get the particular queue details")
    queue = client.get(kinds.QUEUE, "", name)
    click.echo(queues_text([queue], _podgroups(client, f"failed to list podgroup for queue {name}")), nl=False)


def _delete(client: Any, name: str) -> None:
    if not name:
        raise common.CommandError("queue name must be specified")
    client.delete(kinds.QUEUE, "", name)


# ---- the commands ----------------------------------------------------------------------------------
@click.command("create", context_settings=CONTEXT, short_help="creates queue", help="""creates queue

Creates a cluster-wide queue of weight -w in state -S (Open or Closed), child of `root`.
-n is the queue's name here (queues have no namespace), as in Volcano's vcctl. Prints nothing
on success, as Volcano.

\b
Example:
  vcctl queue create -n research -w 4
""")
@common.common_options
@click.option("-n", "--name", default="test", show_default=True, help="the name of queue")
@click.option("-w", "--weight", default=1, show_default=True, type=int, help="the weight of the queue")
@click.option("-S", "--state", default="Open", show_default=True, help="the state of queue")
def create(master, kubeconfig, name, weight, state):
    common.run_checked("create", "queue", lambda: _create(common.connect(master, kubeconfig), name, weight, state))


@click.command("delete", context_settings=CONTEXT, short_help="delete queue", help="""delete queue

Deletes a queue that no PodGroup uses any more (`default` and `root` cannot be deleted).
-n is the queue's name here (queues have no namespace), as in Volcano's vcctl. Prints nothing
on success, as Volcano.

\b
Example:
  vcctl queue delete -n research
""")
@common.common_options
@click.option("-n", "--name", default="", help="the name of queue")
def delete(master, kubeconfig, name):
    common.run_checked("delete", "queue", lambda: _delete(common.connect(master, kubeconfig), name))


@click.command("operate", context_settings=CONTEXT, short_help="operate queue", help="""operate queue

-a open|close: open or close the queue (a closed queue admits no new job; it stays Closing while
PodGroups still use it). -a update -w N: set its weight. -n is the queue's name here (queues
have no namespace), as in Volcano's vcctl. Prints nothing on success.

\b
Examples:
  vcctl queue operate -n research -a close
  vcctl queue operate -n research -a update -w 8
""")
@common.common_options
@click.option("-n", "--name", default="", help="the name of queue")
@click.option("-w", "--weight", default=0, type=int, help="the weight of the queue")
@click.option("-a", "--action", default="", help="operate action to queue, valid actions are open, close, update")
def operate(master, kubeconfig, name, weight, action):
    common.run_checked("operate", "queue",
                       lambda: _operate(common.connect(master, kubeconfig), name, weight, action))


@click.command("list", context_settings=CONTEXT, short_help="lists all the queue", help="""lists all the queue

One line per queue: weight, state, parent and its PodGroups by phase (Inqueue, Pending, Running,
Unknown, Completed).

\b
Example:
  vcctl queue list
""")
@common.common_options
def list_(master, kubeconfig):
    common.run_checked("list", "queue", lambda: _list(common.connect(master, kubeconfig)))


@click.command("get", context_settings=CONTEXT, short_help="get a queue", help="""get a queue

The queue's line of `vcctl queue list`. -n is the queue's name here (queues have no namespace), as in Volcano's vcctl.

\b
Example:
  vcctl queue get -n research
""")
@common.common_options
@click.option("-n", "--name", default="", help="the name of queue")
def get(master, kubeconfig, name):
    common.run_checked("get", "queue", lambda: _get(common.connect(master, kubeconfig), name))


def build() -> click.Group:
    """The `vcctl queue` group."""
    group = click.Group("queue", context_settings=CONTEXT, help="Queue Operations")
    for cmd in (create, delete, operate, list_, get):
        group.add_command(cmd)
    return group
