"""A journal whose last write was cut short is repaired, never appended to (a full disk).

Before, a journal missing its last 100 bytes was read by ``optuna.load_study`` alone (its
reader skips an unfinished last line), but the sweep's first append glued onto that line,
and every later run of the study died on a raw ``JSONDecodeError``.
"""

import optuna
import pytest

from attnlab.errors import AttnlabError
from attnlab.sweeps.journal import HeartbeatJournalStorage


def _storage(path):
    return HeartbeatJournalStorage(
        path, heartbeat_interval_s=60, grace_period_s=120, stale_trial_callback=None
    )


def _study(path, trials: int) -> None:
    study = optuna.create_study(study_name="dk", storage=_storage(path))
    for x in range(trials):
        study.add_trial(
            optuna.trial.create_trial(
                params={"x": x},
                distributions={"x": optuna.distributions.IntDistribution(0, 99)},
                value=float(x),
            )
        )


def _values(path) -> list[float]:
    return [t.value for t in optuna.load_study(study_name="dk", storage=_storage(path)).trials]


def test_a_torn_last_line_is_cut_as_optuna_reads_it_and_the_study_goes_on(tmp_path, capsys):
    path = tmp_path / "dk.journal"
    _study(path, trials=12)
    whole = path.read_bytes()
    path.write_bytes(whole[:-100])  # the cut: the last record loses its end
    as_optuna_reads_it = optuna.load_study(
        study_name="dk",
        storage=optuna.storages.JournalStorage(
            optuna.storages.journal.JournalFileBackend(str(path))
        ),
    )
    read = [t.value for t in as_optuna_reads_it.trials]
    assert len(read) == 11
    study = optuna.load_study(study_name="dk", storage=_storage(path))  # repairs, then reads
    assert f"sweep: {path}: cut a torn last line" in capsys.readouterr().out
    assert path.read_bytes() == whole[: whole.rindex(b"\n", 0, len(whole) - 100) + 1]
    study.add_trial(
        optuna.trial.create_trial(
            params={"x": 50},
            distributions={"x": optuna.distributions.IntDistribution(0, 99)},
            value=50.0,
        )
    )
    # Every later open reads the study whole: the 11 trials and the one added after.
    assert _values(path) == [*read, 50.0]
    assert _values(path) == [*read, 50.0]


def test_a_journal_glued_by_an_earlier_append_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "dk.journal"
    _study(path, trials=3)
    lines = path.read_bytes().splitlines(keepends=True)
    glued = lines[-1][:-20] + lines[1]  # what the old append onto a torn line wrote
    path.write_bytes(b"".join([*lines[:-1], glued, lines[1]]))
    with pytest.raises(AttnlabError) as refused:
        _storage(path)
    assert str(refused.value).startswith(f"{path}: line {len(lines)} is not a journal record (")
    assert f"Cut the file back to its line {len(lines) - 1}" in str(refused.value)
