"""Per-hop latency of dependent jobs: vclite against make and Luigi, in the same run.

Uses ../shared/bench/peer-dag (the team's peer benchmark: a 50-job chain and a 202-job fan of
`true` jobs, parallelism 2) when it is present beside the checkout; sets up a Luigi venv there on
first use. Prints each tool's median wall time and the derived per-hop cost of the chain
((chain − one) / 49), which removes start-up time. Never asserts anything.

    python benchmarks/dag_hops.py [--runs 3] [--venvs DIR]
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--venvs", default=str(ROOT / ".bench-venvs"))
    ap.add_argument("--tools", default="vclite,make,luigi")
    a = ap.parse_args()
    if not PEER.is_dir():
        sys.exit(f"peer benchmark not found at {PEER}")
    venvs = pathlib.Path(a.venvs)
    venvs.mkdir(parents=True, exist_ok=True)   # (the results file goes there, whichever tools run)
    if "luigi" in a.tools and not (venvs / "luigi" / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venvs / "luigi")], check=True)
        subprocess.run([str(venvs / "luigi" / "bin" / "pip"), "install", "-q", "luigi==3.8.1"], check=True)
    vcctl = str(pathlib.Path(sys.executable).with_name("vcctl"))
    out = venvs / "dag-results.json"
    env = dict(os.environ, VCCTL=vcctl)
    subprocess.run([sys.executable, str(PEER / "bench.py"), "--venvs", str(venvs), "--runs", str(a.runs),
                    "--tools", a.tools, "--dags", "one,chain,fan", "--json", str(out)], check=True, env=env)
    res = json.loads(out.read_text())["results"]
    med = {(r["tool"], r["dag"]): r["median_s"] for r in res}
    print("\n| tool | start-up (1 job) s | 50-job chain s | per hop ms | 202-job fan s |\n|---|---|---|---|---|")
    for tool in a.tools.split(","):
        one, chain, fan = med.get((tool, "one")), med.get((tool, "chain")), med.get((tool, "fan"))
        hop = (chain - one) / 49 * 1000 if one is not None and chain is not None else float("nan")
        print(f"| {tool} | {one} | {chain} | {hop:.1f} | {fan} |")


if __name__ == "__main__":
    main()
