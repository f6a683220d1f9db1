"""Each configuration is trained once: a row that is the same run as a variant is an alias.

An alias has no runs and no knobs of its own (the loader's refusals of a bad alias are in
test_params_loader), and no two variants may resolve to the same run (the fingerprint its
checkpoint folder uses): a future duplicate must become an alias.
"""

import re
from collections import defaultdict
from pathlib import Path

import pytest

from attnlab.catalogue import measurements_of
from attnlab.config import load_params, parse_params
from attnlab.config.files import params_files, read_params_mapping
from attnlab.errors import AttnlabError, ParamsError
from attnlab.fanout.experiment import apply_params
from attnlab.training import TrainJob, fingerprint

ROOT = Path(__file__).resolve().parents[2]
PARAMS = read_params_mapping(ROOT / "params.yaml")


def test_an_alias_has_no_runs_of_its_own():
    params = parse_params(PARAMS)
    with pytest.raises(ParamsError, match=r"variants.depth-1: an alias of ladder-layernorm"):
        params.variant("depth-1")  # what the train and evaluate stages resolve first
    assert params.aliases_of("ladder-layernorm") == ("dk-block-32-scaled", "depth-1")
    # The shared run is measured for every experiment that reads it: E08's score stats.
    assert params.experiments_reading("ladder-layernorm") == ("E02", "E08", "E18")
    assert measurements_of(params.experiments_reading("ladder-layernorm")) == ("score_stats",)
    assert params.experiments_reading("ladder-mlp") == ("E02",)


def test_no_two_variants_are_the_same_run(tmp_path):
    """The checkpoint fingerprint hashes everything that changes the weights: one per run."""
    params = load_params(ROOT / "params.yaml")
    tokens = tmp_path / "train.parquet"  # the same bytes for every variant: only the
    tokens.write_bytes(b"tokens")  # configuration can tell two runs apart
    runs = defaultdict(list)
    for name in params.variants:
        job = TrainJob.from_params(params, name, params.seeds[0])
        runs[fingerprint(job, tokens)].append(name)
    same = [names for names in runs.values() if len(names) > 1]
    assert same == [], f"the same run under two names (make all but one an alias): {same}"


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        # DVC itself refuses a key params.yaml does not hold ...
        (
            "variants.depth-1.model.n_layer=2",
            "Key 'depth-1' is not in struct (depth-1 is an alias of ladder-layernorm",
        ),
        # ... and the loader an added one that would give the alias knobs of its own.
        ("+variants.depth-1.model.n_layer=2", "aliases.depth-1: also a key of variants"),
    ],
)
def test_setting_an_alias_knob_is_refused_and_params_stay_as_they_were(
    tmp_path, override, expected
):
    """``attnlab repro -S`` applies an override with DVC's own code, then loads the result."""
    for path in params_files(ROOT / "params.yaml"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    with pytest.raises(AttnlabError, match=re.escape(expected)):
        apply_params(tmp_path, [override])
    for path in params_files(ROOT / "params.yaml"):
        assert (tmp_path / path.name).read_bytes() == path.read_bytes()
