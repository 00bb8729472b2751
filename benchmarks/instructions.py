"""What a hop costs in machine instructions: a figure to compare two versions of the code with.

Wall and CPU time of the same code vary by a factor of two on a shared VM from one minute to the next, so a
change worth 5 % cannot be seen with them. Instructions executed (valgrind's callgrind counts them, `Ir`) do not
depend on the CPU's speed. They still depend on timing a little: under valgrind a hop lasts about 50 times longer
while the pods' processes do not, so the control plane's timers (coalesced status writes, background lanes, idle
collections) fire more often per hop than natively, and more so on a loaded machine: the same code measured an
hour apart can differ by 20 %. Checkouts measured side by side (`--trees`: their runs go in parallel, one per
tree, under the same load) differ by under 1 % when their code is the same: compare only within one run.

Two measures, each the difference of two runs so that start-up cancels out:
  jobs   the in-process control plane (benchmarks/hop_costs.py's runtime, no CLI): instructions a job of
         a chain and of a fan, (Ir(N) - Ir(n)) / (N - n)
  run    the whole `vcctl run` of the peer benchmark's flows (YAML, validation, output, exit included):
         instructions a hop, (Ir(chain of N) - Ir(one job)) / (N - 1); output and idle work follow timing, so
         this one varies more (about 10 %)

    python benchmarks/instructions.py                        # this checkout, both measures
    python benchmarks/instructions.py --trees /tmp/old,.     # two checkouts side by side (the first is the base)
    python benchmarks/instructions.py jobs --shapes chain --profile-dir /tmp/cg   # keep callgrind files

Needs valgrind (`apt install valgrind`). Runs under valgrind are about 50 times slower than natively: the
defaults take a few minutes. Each checkout is byte-compiled first (a module compiled inside a measured run would
count). Never asserts anything about the figures.
"""
from __future__ import annotations

import argparse
import compileall
import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))
import hop_costs  # noqa: E402

_COLLECTED = re.compile(r"Collected : (\d+)")
_IN_PROCESS = ("import sys; sys.path[:0] = [sys.argv[1] + '/benchmarks', sys.argv[1]]; import hop_costs; "
               "hop_costs.measure(sys.argv[2], int(sys.argv[3]))")
_VCCTL = "import sys; from vclite.cli.main import main; sys.argv[0] = 'vcctl'; main()"


class Failed(Exception):
    """A measured run failed: its output says why."""


