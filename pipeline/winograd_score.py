"""Stage ``winograd-score@<variant>-<seed>``: ask a trained Winograd run who *it* is (E16, E17).

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.winograd_score` (also
``python -m attnlab.stages.winograd_score`` and ``attnlab winograd-score``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.winograd_score import main

if __name__ == "__main__":
    run_stage(main)
