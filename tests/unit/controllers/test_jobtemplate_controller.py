"""JobTemplate controller pure parts (Volcano U22, U23, adapted: dots in names, cleared lists)."""
from __future__ import annotations

import pytest

from vclite.api import flow
from vclite.controllers import jobtemplate


def job(name, created, label=None):
    md = {"name": name, "namespace": "default", "creationTimestamp": created}
    if label is not None:
        md["labels"] = {flow.CREATED_BY_JOB_TEMPLATE: label}
    return {"metadata": md}


@pytest.mark.parametrize("previous, jobs, expected", [
    pytest.param(None, [job("job1", "2026-01-01T00:00:00Z")], {"jobDependsOnList": ["job1"]}, id="U22"),
    pytest.param({}, [job("b", "2026-01-01T00:00:02Z"), job("c", "2026-01-01T00:00:01Z"),
                      job("a", "2026-01-01T00:00:02Z")], {"jobDependsOnList": ["c", "a", "b"]},
                 id="creation-order-then-name"),
    pytest.param({"jobDependsOnList": ["gone"], "other": 1}, [], {"other": 1},
                 id="cleared-when-none-left"),        # deviation: Volcano keeps the stale list
])
def test_depends_on_status(previous, jobs, expected):
    assert jobtemplate.depends_on_status(previous, jobs) == expected


@pytest.mark.parametrize("label, key", [
    pytest.param("default.flow", "default/flow", id="U23"),
    pytest.param("ns.name.with.dots", "ns/name.with.dots", id="dots-in-name"),   # deviation: Volcano skips
    pytest.param("nodots", None, id="malformed"),
    pytest.param(".x", None, id="no-namespace"),
    pytest.param(None, None, id="no-label"),
])
def test_template_key_of(label, key):
    assert jobtemplate.template_key_of(job("j", "", label)) == key