def count(argv: list[str], tree: pathlib.Path, cwd: str, profile: pathlib.Path | None = None) -> int:
    """Instructions `argv` (a Python command line, run with `tree` first on sys.path) executes, child
    processes (the pods' programs) not counted."""
    out = str(profile) if profile else os.devnull
    env = {**os.environ, "PYTHONPATH": str(tree), "OPENBLAS_NUM_THREADS": "1"}   # (no BLAS thread spinning)
    proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, *argv],
                          capture_output=True, text=True, cwd=cwd, env=env)
    found = _COLLECTED.search(proc.stderr)
    if proc.returncode != 0 or not found:
        raise Failed(f"{' '.join(argv[:4])} in {tree} (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    return int(found.group(1))


def per_job(tree: pathlib.Path, shape: str, small: int, big: int, profile_dir: pathlib.Path | None) -> float:
    """Instructions a job of `shape` costs the in-process control plane of `tree`."""
    def run(n: int, profile: pathlib.Path | None = None) -> int:
        return count(["-c", _IN_PROCESS, str(tree), shape, str(n)], tree, str(tree), profile)
    profile = profile_dir / f"{tree.name or 'root'}-{shape}-{big}.callgrind" if profile_dir else None
    return (run(big, profile) - run(small)) / (big - small)   # (a fan of n has n + 2 jobs: the same difference)


def per_hop(tree: pathlib.Path, big: int, profile_dir: pathlib.Path | None) -> float:
    """Instructions a hop of a chain costs a whole `vcctl run` of `tree` (piped output)."""
    with tempfile.TemporaryDirectory(prefix="instructions-") as work:
        one, chain = pathlib.Path(work, "one.yaml"), pathlib.Path(work, f"chain{big}.yaml")
        one.write_text(hop_costs.flow_yaml("chain", 1))
        chain.write_text(hop_costs.flow_yaml("chain", big))
        profile = profile_dir / f"{tree.name or 'root'}-run-chain-{big}.callgrind" if profile_dir else None
        base = count(["-c", _VCCTL, "run", str(one)], tree, work)
        return (count(["-c", _VCCTL, "run", str(chain)], tree, work, profile) - base) / (big - 1)


def at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    return parse


def trees(text: str) -> list[pathlib.Path]:
    paths = [pathlib.Path(p).resolve() for p in text.split(",") if p]
    for path in paths:
        if not (path / "vclite" / "__init__.py").is_file() or not (path / "benchmarks" / "hop_costs.py").is_file():
            raise argparse.ArgumentTypeError(f"{path}: not a vclite checkout (no vclite/ or benchmarks/hop_costs.py)")
    if not paths:
        raise argparse.ArgumentTypeError("no checkout given")
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("measures", nargs="*", metavar="jobs|run", help="what to measure (default: both)")
    ap.add_argument("--trees", type=trees, default=[ROOT], help="comma-separated checkouts (default: this one)")
    ap.add_argument("--shapes", default="chain,fan", help="for `jobs`: chain, fan or both (default: chain,fan)")
    ap.add_argument("--small", type=at_least(1), default=5, help="for `jobs`: the smaller flow's jobs (default 5)")
    ap.add_argument("--big", type=at_least(2), default=35, help="the bigger flow's jobs (default 35; `run`: the chain)")
    ap.add_argument("--profile-dir", type=pathlib.Path, help="keep the bigger runs' callgrind files here "
                    "(read them with callgrind_annotate)")
    a = ap.parse_args(argv)
    unknown = [m for m in a.measures if m not in ("jobs", "run")]
    if unknown:
        ap.error(f"unknown measure {unknown[0]!r}: jobs or run")
    shapes = [s for s in a.shapes.split(",") if s]
    if not shapes or any(s not in ("chain", "fan") for s in shapes):
        ap.error(f"--shapes: chain, fan or chain,fan, got {a.shapes!r}")
    if a.big <= a.small:
        ap.error(f"--big ({a.big}) must be more than --small ({a.small})")
    if shutil.which("valgrind") is None:
        print("instructions.py: valgrind is not installed (apt install valgrind); it counts the instructions",
              file=sys.stderr)
        return 2
    if a.profile_dir:
        a.profile_dir.mkdir(parents=True, exist_ok=True)
    measures = a.measures or ["jobs", "run"]
    rows = [(f"jobs: a {shape} job (in process)", lambda t, s=shape: per_job(t, s, a.small, a.big, a.profile_dir))
            for shape in shapes if "jobs" in measures]
    if "run" in measures:
        rows.append((f"run: a hop of a {a.big}-job chain (vcctl run)", lambda t: per_hop(t, a.big, a.profile_dir)))
    for tree in a.trees:
        for part in ("vclite", "benchmarks"):
            compileall.compile_dir(str(tree / part), quiet=1)
    print(f"M instructions (valgrind Ir), {', '.join(str(t) for t in a.trees)}", flush=True)
    for label, measure in rows:
        with concurrent.futures.ThreadPoolExecutor(len(a.trees)) as pool:   # (side by side: the same load)
            runs = [pool.submit(measure, tree) for tree in a.trees]
            try:
                figures = [run.result() for run in runs]
            except Failed as exc:
                print(f"instructions.py: {exc}", file=sys.stderr)
                return 1
        cells = [f"{figures[0] / 1e6:.2f}"] + [f"{f / 1e6:.2f} ({(f / figures[0] - 1) * 100:+.1f} %)"
                                                for f in figures[1:]]
        print(f"  {label:42s} {'   '.join(cells)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
