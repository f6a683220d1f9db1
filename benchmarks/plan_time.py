"""How long ``attnlab repro`` plans before a stage starts, now against a baseline revision.

Serves the fan-out of the whole catalogue on a fresh clone of the record. Before its first
stage, ``attnlab repro`` reads DVC's project twice: once to find the absent inputs and plan
them (the *first* plan, on a clone with no data), and once more after the inputs ran (the
*full* plan of every stage, ``allow_missing`` as by default). Both are timed here in two
fresh clones of this checkout: one as cloned, one with its inputs rebuilt by ``dvc repro
tokenize winograd-data``. Each plan runs in a fresh interpreter with this checkout's
``src/`` and with the baseline revision's (``git archive``), alternating across repeats so
a shared machine slows both alike; the stages' own code is the clone's either way, so both
plan the same project. Figures are medians of wall seconds and of the per-repeat ratios;
both codes' plans are checked to hold the same stages and waits.

    python benchmarks/plan_time.py --repeats 3 --baseline 719b071
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from fanout_pipeline import BIN, timed_run

ROOT = Path(__file__).resolve().parents[1]
# One plan in a fresh interpreter: prints its seconds and the plan (stages and waits).
PLAN = """
import json, sys, time
from pathlib import Path
root, phase = Path(sys.argv[1]), sys.argv[2]
began = time.perf_counter()
from attnlab.fanout import phases
from attnlab.fanout.plan import read_plan
if phase == "full":
    plans = [read_plan(root, (), allow_missing=True)]
elif hasattr(phases, "first_plan"):
    plans = [plan for plan in phases.first_plan(root, (), True) if plan is not None]
else:  # a revision before first_plan: its repro() asked for the inputs, then planned them
    absent = phases.inputs_of(root, ())
    plans = [read_plan(root, absent) if absent else read_plan(root, (), allow_missing=True)]
seconds = time.perf_counter() - began
waits = [{name: sorted(plan.needs[name]) for name in plan.order} for plan in plans if plan.order]
print(json.dumps({"seconds": seconds, "waits": waits}))
"""
ROW = "{:<34} {:>7} {:>10} {:>7}"


def plan_once(src: Path, project: Path, phase: str) -> dict:
    """Seconds and plan of one ``phase`` (``first`` or ``full``) with the code in ``src``."""
    path = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "DVC_NO_ANALYTICS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PLAN, str(project), phase],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"planning with {src} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def c_parser() -> bool:
    """Whether ruamel.yaml parses with its C extension here (DVC's YAML parses get faster)."""
    from ruamel.yaml.main import CParser

    return CParser is not None


def main() -> None:
    """Clone twice, plan both phases with both codes alternately, print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="719b071", help="the git revision compared")
    parser.add_argument("--repeats", type=int, default=3, help="plans of each code per phase")
    args = parser.parse_args()
    env = {**os.environ, "WANDB_MODE": "disabled", "DVC_NO_ANALYTICS": "1"}
    with tempfile.TemporaryDirectory(prefix="attnlab-plan-bench-") as tmp:
        codes = {"now": ROOT / "src", "baseline": Path(tmp) / "baseline" / "src"}
        codes["baseline"].parent.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.baseline, "src"], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(codes["baseline"].parent)], input=archive.stdout)
        projects = {phase: Path(tmp) / phase for phase in ("first", "full")}
        for project in projects.values():
            subprocess.run(["git", "clone", "-q", str(ROOT), str(project)], check=True)
        inputs_env = {**env, "PYTHONPATH": str(projects["full"] / "src")}
        timed_run(
            [str(BIN / "dvc"), "repro", "tokenize", "winograd-data"], projects["full"], inputs_env
        )
        seconds: dict[tuple[str, str], list[float]] = {}
        for phase, project in projects.items():
            plans = {}
            for repeat in range(args.repeats):
                order = list(codes) if repeat % 2 == 0 else list(reversed(codes))
                for code in order:
                    result = plan_once(codes[code], project, phase)
                    seconds.setdefault((phase, code), []).append(result["seconds"])
                    plans[code] = result["waits"]
            if plans["now"] != plans["baseline"]:
                raise SystemExit(f"the {phase} plans differ between the two codes")
    print(
        f"attnlab repro's planning, {args.repeats} runs each, {os.cpu_count()} cores, "
        f"ruamel.yaml C parser: {'yes' if c_parser() else 'no'}"
    )
    print(ROW.format("phase", "now s", "baseline s", "ratio"))
    for phase, what in (
        ("first", "first plan (clone, no data)"),
        ("full", "full plan (inputs built)"),
    ):
        now, before = seconds[phase, "now"], seconds[phase, "baseline"]
        ratio = statistics.median(b / a for a, b in zip(now, before, strict=True))
        print(
            ROW.format(
                what,
                f"{statistics.median(now):.1f}",
                f"{statistics.median(before):.1f}",
                f"{ratio:.2f}",
            )
        )
    print(f"medians; ratio = baseline ({args.baseline}) / now")


if __name__ == "__main__":
    main()
