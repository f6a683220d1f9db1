"""The configuration every trained run of the params must state (the report's stale runs).

The report and the charts read a run (a variant of docs/catalogue.md under one seed) only
when its records state the configuration the current params give it; this resolves each
run as the train stage does (:class:`~attnlab.training.job.TrainJob`) and returns its
:class:`~attnlab.config.fingerprint.RunConfiguration`.
"""

from collections.abc import Iterable

from attnlab.config.fingerprint import RunConfiguration, run_configuration
from attnlab.config.loader import Params
from attnlab.training.job import TrainJob


def expected_runs(params: Params, seeds: Iterable[int]) -> dict[str, dict[int, RunConfiguration]]:
    """Per variant of params ``variants``, per seed of ``seeds``, its run's configuration."""
    seeds = list(seeds)
    return {
        variant: {
            seed: run_configuration(TrainJob.from_params(params, variant, seed).config(), params)
            for seed in seeds
        }
        for variant in params.variants
    }
