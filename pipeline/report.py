"""Stage ``report``: every experiment's tables, figures and claim verdicts, and the demo.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.report` (also
``python -m attnlab.stages.report`` and ``attnlab report``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.report import main

if __name__ == "__main__":
    run_stage(main)
