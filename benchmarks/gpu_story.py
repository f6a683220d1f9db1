"""The whole catalogue retrained on one GPU machine, in one call, with its figures.

Serves the story's full run (every variant under every seed, the sweeps and the Winograd
task) on an accelerator. From a copy of this repository, on a machine that may lack DVC,
W&B, Optuna and pydantic and cannot reach the internet, it:

1. installs the carried wheels (``--wheels``, default ``.whl/``) into a folder of its work
   directory and puts it on ``PYTHONPATH``, after ``src/`` (attnlab runs from the copy);
2. copies the repository's files (what git would track: ``.gitignore`` applies) into a
   scratch git repository, without ``dvc.lock`` and the outputs it records, so every stage
   runs and the results are this run's alone;
3. sets ``seeds``, ``budget.scale`` and ``trainer.accelerator`` (and any ``--set``) as
   ``attnlab repro -S`` would, and commits them;
4. runs ``attnlab repro --retrain`` over the whole catalogue (or ``--target`` stages),
   sampling the GPUs' utilisation with ``nvidia-smi`` meanwhile;
5. prints the figures (``gpu_story_figures``): per trained group, steps, tokens/s, TFLOP/s
   by 6·N·D and wall seconds; the total training FLOP, the aggregate TFLOP/s over the
   fan-out's wall and its fraction of the peak; the mean GPU utilisation;
6. leaves one tarball (``$OUT/gpu_story.tar.gz``, else ``./gpu_story.tar.gz``) holding
   ``dvc.lock``, the params files, ``reports/metrics``, ``reports/curves``,
   ``reports/sweeps``, the sweeps' journals (``data/sweeps``), the fan-out's logs and
   ``summary.json``.

With ``--time-limit DURATION`` (``10m``, ``2h``, seconds) it advances the record instead,
in whatever a lend of that length fits: the scratch repository keeps ``dvc.lock`` and the
record's files in git, and ``attnlab repro --time-limit`` runs only what is stale and
fits (a training with its evaluation, a sweep trial by trial). Back in a checkout of the
same commit, one command takes every stage it recorded that is current there::

    attnlab merge-record gpu_story.tar.gz
    git add dvc.lock reports data/sweeps && git commit -m "the record, one GPU lend further"

The peak is float32's (the pipeline trains without TF32): 67 TFLOP/s per H200 unless
``--peak-tflops`` says otherwise; on a CPU, one thread's measured float32 matrix product
(``attnlab.fanout.forecast.calibrate``) times the cores. The wheels are built where pip
reaches an index, from the project's pins (``gpu_story_wheels``)::

    echo /.whl/ >> .git/info/exclude
    eval "$(python benchmarks/gpu_story.py --print-wheel-command)"

and on the GPU machine, with the corpus copied to ``shared/data/tinyshakespeare/input.txt``
(or named by ``--corpus`` or ``ATTNLAB_CORPUS_MIRROR``)::

    PYTHONUNBUFFERED=1 python3 benchmarks/gpu_story.py --jobs 10 --per-device 10

``--dry-run`` is the same path on the CPU at a tiny budget (``budget.scale`` 0.002, the
first seed, no GPU, W&B offline), for a test; ``--target`` restricts it to a few stages.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import yaml
from gpu_story_figures import gpu_samples, print_summary, recorded_runs, summary
from gpu_story_wheels import wheel_command

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path("shared/data/tinyshakespeare/input.txt")
H200_FP32_TFLOPS = 67.0
DRY_RUN_SCALE = 0.002
PARAMS_FILES = (
    "params.yaml",
    "seeds.yaml",
    "probes.yaml",
    "winograd.yaml",
    "sweeps.yaml",
    "runtime.yaml",
)
PACKED = (
    "dvc.lock",
    *PARAMS_FILES,
    "reports/metrics",
    "reports/curves",
    "reports/sweeps",
    "data/sweeps",
)
FAN_OUT_LOGS = Path(".dvc/tmp/attnlab-repro")
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "gpu story",
    "GIT_AUTHOR_EMAIL": "gpu-story@attnlab.invalid",
    "GIT_COMMITTER_NAME": "gpu story",
    "GIT_COMMITTER_EMAIL": "gpu-story@attnlab.invalid",
}


def parse_args() -> argparse.Namespace:
    """The command line; ``--dry-run`` fills the defaults of a CPU pass at a tiny budget."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", help="default: seeds.yaml's")
    parser.add_argument("--budget-scale", type=float, help="budget.scale (default 1.0)")
    parser.add_argument("--accelerator", choices=["auto", "gpu", "cpu"], help="default auto")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another override, as attnlab repro -S takes it",
    )
    parser.add_argument("--target", action="append", default=[], help="default: every stage")
    parser.add_argument(
        "--time-limit",
        help="advance the record in this much time (attnlab repro --time-limit), from the "
        "committed dvc.lock, instead of retraining everything",
    )
    parser.add_argument("--jobs", type=int, help="attnlab repro --jobs")
    parser.add_argument("--per-device", type=int, help="attnlab repro --per-device")
    parser.add_argument(
        "--repro-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="passed to attnlab repro as is (--repro-arg=--flag)",
    )
    parser.add_argument("--wheels", type=Path, default=ROOT / ".whl")
    parser.add_argument("--corpus", type=Path, help="tiny Shakespeare's input.txt")
    parser.add_argument("--workdir", type=Path, help="an empty folder (default: a new one)")
    parser.add_argument("--out", type=Path, help="the tarball")
    parser.add_argument("--peak-tflops", type=float, help="float32 peak of all devices")
    parser.add_argument("--dry-run", action="store_true", help="the CPU pass, tiny budget")
    parser.add_argument("--print-wheel-command", action="store_true")
    args = parser.parse_args()
    scale, accelerator = (DRY_RUN_SCALE, "cpu") if args.dry_run else (1.0, "auto")
    args.budget_scale = args.budget_scale if args.budget_scale is not None else scale
    args.accelerator = args.accelerator or accelerator
    out = Path(os.environ["OUT"]) if os.environ.get("OUT") else Path.cwd()
    args.out = args.out or out / "gpu_story.tar.gz"
    return args


