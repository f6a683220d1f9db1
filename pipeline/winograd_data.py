"""Stage ``winograd-data``: generate both Winograd tasks (E16 leaky, E17 closed) as Parquet.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.winograd_data` (also
``python -m attnlab.stages.winograd_data`` and ``attnlab winograd-data``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.winograd_data import main

if __name__ == "__main__":
    run_stage(main)
