"""Stage ``tokenize``: encode the corpus, split it 90/10, store both splits as Parquet.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.tokenize` (also
``python -m attnlab.stages.tokenize`` and ``attnlab tokenize``).

(Named tokenize_corpus.py because a script called tokenize.py would shadow Python's own
``tokenize`` module for everything the stage imports.)
"""

from attnlab.stages.command import run_stage
from attnlab.stages.tokenize import main

if __name__ == "__main__":
    run_stage(main)
