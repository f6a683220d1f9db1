"""A real single-node SLURM cluster on loopback: the scheduler of the fan-out's SLURM tests.

Debian's ``slurm-wlm`` and ``munge`` (``.ci/run`` installs them): ``munged`` on a private
socket with a key made for the test, ``slurmctld`` and ``slurmd`` as root in the
foreground on free ports of the loopback interface, one node ``localhost`` with 2 CPUs
(``select/cons_tres``, so two one-CPU jobs run side by side and a third waits), processes
tracked by their parentage (``proctrack/linuxproc``: no cgroups needed). Everything lives
under one folder; the clients find the cluster through ``SLURM_CONF``. A cluster that cannot
start fails the test; a machine without SLURM skips it (see ``conftest.py``).
"""

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel")


@dataclass(frozen=True)
class SlurmCluster:
    """A running cluster: the environment its clients need, and its folder.

    Attributes:
        env: ``SLURM_CONF`` (which names the munge socket too), for the clients.
        root: Its configuration, state, spool and logs.
    """

    env: dict[str, str]
    root: Path

    def squeue(self) -> list[str]:
        """The jobs the cluster still holds (pending, running or completing), one a line."""
        done = subprocess.run(
            ["squeue", "--noheader", "--format=%i %T %j"],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            check=True,
        )
        return [line for line in done.stdout.splitlines() if line.strip()]


def missing_binaries() -> list[str]:
    """The SLURM and munge programs this machine lacks (empty: a cluster can start)."""
    return [name for name in (*DAEMONS, *CLIENTS, "mungekey") if _which(name) is None]


def _which(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _config(root: Path, ctld_port: int, slurmd_port: int) -> str:
    return f"""\
ClusterName=attnlab
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root / "munge.socket"}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={root / "state"}
SlurmdSpoolDir={root / "spool"}
SlurmctldPidFile={root / "slurmctld.pid"}
SlurmdPidFile={root / "slurmd.pid"}
SlurmctldLogFile={root / "slurmctld.log"}
SlurmdLogFile={root / "slurmd.log"}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
KillWait=10
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=4096 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


def _wait(condition, what: str, logs: list[Path], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            said = "\n".join(f"{log}:\n{log.read_text()}" for log in logs if log.exists())
            raise RuntimeError(f"{what} within {timeout_s:.0f} s:\n{said}")
        time.sleep(0.2)


def _node_idle(env: dict[str, str]) -> bool:
    done = subprocess.run(
        ["sinfo", "--noheader", "--format=%T"], env=env, capture_output=True, text=True
    )
    return done.returncode == 0 and done.stdout.strip().startswith("idle")


@contextmanager
def slurm_cluster(root: Path) -> Iterator[SlurmCluster]:
    """Start munged, slurmctld and slurmd under ``root``; stop them (and any job) after."""
    root.mkdir(parents=True, exist_ok=True)
    for folder in ("state", "spool"):
        (root / folder).mkdir()
    key = root / "munge.key"
    subprocess.run(
        [_which("mungekey"), "--create", f"--keyfile={key}"], check=True, capture_output=True
    )
    key.chmod(0o400)
    conf = root / "slurm.conf"
    conf.write_text(_config(root, _free_port(), _free_port()))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    started: list[subprocess.Popen] = []
    logs = [root / "munged.log", root / "slurmctld.log", root / "slurmd.log"]
    try:
        started.append(
            subprocess.Popen(
                [
                    _which("munged"),
                    "--foreground",
                    "--force",
                    f"--socket={root / 'munge.socket'}",
                    f"--key-file={key}",
                    f"--pid-file={root / 'munged.pid'}",
                    f"--log-file={root / 'munged.log'}",
                    f"--seed-file={root / 'munged.seed'}",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
            )
        )
        _wait((root / "munge.socket").exists, "munged did not listen", logs)
        # -D: the foreground (our children, stopped below); -i: forget any previous state.
        for daemon in (["slurmctld", "-D", "-i"], ["slurmd", "-D"]):
            started.append(
                subprocess.Popen(
                    [_which(daemon[0]), *daemon[1:]],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.STDOUT,
                )
            )
        _wait(lambda: _node_idle(env), "the node did not come up idle", logs)
        yield SlurmCluster({"SLURM_CONF": str(conf)}, root)
    finally:
        subprocess.run(["scancel", "--user=root"], env=env, capture_output=True)
        for process in reversed(started):
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
