"""Plugins Volcano's default and Helm configurations name that vclite accepts as no-ops for now.

TODO(issue #3): implement `drf` (dominant-resource job order and preemption), `nodeorder` (node
scores: least/most requested, balanced allocation...), `binpack`, `conformance` (never evict
critical pods) and `overcommit` (cluster-wide enqueue limit). Until then each registers no hook, so
a configuration naming them loads and schedules as if they were absent: without nodeorder or
binpack every feasible node scores 0 and the first by name wins; without overcommit only
proportion limits enqueue. Their arguments are checked by name and type already, so a typo fails
at load today and a configuration that loads now keeps loading when they are implemented.

Must not: register hooks or keep state.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar

from vclite.scheduler.framework import hooks, plugin

if TYPE_CHECKING:
    from vclite.scheduler.framework import session as session_mod


class _NoOpPlugin:
    name: ClassVar[str] = ""
    Arguments: ClassVar[type] = plugin.NoArguments
    argument_prefixes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, arguments: Any):
        self.arguments = arguments

    def on_session_open(self, ssn: "session_mod.Session", reg: hooks.Registrar) -> None:
        return None

    def on_session_close(self, ssn: "session_mod.Session") -> None:
        return None


class Conformance(_NoOpPlugin):
    name = "conformance"


class Drf(_NoOpPlugin):
    name = "drf"


@dataclasses.dataclass(frozen=True)
class NodeOrderArguments:
    leastrequested: float = plugin.arg("leastrequested.weight", 1.0)
    mostrequested: float = plugin.arg("mostrequested.weight", 0.0)
    balancedresource: float = plugin.arg("balancedresource.weight", 1.0)
    nodeaffinity: float = plugin.arg("nodeaffinity.weight", 2.0)
    podaffinity: float = plugin.arg("podaffinity.weight", 2.0)
    tainttoleration: float = plugin.arg("tainttoleration.weight", 3.0)
    imagelocality: float = plugin.arg("imagelocality.weight", 1.0)
    podtopologyspread: float = plugin.arg("podtopologyspread.weight", 2.0)


class NodeOrder(_NoOpPlugin):
    name = "nodeorder"
    Arguments = NodeOrderArguments


@dataclasses.dataclass(frozen=True)
class BinpackArguments:
    weight: float = plugin.arg("binpack.weight", 1.0)
    cpu: float = plugin.arg("binpack.cpu", 1.0)
    memory: float = plugin.arg("binpack.memory", 1.0)
    resources: str = plugin.arg("binpack.resources", "")
    extra: Any = None   # binpack.resources.<name>: weight per extended resource


class Binpack(_NoOpPlugin):
    name = "binpack"
    Arguments = BinpackArguments
    argument_prefixes = ("binpack.resources.",)


@dataclasses.dataclass(frozen=True)
class OvercommitArguments:
    factor: float = plugin.arg("overcommit-factor", 1.2)


class Overcommit(_NoOpPlugin):
    name = "overcommit"
    Arguments = OvercommitArguments


PLUGINS: tuple[type, ...] = (Conformance, Drf, NodeOrder, Binpack, Overcommit)
