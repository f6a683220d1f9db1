"""Stage ``cost``: E14, what one attention layer costs as n doubles, naive vs SDPA.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.cost` (also
``python -m attnlab.stages.cost`` and ``attnlab cost``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.cost import main

if __name__ == "__main__":
    run_stage(main)
