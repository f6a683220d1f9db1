"""Stage ``probes``: the computed experiments E03-E07, E10, E12, E15 and E19 (no training).

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.probes` (also
``python -m attnlab.stages.probes`` and ``attnlab probes``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.probes import main

if __name__ == "__main__":
    run_stage(main)
