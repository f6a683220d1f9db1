"""Stage ``charts``: the catalogue's charts, one file each, the folder `dvc plots show` draws.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.charts` (also
``python -m attnlab.stages.charts`` and ``attnlab charts``).
"""

from attnlab.stages.charts import main
from attnlab.stages.command import run_stage

if __name__ == "__main__":
    run_stage(main)
