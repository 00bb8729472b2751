"""Volcano's scheduler ConfigMap among the manifests: found by name and namespace, its configuration parsed,
each problem at the manifest's line where the faulty line of the configuration was written."""
import pytest

from vclite.api import yamlio
from vclite.cli import manifests, schedconfmap

CONF = """\
    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins:
      - name: priority
      - name: gangg
    - plugins:
      - name: drf
        arguments:
          foo: 1
"""


def configmap(name="volcano-scheduler-configmap", namespace="volcano-system", key="volcano-scheduler.conf",
              kind="ConfigMap", conf=CONF) -> str:
    return f"""\
apiVersion: v1
kind: {kind}
metadata:
  name: {name}
  namespace: {namespace}
data:
  {key}: |
{conf}"""


@pytest.mark.parametrize("text, found", [
    pytest.param(configmap(), True, id="it"),
    pytest.param(configmap(namespace="default"), False, id="another-namespace"),
    pytest.param(configmap(name="volcano-scheduler"), False, id="another-name"),
    pytest.param(configmap(key="scheduler.conf"), False, id="another-key"),
    pytest.param(configmap(kind="Secret"), False, id="another-kind"),
])
def test_found_by_kind_name_namespace_and_key(text, found):
    docs = yamlio.load_string(text, "cm.yaml")
    assert (schedconfmap.find(docs) is not None) is found


def test_a_good_configuration_is_parsed():
    good = CONF.replace("gangg", "gang").replace("        arguments:\n          foo: 1\n", "")
    conf, problems = schedconfmap.parse(schedconfmap.find(yamlio.load_string(configmap(conf=good), "cm.yaml")))
    assert problems == []
    assert conf.action_names == ("enqueue", "allocate", "backfill")
    assert [p.name for tier in conf.tiers for p in tier] == ["priority", "gang", "drf"]


def test_problems_are_at_the_lines_of_the_manifest():
    text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: volcano-system}\n---\n" + configmap()
    conf, problems = schedconfmap.parse(schedconfmap.find(yamlio.load_string(text, "cm.yaml")))
    assert conf is None
    assert [(line, message.split(" (")[0]) for line, message in problems] == [
        (16, 'unknown plugin "gangg"'),
        (20, 'plugin "drf": unknown argument "foo"'),
    ]


def test_validate_reports_them_with_the_configmap_and_field():
    docs, problems = manifests.load_and_validate([], read=(yamlio.load_string(configmap(), "cm.yaml"), []))
    assert [str(p).split(" (")[0] for p in problems] == [
        'cm.yaml:12: ConfigMap/volcano-scheduler-configmap: data[volcano-scheduler.conf]: unknown plugin "gangg"',
        'cm.yaml:16: ConfigMap/volcano-scheduler-configmap: data[volcano-scheduler.conf]: plugin "drf": '
        'unknown argument "foo"',
    ]


def test_a_yaml_error_in_the_configuration_is_located_too():
    conf, problems = schedconfmap.parse(schedconfmap.find(yamlio.load_string(
        configmap(conf='    actions: "enqueue"\n    tiers: [\n'), "cm.yaml")))
    assert conf is None and len(problems) == 1
    assert problems[0][0] in (8, 9), problems   # the conf's second or third line: where the YAML error is found
