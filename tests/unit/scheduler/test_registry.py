"""registry: tests' extra plugins (with_plugins) and the errors naming what is known."""
from __future__ import annotations

import pytest

from vclite.scheduler import conf, registry
from vclite.scheduler.framework import plugin


def _plugin(name: str) -> type:
    return type(name.title(), (), {"name": name, "Arguments": plugin.NoArguments,
                                   "__init__": lambda self, arguments: None})


@pytest.mark.parametrize("names, message", [
    pytest.param(["gang"], "plugin 'gang' is already registered", id="a built-in name"),
    pytest.param(["extra", "extra"], "plugin 'extra' is already registered", id="twice in one call"),
])
def test_with_plugins_refuses_a_duplicate_name(names, message):
    with pytest.raises(ValueError, match=message):
        registry.default_registry().with_plugins(*[_plugin(n) for n in names])


def test_with_plugins_twice_in_a_row_refuses_the_first_calls_names():
    reg = registry.default_registry().with_plugins(_plugin("extra"))
    with pytest.raises(ValueError, match="plugin 'extra' is already registered"):
        reg.with_plugins(_plugin("extra"))


def test_an_extra_plugin_is_known_and_listed_in_the_unknown_error():
    extra = _plugin("extra")
    reg = registry.default_registry().with_plugins(extra)
    assert reg.plugin("extra") is extra
    assert "extra" not in registry.default_registry().plugins   # (the default table is not changed)
    with pytest.raises(conf.ConfError) as err:
        conf.parse('actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n  - name: extr\n', "s.conf",
                   registry=reg)
    assert str(err.value.problems[0]).startswith('s.conf:5: unknown plugin "extr" (known: ')
    assert ", extra, " in str(err.value.problems[0])
