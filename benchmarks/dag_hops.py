"""Per-hop latency of dependent jobs: vclite against make and Luigi, in the same run.

Uses ../shared/bench/peer-dag (the team's peer benchmark: a 50-job chain and a 202-job fan of
`true` jobs, parallelism 2) when it is present beside the checkout. The peers: GNU make (-j2), a
Python ThreadPoolExecutor baseline (`python`), Snakemake, Luigi and Prefect; each Python runner gets
its own venv under --venvs on first use, at the versions the peer benchmark's setup.sh pins. Prints
each tool's median wall time and the derived per-hop cost of the chain ((chain − one) / 49), which
removes start-up time. Never asserts anything.

    python benchmarks/dag_hops.py [--runs 3] [--venvs DIR] [--tools vclite,make,python,snakemake,luigi,prefect]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PEER = ROOT.parent / "shared" / "bench" / "peer-dag"
# the Python runners' venvs: what setup.sh installs (its pinned versions; Prefect 3.8.8's server breaks with
# fastapi >= 0.155)
PEER_PACKAGES = {"snakemake": ["snakemake==9.27.1"], "luigi": ["luigi==3.8.1"],
                 "prefect": ["prefect==3.8.8", "fastapi<0.155"]}
TOOLS = ("vclite", "make", "python", "snakemake", "luigi", "prefect")


def ensure_venv(venvs: pathlib.Path, tool: str) -> None:
    """Make `tool`'s venv under `venvs` if it is not there yet (a PyPI install: a minute or two)."""
    if tool not in PEER_PACKAGES or (venvs / tool / "bin" / "python").exists():
        return
    print(f"setting up {tool} in {venvs / tool} (first use) ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venvs / tool)], check=True)
    subprocess.run([str(venvs / tool / "bin" / "pip"), "install", "-q", *PEER_PACKAGES[tool]], check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--venvs", default=str(ROOT / ".bench-venvs"))
    ap.add_argument("--tools", default="vclite,make,luigi",
                    help=f"comma list of: {', '.join(TOOLS)} (default: %(default)s)")
    a = ap.parse_args()
    tools = [t for t in a.tools.split(",") if t.strip()]
    unknown = [t for t in tools if t not in TOOLS]
    if not tools:
        ap.error(f"--tools: name at least one of {', '.join(TOOLS)}")
    if unknown:
        ap.error(f"--tools: unknown tool(s) {', '.join(unknown)}; known: {', '.join(TOOLS)}")
    if not PEER.is_dir():
        sys.exit(f"peer benchmark not found at {PEER}")
    venvs = pathlib.Path(a.venvs)
    venvs.mkdir(parents=True, exist_ok=True)   # (the results file goes there, whichever tools run)
    for tool in tools:
        ensure_venv(venvs, tool)
    vcctl = str(pathlib.Path(sys.executable).with_name("vcctl"))
    out = venvs / "dag-results.json"
    env = dict(os.environ, VCCTL=vcctl)
    subprocess.run([sys.executable, str(PEER / "bench.py"), "--venvs", str(venvs), "--runs", str(a.runs),
                    "--tools", a.tools, "--dags", "one,chain,fan", "--json", str(out)], check=True, env=env)
    res = json.loads(out.read_text())["results"]
    med = {(r["tool"], r["dag"]): r["median_s"] for r in res}
    print("\n| tool | start-up (1 job) s | 50-job chain s | per hop ms | 202-job fan s |\n|---|---|---|---|---|")
    for tool in tools:
        one, chain, fan = med.get((tool, "one")), med.get((tool, "chain")), med.get((tool, "fan"))
        hop = (chain - one) / 49 * 1000 if one is not None and chain is not None else float("nan")
        print(f"| {tool} | {one} | {chain} | {hop:.1f} | {fan} |")


if __name__ == "__main__":
    main()
