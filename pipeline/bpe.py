"""Stage ``bpe``: train the byte-level BPE tokenizer on the corpus.

What ``dvc.yaml`` runs; the command is :mod:`attnlab.stages.bpe` (also
``python -m attnlab.stages.bpe`` and ``attnlab bpe``).
"""

from attnlab.stages.bpe import main
from attnlab.stages.command import run_stage

if __name__ == "__main__":
    run_stage(main)
