"""Stage ``download``: fetch the corpus and land it only if its SHA-256 matches.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.download` (also
``python -m attnlab.stages.download`` and ``attnlab download``).
"""

from attnlab.stages.command import run_stage
from attnlab.stages.download import main

if __name__ == "__main__":
    run_stage(main)
