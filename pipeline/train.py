"""Stage ``train@{variant}-{seed}``: train one run; write its model, metrics and curves.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.train` (also
``python -m attnlab.stages.train`` and ``attnlab train``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.train import main

if __name__ == "__main__":
    run_stage(main)
