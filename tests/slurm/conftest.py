"""The SLURM cluster of these tests, and a tokenized project whose fan-out submits to it."""

import os
from collections.abc import Iterator

import pytest
from cluster import SlurmCluster, missing_binaries, slurm_cluster
from slurm_helpers import shrink

REQUIRED = "ATTNLAB_REQUIRE_SLURM"


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """A single-node cluster for the session; without SLURM a skip, unless CI requires it."""
    missing = missing_binaries()
    why = None
    if missing:
        why = f"no SLURM here ({', '.join(missing)} missing): apt-get install slurm-wlm munge"
    elif os.geteuid() != 0:
        why = "slurmd runs jobs as their user and must start as root"
    if why is not None:
        if os.environ.get(REQUIRED):
            pytest.fail(f"{why} ({REQUIRED} is set)")
        pytest.skip(f"{why} ({REQUIRED}=1 fails instead)")
    with slurm_cluster(tmp_path_factory.mktemp("slurm")) as running:
        yield running


@pytest.fixture
def slurm_project(tokenized_project, cluster: SlurmCluster):
    """``tokenized_project`` at a tiny budget, its clients pointed at the test cluster."""
    project = tokenized_project
    project.env.update(cluster.env)
    project.env["WANDB_MODE"] = "disabled"  # W&B has its own tests; seconds a stage here
    project.env.pop("OMP_NUM_THREADS", None)  # the fan-out sets it: one thread a job
    project.edit_params(shrink)
    return project
