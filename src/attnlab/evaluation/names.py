"""The names of the evaluate stage's measurements: the keys of its one registry.

:data:`attnlab.evaluation.measurements.MEASUREMENTS` says how each is taken; the report
keys its layout by the same names. Those an experiment may ask for beyond what every
variant gets are the catalogue's (:data:`attnlab.catalogue.entries.Measurement`, the one
list of them; a test holds the registry to it). They live apart from the registry,
torch-free, so that the report reads them without loading a model's stack.
"""

from typing import get_args

from attnlab.catalogue.entries import Measurement

PERPLEXITY = "perplexity"  # P0's val/ppl and train/ppl (and bits per byte): every variant
PARAMS = "params"  # parameters per component: every variant
# E13: val/ppl at every evaluation length; E08, E09: attention statistics, at init and
# trained; E11: per-block gradient norms at initialisation.
EXTRAPOLATION, SCORE_STATS, GRAD_NORMS = get_args(Measurement)
