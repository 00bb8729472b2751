"""The scheduler configurations tests run under, written once: the tiers of Volcano's Helm chart
(installer/helm/chart/volcano/config/volcano-scheduler.conf), with the actions each test chooses."""

HELM_TIERS = """
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""


def helm_conf(actions: str) -> str:
    """A volcano-scheduler.conf with the Helm chart's tiers and these actions."""
    return f'actions: "{actions}"\ntiers:{HELM_TIERS}'
