"""Random DAGs through the whole embedded control plane: no job starts before its dependencies
completed, and every run ends with the flow Succeed."""
from hypothesis import given, settings, strategies as st

from tests.scenarios.test_embedded_control_plane import flow_phase, jobflow, run_to_end, start, template


@st.composite
def dags(draw):
    n = draw(st.integers(min_value=1, max_value=7))
    names = [f"j{i}" for i in range(n)]
    deps = {}
    for i, name in enumerate(names):
        deps[name] = sorted(draw(st.sets(st.sampled_from(names[:i]), max_size=3))) if i else []
    return deps


@settings(max_examples=25, deadline=None)
@given(dags())
def test_random_dag_runs_in_dependency_order_and_ends(deps):
    rt = start(jobflow("p", deps) + "".join(template(n, cpu="500m") for n in deps))
    order = run_to_end(rt)
    assert flow_phase(rt, "p") == "Succeed"
    pos = {n: i for i, n in enumerate(order)}
    assert set(pos) == {f"p-{n}" for n in deps}
    for flow, targets in deps.items():
        for t in targets:
            assert pos[f"p-{t}"] < pos[f"p-{flow}"]
