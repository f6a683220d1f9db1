"""Stage ``sweep-check@{study}-{seed}``: train a study's best trial as a normal run, measure it.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.sweep_check` (also
``python -m attnlab.stages.sweep_check`` and ``attnlab sweep-check``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.sweep_check import main

if __name__ == "__main__":
    run_stage(main)
