"""Stage ``winograd-train@<variant>-<seed>``: train one Winograd run (shared training code).

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.winograd_train` (also
``python -m attnlab.stages.winograd_train`` and ``attnlab winograd-train``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.winograd_train import main

if __name__ == "__main__":
    run_stage(main)