def install_wheels(wheels: Path, site: Path) -> None:
    """Install every wheel of ``wheels`` into ``site``, as they are (no index, no deps)."""
    found = sorted(wheels.glob("*.whl"))
    if not found:
        print(f"no wheels in {wheels}: the installed packages are used")
        return
    print(f"installing {len(found)} wheels from {wheels}")
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
    command += ["--no-compile", "--target", str(site), *map(str, found)]
    subprocess.run(command, check=True)


def scratch_project(source: Path, into: Path, skip: list[Path], record: bool) -> Path:
    """A new git repository of ``source``'s files, without ``dvc.lock`` and its outputs.

    With ``record`` (a run that advances the record) they stay.
    """
    into.mkdir(parents=True)
    git(into, "init", "-q")
    excluded = ["--exclude=/.whl/", "--exclude=/shared/"]
    excluded += [f"--exclude=/{p.relative_to(source)}" for p in skip if p.is_relative_to(source)]
    listed = git(
        into,
        f"--work-tree={source}",
        "ls-files",
        "--others",
        "--exclude-standard",
        "-z",
        *excluded,
    )
    lock = source / "dvc.lock"
    recorded = _lock_outputs(lock) if lock.is_file() and not record else []
    for name in filter(None, listed.split("\0")):
        if name == "dvc.lock" and not record:
            continue
        if any(name == p or name.startswith(f"{p}/") for p in recorded):
            continue
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, into / name)
    git(into, "add", "-A")
    git(into, "commit", "-qm", "the record" if record else "the repository, without dvc.lock")
    return into


