"""Stage ``winograd-maps``: where the two-block closed model looks when it answers (E17).

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.winograd_maps` (also
``python -m attnlab.stages.winograd_maps`` and ``attnlab winograd-maps``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.winograd_maps import main

if __name__ == "__main__":
    run_stage(main)
