"""The names of the evaluate stage's measurements: the keys of its one registry.

:data:`attnlab.evaluation.measurements.MEASUREMENTS` says how each is taken; the report
keys its layout by the same names. They live apart from the registry, torch-free, so that
the report reads them without loading a model's stack.
"""

PERPLEXITY = "perplexity"  # P0's val/ppl and train/ppl (and bits per byte): every variant
PARAMS = "params"  # parameters per component: every variant
EXTRAPOLATION = "extrapolation"  # E13: val/ppl at every evaluation length
SCORE_STATS = "score_stats"  # E08, E09: attention statistics, at init and trained
GRAD_NORMS = "grad_norms"  # E11: per-block gradient norms at initialisation
