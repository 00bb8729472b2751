"""gates.enabled: Volcano's --controllers semantics (first item naming a controller decides, `*` for the
rest, empty = all), its refusal of a name given twice, and vclite's refusal of unknown names."""
import pytest

from vclite.runtime import gates

ALL = set(gates.KNOWN)

CASES = [
    # (flag values, enabled)
    ((), ALL),
    (("*",), ALL),
    (("*,-jobflow-controller,-jobtemplate-controller",), ALL - {"jobflow-controller", "jobtemplate-controller"}),
    (("*", "-jobflow-controller", "-jobtemplate-controller"), ALL - {"jobflow-controller", "jobtemplate-controller"}),
    (("jobflow-controller",), {"jobflow-controller"}),
    (("+jobflow-controller,+queue-controller",), {"jobflow-controller", "queue-controller"}),
    (("-job-controller",), set()),                        # no `*`: only what is named and enabled
    (("-job-controller,*",), ALL - {"job-controller"}),   # order of `*` does not matter
    (("pg-controller",), {"pg-controller"}),
    # Volcano's own examples (cmd/controller-manager/app/options.go, server_test.go) name its TTL controller
    (("+gc-controller,+job-controller,+jobflow-controller,+jobtemplate-controller,+pg-controller,+queue-controller",),
     ALL - {"cronjob-controller", "hyperNode-controller"}),
    (("-gc-controller", "+jobtemplate-controller", "+jobflow-controller"),
     {"jobtemplate-controller", "jobflow-controller"}),
    (("*,-gc-controller",), ALL - {"gc-controller"}),
    ((" * , -queue-controller ",), ALL - {"queue-controller"}),
]


@pytest.mark.parametrize("values, expected", CASES)
def test_enabled(values, expected):
    assert gates.enabled(values) == frozenset(expected)


@pytest.mark.parametrize("values, message", [
    (("jobflow-controller,-jobflow-controller",), "'jobflow-controller' is named twice"),
    (("+job-controller", "job-controller"), "'job-controller' is named twice"),
    (("*,-jobflow-controler",), "unknown controller 'jobflow-controler'; known: cronjob-controller, "
     "gc-controller, hyperNode-controller, job-controller"),
    (("scheduler",), "unknown controller 'scheduler'"),
])
def test_refused(values, message):
    with pytest.raises(gates.GateError, match=message):
        gates.enabled(values)


def test_component_names_map_volcano_names():
    assert gates.component_names({"pg-controller", "jobflow-controller"}) == {"podgroup-controller",
                                                                               "jobflow-controller"}
