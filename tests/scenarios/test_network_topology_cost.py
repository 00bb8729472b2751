"""What network-topology-aware's node scores cost a session with HyperNodes: its own scores move at
every placement (a HyperNode's usage changes every node's score in it), but the other NodeOrder
functions stay row-local and are recomputed on the changed nodes only (benchmarks/topology.py
measures the time; here the work is counted, never timed)."""
from vclite.scheduler import conf, registry
from vclite.scheduler.framework import hooks, plugin, session, snapshot

from .test_scheduler_scenarios import NOW, P, node, pg, pod, queue
from .test_scheduler_topology import hn

N = 32


class Counting:
    """A row-local NodeOrder function that counts the node rows it is asked to score."""
    name = "counting"
    Arguments = plugin.NoArguments
    rows_scored = 0

    def __init__(self, arguments):
        pass

    def on_session_open(self, ssn, reg):
        self.ssn = ssn
        reg.add(hooks.Point.NODE_ORDER, self.score, key=lambda task: task.req.tobytes())

    def score(self, task, rows):
        Counting.rows_scored += len(rows)
        return -self.ssn.nodes.used[rows, 0]

    def on_session_close(self, ssn):
        pass


def _run(hypernodes):
    nodes = [node(f"n{i:02d}", 4, "8Gi") for i in range(N)]
    tree = [hn(f"rack{r}", 1, *(f"n{i:02d}" for i in range(r * 8, r * 8 + 8))) for r in range(N // 8)]
    tree.append(hn("spine", 2, *(f"rack{r}" for r in range(N // 8)), kind="HyperNode"))
    pgs = [pg(f"ns/j{j}", "q1", 1) for j in range(24)]
    pods = [pod(f"ns/j{j}-0", f"j{j}", "1", "1Gi") for j in range(24)]
    state = snapshot.ClusterState(nodes=nodes, queues=[queue("q1")], podgroups=pgs, pods=pods,
                                  hypernodes=tree if hypernodes else [])
    tiers = [[P("gang", enableJobReady=True, enableJobPipelined=True, enableJobOrder=True),
              P("predicates", enablePredicate=True),
              P("network-topology-aware", enableNodeOrder=True),
              P("counting", enableNodeOrder=True)]]
    Counting.rows_scored = 0
    reg = registry.default_registry().with_plugins(Counting)
    result = session.run_session(state, conf.build("allocate", tiers, registry=reg), NOW)
    return result, Counting.rows_scored


def test_other_scores_stay_incremental_with_hypernodes():
    plain, plain_rows = _run(False)
    with_hn, hn_rows = _run(True)
    assert len(plain.binds) == len(with_hn.binds) == 24
    # without HyperNodes: all nodes once, then the changed node per placement; with them, the same
    # (before, every placement re-scored all 32 nodes: 24 × 32 rows)
    assert plain_rows <= N + 2 * 24
    assert hn_rows <= N + 2 * 24
