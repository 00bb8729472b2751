"""Pods' DNS names as local processes reach them (executor/localnames.py): replaced whole, only for pods that exist."""
import pytest

from vclite.executor import localnames

PODS = {("default", "job"): {"job-master-0", "w-0", "w-1"}, ("other", "job"): {"w-0"}}


def hosts_of(namespace, subdomain):
    return PODS.get((namespace, subdomain), ())


@pytest.mark.parametrize("text, want", [
    ("job-master-0.job:23456", "127.0.0.1:23456"),                       # pytorch's MASTER_ADDR:port
    ("http://w-0.job:8080/metrics", "http://127.0.0.1:8080/metrics"),
    ("w-0.job,w-1.job", "127.0.0.1,127.0.0.1"),                          # svc's VC_<TASK>_HOSTS
    ("w-0.job\nw-1.job", "127.0.0.1\n127.0.0.1"),                        # svc's <task>.host file
    ('{"cluster": {"worker": ["w-0.job:2222"]}}', '{"cluster": {"worker": ["127.0.0.1:2222"]}}'),   # TF_CONFIG
    ("nc -z job-master-0.job 23456 || echo > /dev/tcp/job-master-0.job/23456",
     "nc -z 127.0.0.1 23456 || echo > /dev/tcp/127.0.0.1/23456"),        # pytorch's wait-for-master script
    ("w-0.job.default", "127.0.0.1"),
    ("w-0.job.default.svc", "127.0.0.1"),
    ("w-0.job.default.svc.cluster.local", "127.0.0.1"),
    ("w-0.job.default.svc.cluster.local.", "127.0.0.1"),                 # (absolute)
    ("W-0.Job", "127.0.0.1"),                                            # (DNS is case-insensitive)
    ("w-0.job.other", "127.0.0.1"),                                      # another namespace's pod
    ("w-1.job.other", "w-1.job.other"),                                  # ... that does not exist there
    ("w-2.job", "w-2.job"),                                              # no such pod
    ("w-0.jobs", "w-0.jobs"),                                            # another subdomain
    ("x.w-0.job", "x.w-0.job"),                                          # part of a longer name
    ("w-0.job.example.com", "w-0.job.example.com"),
    ("w-0.job_x", "w-0.job_x"),
    ("w-0.job.", "127.0.0.1."),                                          # (a sentence's full stop stays)
    ("10.0.0.1", "10.0.0.1"),
    ("no dots here", "no dots here"),
])
def test_localize(text, want):
    assert localnames.localize(text, "default", hosts_of) == want
    assert localnames.localize_bytes(text.encode(), "default", hosts_of) == want.encode()


def test_localize_bytes_leaves_what_is_not_text():
    data = b"\xff\xfe w-0.job"
    assert localnames.localize_bytes(data, "default", hosts_of) is data


@pytest.mark.parametrize("pod, host, domain", [
    ({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"subdomain": "Job"}}, "p", ("ns", "job")),
    ({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"hostname": "H", "subdomain": "j"}}, "h", ("ns", "j")),
    ({"metadata": {"name": "p"}, "spec": {}}, "p", None),
    ({"metadata": {"name": "p"}, "spec": {"subdomain": 3}}, "p", None),
    ({"metadata": {"name": "p"}, "spec": "not an object"}, "p", None),
])
def test_hostname_and_domain_of(pod, host, domain):
    assert localnames.hostname(pod) == host
    assert localnames.domain_of(pod) == domain
