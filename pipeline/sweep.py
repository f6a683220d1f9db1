"""Stage ``sweep@<study>``: run one Optuna study of params ``sweeps.studies``, write its reports.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.sweep` (also
``python -m attnlab.stages.sweep`` and ``attnlab sweep run``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.sweep import main

if __name__ == "__main__":
    run_stage(main)
