"""One list of measurement names: the catalogue's, and the evaluate stage's registry takes each."""

from typing import get_args

from attnlab.catalogue import experiments
from attnlab.catalogue.entries import Measurement
from attnlab.evaluation.measurements import ALONG_MEASUREMENTS, EXTRA_MEASUREMENTS, MEASUREMENTS
from attnlab.evaluation.names import PARAMS, PERPLEXITY


def test_the_registry_takes_exactly_what_the_catalogue_may_ask_for_beside_every_variants():
    assert sorted(EXTRA_MEASUREMENTS) == sorted(get_args(Measurement))
    assert sorted(MEASUREMENTS) == sorted({PERPLEXITY, PARAMS, *get_args(Measurement)})


def test_what_an_experiment_measures_along_training_the_registry_takes_along():
    along = {name for entry in experiments().values() for name in entry.along}
    assert along <= set(ALONG_MEASUREMENTS)