def _lock_outputs(lock: Path) -> list[str]:
    stages = (yaml.safe_load(lock.read_text()) or {}).get("stages", {})
    return [out["path"].rstrip("/") for entry in stages.values() for out in entry.get("outs", [])]


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` (a scratch repository's identity set); its output."""
    env = {**os.environ, **GIT_IDENTITY}
    done = subprocess.run(
        ["git", f"--git-dir={root / '.git'}", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def overrides(args: argparse.Namespace, root: Path) -> list[str]:
    """The ``-S`` overrides of this run."""
    listed = yaml.safe_load((root / "seeds.yaml").read_text())
    seeds = args.seeds or listed["seeds"]
    if args.dry_run:
        seeds = seeds[:1]
    # extra_seeds adds seeds to a few rows; those the run trains everywhere leave it, and
    # a dry run adds none (an extra seed that is also in seeds is refused).
    extra = {
        key: [] if args.dry_run else [s for s in listed["extra_seeds"][key] if s not in seeds]
        for key in ("seeds", "winograd_seeds")
    }
    changes = [
        f"seeds.yaml:seeds=[{','.join(map(str, seeds))}]",
        *(
            f"seeds.yaml:extra_seeds.{key}=[{','.join(map(str, kept))}]"
            for key, kept in extra.items()
        ),
        f"budget.scale={args.budget_scale}",
        f"trainer.accelerator={args.accelerator}",
    ]
    if args.dry_run:  # the stages that pick a device themselves stay on the CPU too
        changes += ["evaluate.device=cpu", "probes.yaml:cost.device=cpu"]
    return changes + args.set


def find_corpus(args: argparse.Namespace) -> Path | None:
    """The corpus: ``--corpus``, ``ATTNLAB_CORPUS_MIRROR``, or ``shared/`` in or beside ROOT."""
    if args.corpus:
        return args.corpus.resolve()
    if os.environ.get("ATTNLAB_CORPUS_MIRROR"):
        return Path(os.environ["ATTNLAB_CORPUS_MIRROR"].removeprefix("file://"))
    return next((p for p in (ROOT / CORPUS, ROOT.parent / CORPUS) if p.is_file()), None)


def stage_environment(work: Path, root: Path, site: Path, corpus: Path | None, dry: bool) -> dict:
    """What every stage sees: this Python as ``python``, the copy's attnlab, the wheels."""
    bin_dir = work / "bin"
    bin_dir.mkdir()
    for name in ("python", "python3"):  # a script, not a link: a link loses a venv's packages
        wrapper = bin_dir / name
        wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        wrapper.chmod(0o755)
    paths = [str(root / "src"), str(site), os.environ.get("PYTHONPATH", "")]
    env = {
        **os.environ,
        **GIT_IDENTITY,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(filter(None, paths)),
        "ATTNLAB_RUN_ROOT": str(work / "runs"),
        "DVC_NO_ANALYTICS": "1",
    }
    env.setdefault("WANDB_MODE", "offline")
    if corpus is not None:
        env["ATTNLAB_CORPUS_MIRROR"] = str(corpus)
    if dry:
        env["CUDA_VISIBLE_DEVICES"] = ""  # the fan-out places no stage on a GPU
    return env


def run_fan_out(args: argparse.Namespace, root: Path, env: dict, log: Path) -> tuple[int, float]:
    """``attnlab repro --retrain`` (or ``--time-limit``); exit status and wall seconds.

    Its lines are shown and logged.
    """
    command = [sys.executable, "-c", "from attnlab.cli import main; main()", "repro"]
    command += ["--time-limit", args.time_limit] if args.time_limit else ["--retrain"]
    if args.jobs:
        command += ["--jobs", str(args.jobs)]
    if args.per_device:
        command += ["--per-device", str(args.per_device)]
    command += [*args.repro_arg, *args.target]
    print("$ attnlab " + " ".join(command[3:]), flush=True)
    began = time.perf_counter()
    with log.open("w") as lines:
        child = subprocess.Popen(
            command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for line in child.stdout or []:
            print(line, end="", flush=True)
            lines.write(line)
    return child.wait(), time.perf_counter() - began


def start_sampler(devices: list[str], samples: Path) -> tuple[subprocess.Popen | None, str]:
    """``nvidia-smi`` writing each GPU's utilisation and memory every 500 ms, or why not."""
    if not devices:
        return None, "no GPU: the run is on the CPU"
    if shutil.which("nvidia-smi") is None:
        return None, "nvidia-smi not found"
    query = "--query-gpu=utilization.gpu,memory.used"
    command = ["nvidia-smi", query, "--format=csv,noheader,nounits", "-lms", "500"]
    command += ["-i", ",".join(devices)]
    return subprocess.Popen(command, stdout=samples.open("w"), stderr=subprocess.DEVNULL), ""


def peak(args: argparse.Namespace, devices: list[str]) -> dict:
    """The float32 peak the aggregate rate is compared with, and what it is."""
    if args.peak_tflops:
        return {"tflops": args.peak_tflops, "basis": "--peak-tflops"}
    if devices:
        basis = f"{H200_FP32_TFLOPS:g} TFLOP/s float32 per H200 x {len(devices)} GPU(s)"
        return {"tflops": H200_FP32_TFLOPS * len(devices), "basis": basis}
    from attnlab.fanout.forecast import calibrate
    from attnlab.fanout.resources import usable_cores

    one, cores = calibrate() / 1000, usable_cores()
    basis = f"measured: one thread's float32 matrix product {one:.3f} TFLOP/s x {cores} cores"
    return {"tflops": one * cores, "basis": basis}


def pack(root: Path, extra: list[Path], tarball: Path) -> None:
    """One tarball of the run's record, its logs and its figures, under ``gpu_story/``."""
    tarball.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball, "w:gz") as tar:
        for name in (*PACKED, *map(str, sorted((root / FAN_OUT_LOGS).glob("*.log")))):
            path = root / name
            if path.exists():
                tar.add(path, arcname=f"gpu_story/{path.relative_to(root)}")
        for path in extra:
            if path.exists():
                tar.add(path, arcname=f"gpu_story/{path.name}")
    print(f"tarball: {tarball} ({tarball.stat().st_size / 2**20:.2f} MiB)")


def main() -> None:
    """Set up, run the catalogue, print the figures, pack the record."""
    began = time.perf_counter()
    args = parse_args()
    if args.print_wheel_command:
        print(wheel_command(ROOT))
        return
    if shutil.which("git") is None:
        raise SystemExit("git not found: DVC runs the pipeline inside a git repository")
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="gpu_story-"))).resolve()
    if work.exists() and any(work.iterdir()):
        raise SystemExit(f"{work} is not empty: give an empty or new --workdir")
    site = work / "site"
    install_wheels(args.wheels, site)
    skip = [work, args.out.resolve()]
    root = scratch_project(ROOT, work / "project", skip, record=bool(args.time_limit))
    sys.path[:0] = [str(root / "src"), str(site)]  # this process reads params as attnlab does
    from attnlab.fanout.experiment import apply_params
    from attnlab.fanout.resources import driver_devices, visible_devices

    changes = overrides(args, root)
    apply_params(root, changes)
    git(root, "commit", "-qam", f"gpu story: {' '.join(changes)}")
    corpus = find_corpus(args)
    print(f"project: {root}\nparams: {' '.join(changes)}\ncorpus: {corpus or 'downloaded'}")
    env = stage_environment(work, root, site, corpus, args.dry_run)
    devices = visible_devices(env, driver_devices())
    sampler, skipped = start_sampler(devices, work / "gpu_samples.csv")
    try:
        status, wall = run_fan_out(args, root, env, work / "repro.log")
    finally:
        if sampler is not None:
            sampler.terminate()
            sampler.wait()
    gpu = gpu_samples(work / "gpu_samples.csv") if sampler else {"skipped": skipped}
    figures = summary(recorded_runs(root), wall, peak(args, devices), gpu)
    figures.update(
        wall_s_total=time.perf_counter() - began,
        exit_status=status,
        overrides=changes,
        devices=devices,
        targets=args.target or "the whole catalogue",
    )
    print_summary(figures, sys.stdout)
    print(f"wall time total: {figures['wall_s_total']:.1f} s (fan-out exit status {status})")
    (work / "summary.json").write_text(json.dumps(figures, indent=2) + "\n")
    pack(root, [work / "summary.json", work / "repro.log", work / "gpu_samples.csv"], args.out)
    sys.exit(status)


if __name__ == "__main__":
    main()
