"""A distributed job's pods reach each other by the DNS names Volcano's plugins give them (executor/localnames.py):
locally each name reaches its process as 127.0.0.1, while the pod objects keep Volcano's names."""
import json
import socket


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


MASTER = """import os, socket
s = socket.create_server(("127.0.0.1", int(os.environ["MASTER_PORT"])))
for _ in range(2):
    c, _ = s.accept()
    print(c.recv(200).decode(), flush=True)
"""
WORKER = """import os, socket, time
for _ in range(300):
    try:
        c = socket.create_connection((os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])))
        break
    except ConnectionRefusedError:
        time.sleep(0.05)
c.sendall(("rank " + os.environ["RANK"]).encode())
print(open("etc/volcano/worker.host").read().split())
"""


def job(port):
    def task(name, replicas, script, policy):
        return f"""
    - name: {name}
      replicas: {replicas}
      template:
        spec:
          restartPolicy: {policy}
          containers:
            - name: main
              image: python
              command: [python3, -c, {json.dumps(script)}]"""
    return f"""apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: ddp
spec:
  minAvailable: 3
  schedulerName: volcano
  plugins:
    pytorch: ["--master=master", "--worker=worker", "--port={port}"]
  tasks:{task("master", 1, MASTER, "Never")}{task("worker", 2, WORKER, "Never")}
"""


def test_workers_reach_their_master_by_its_dns_name(vcctl, write, tmp_path):
    r = vcctl("run", "--quiet", "-o", "json", "--workdir", tmp_path / "wd", write("ddp.yaml", job(free_port())),
              timeout=60)
    assert r.code == 0, r
    master_log = (tmp_path / "wd" / "default" / "ddp-master-0" / "logs" / "main.log").read_text()
    assert sorted(master_log.split("\n")[:2]) == ["rank 1", "rank 2"], master_log
    worker_log = (tmp_path / "wd" / "default" / "ddp-worker-0" / "logs" / "main.log").read_text()
    assert worker_log.strip() == "['127.0.0.1', '127.0.0.1']", worker_log   # (the svc plugin's hosts file)
    pods = {p["metadata"]["name"]: p for p in r.json()["items"] if p["kind"] == "Pod"}
    env = {e["name"]: e.get("value") for e in pods["ddp-worker-1"]["spec"]["containers"][0]["env"]}
    assert env["MASTER_ADDR"] == "ddp-master-0.ddp", env   # the pod keeps Volcano's name
