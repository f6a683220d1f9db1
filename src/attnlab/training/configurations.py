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


def expected_runs(
    params: Params, seeds: Iterable[int] | None = None
) -> dict[str, dict[int, RunConfiguration]]:
    """Per variant of params ``variants``, per seed, its run's configuration.

    The seeds are ``seeds``, or by default each variant's own (``seeds`` and, for a
    variant it lists, ``extra_seeds``).
    """
    chosen = None if seeds is None else list(seeds)
    return {
        variant: {
            seed: run_configuration(TrainJob.from_params(params, variant, seed).config(), params)
            for seed in (params.seeds_of(variant) if chosen is None else chosen)
        }
        for variant in params.variants
    }
