"""Stage ``evaluate@{variant}-{seed}``: measure one trained run as its experiment asks.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.evaluate` (also
``python -m attnlab.stages.evaluate`` and ``attnlab evaluate``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.evaluate import main

if __name__ == "__main__":
    run_stage(main)
