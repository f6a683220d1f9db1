"""The embedded study of the sweeps (docs/catalogue.md): a journal file with a heartbeat.

Optuna's journal storage appends every operation to one file under a file lock, so the
workers of one machine can share a study without a server (SQLite cannot: concurrent
writers get "database is locked"). It has no heartbeat, though, and without one a trial
whose worker died stays RUNNING forever and holds its slot. :class:`HeartbeatJournalStorage`
adds it the way ``RDBStorage`` has it: a running trial writes the time into its system
attribute ``heartbeat`` every ``heartbeat_interval_s``, a trial silent for
``grace_period_s`` is stale, and Optuna's own ``fail_stale_trials`` fails it and hands its
params to the retry callback, exactly as on PostgreSQL.

A write cut short (a full disk, a killed machine) leaves a last line without its newline.
Optuna's reader skips such a line as a write still under way, but its next append glues
onto it, and from then on no read of the journal gets past the glued line. A journal is
therefore opened only after its torn last line is cut away, under the journal's own file
lock (no writer holds it mid-line), which leaves what Optuna reads of it as it was; a
line that is whole but no record (one glued before this check) is refused, naming it.
"""

import json
import time
from collections.abc import Callable
from pathlib import Path

import optuna
from optuna.storages._heartbeat import BaseHeartbeat
from optuna.storages.journal import JournalFileBackend, JournalFileSymlinkLock, JournalStorage
from optuna.trial import FrozenTrial, TrialState

from attnlab.errors import AttnlabError

HEARTBEAT_ATTR = "heartbeat"
StaleTrialCallback = Callable[[optuna.Study, FrozenTrial], None]


class HeartbeatJournalStorage(JournalStorage, BaseHeartbeat):
    """A journal-file study whose running trials beat like ``RDBStorage``'s.

    Args:
        path: The journal file (created with its folder if missing).
        heartbeat_interval_s: How often a running trial writes its heartbeat.
        grace_period_s: How long a running trial may stay silent before it is stale.
        stale_trial_callback: Called with each trial failed as stale (the retry).
    """

    def __init__(
        self,
        path: Path,
        heartbeat_interval_s: int,
        grace_period_s: int,
        stale_trial_callback: StaleTrialCallback | None,
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        backend = JournalFileBackend(str(path))  # creates the file
        cut_torn_tail(path)
        try:
            super().__init__(backend)
        except ValueError:  # a line that is no record (json's JSONDecodeError is one)
            raise AttnlabError(_unreadable(path)) from None
        self.heartbeat_interval_s = heartbeat_interval_s
        self.grace_period_s = grace_period_s
        self.stale_trial_callback = stale_trial_callback

    def record_heartbeat(self, trial_id: int) -> None:
        """Write the time into the running trial's system attribute ``heartbeat``."""
        self.set_trial_system_attr(trial_id, HEARTBEAT_ATTR, time.time())

    def _get_stale_trial_ids(self, study_id: int) -> list[int]:
        now = time.time()
        running = self.get_all_trials(study_id, deepcopy=False, states=(TrialState.RUNNING,))
        return [t._trial_id for t in running if now - last_sign_of_life(t) > self.grace_period_s]

    def get_heartbeat_interval(self) -> int:
        """The interval of the heartbeat, in seconds (it is always on)."""
        return self.heartbeat_interval_s

    def get_heartbeat_stale_trial_callback(self) -> StaleTrialCallback | None:
        """The callback that retries a stale trial."""
        return self.stale_trial_callback


def last_sign_of_life(trial: FrozenTrial) -> float:
    """When ``trial`` last showed it runs: its heartbeat, or its start if later.

    A retry inherits its failed trial's system attributes, the old heartbeat among them;
    its own start is what counts until it beats itself.
    """
    started = trial.datetime_start.timestamp() if trial.datetime_start else time.time()
    return max(started, float(trial.system_attrs.get(HEARTBEAT_ATTR, 0.0)))


def cut_torn_tail(path: Path) -> int:
    """Cut away the journal's last line if a write cut short left it without its newline.

    Held under the journal's file lock, as Optuna appends: no writer is mid-line then, so
    an unfinished line is a torn write that Optuna's reader never took as a record.

    Returns:
        The bytes cut (0 when the journal ends with a whole line).
    """
    lock = JournalFileSymlinkLock(str(path))
    lock.acquire()
    try:
        with path.open("rb+") as journal:
            data = journal.read()
            if not data or data.endswith(b"\n"):
                return 0
            whole = data.rfind(b"\n") + 1
            journal.truncate(whole)
    finally:
        lock.release()
    print(
        f"sweep: {path}: cut a torn last line ({len(data) - whole} bytes, a write cut short: "
        "no record Optuna had read)",
        flush=True,
    )
    return len(data) - whole


def _unreadable(path: Path) -> str:
    """Why Optuna cannot read the journal ``path``: its first line that is no record."""
    with path.open("rb") as journal:
        for number, line in enumerate(journal, start=1):
            try:
                json.loads(line)
            except ValueError as err:
                return (
                    f"{path}: line {number} is not a journal record ({err}): a write cut "
                    "short and appended to? Cut the file back to its line "
                    f"{number - 1}, or remove it to start the study afresh"
                )
    return f"{path}: not an Optuna journal"
