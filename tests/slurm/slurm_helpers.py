"""What the SLURM tests share: the tiny budget, and the launcher's command."""

import sys
from pathlib import Path


def shrink(params: dict) -> None:
    """The fan-out tests' fastest budget, and jobs that fit the test node (2 CPUs, 4 GiB)."""
    params["budget"]["scale"] = 0.002
    params["model"]["d_model"] = 32
    params["train"]["batch_size"] = 8
    params["runtime"]["slurm"].update(cpus_per_job=1, mem_per_job="1G")


def attnlab_command() -> list[str]:
    """``attnlab repro`` of this environment."""
    return [str(Path(sys.executable).parent / "attnlab"), "repro"]
