"""Where a study lives: a journal file one machine's workers share, or a database many share.

The sweeps (docs/catalogue.md) run on one machine (``dvc repro`` needs no server: the
study is a journal file, ``journal:///path``, that every worker of the machine appends
to) or on many machines sharing one study (an RDB URL, PostgreSQL in practice). An SQLite
URL still works, for one worker at a time: concurrent SQLite writers get "database is
locked". Every storage has the heartbeat: a running trial writes one every
``heartbeat_interval_s``; the next worker to ask for a trial fails any trial silent for
``grace_period_s`` (its worker died) and enqueues a retry with the same params
(``RetryHeartbeatStaleTrialCallback``).
"""

import os
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from optuna.exceptions import ExperimentalWarning
from optuna.storages import BaseStorage, RDBStorage, RetryHeartbeatStaleTrialCallback
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from attnlab.errors import AttnlabError
from attnlab.sweeps.journal import HeartbeatJournalStorage

JOURNAL = "journal"  # the scheme of the embedded study's URL: journal:///abs/path
STORAGE_ENV = "ATTNLAB_OPTUNA_STORAGE"
# SQLite waits this long for a lock (the heartbeat thread and the trial share the file).
_SQLITE_TIMEOUT_S = 60
_SCHEMA_LOCK = 0x61746E6C616221  # any 64-bit key; the same in every attnlab worker


class StorageError(AttnlabError):
    """The storage URL is malformed, or a storage cannot serve what was asked of it."""


def storage_url(
    configured: str | None, default_journal: Path, environ: Mapping[str, str] = os.environ
) -> str:
    """The study's storage: ``ATTNLAB_OPTUNA_STORAGE``, else params, else the journal file.

    Args:
        configured: Params ``sweeps.storage`` (None for the embedded default).
        default_journal: The journal file of the embedded default (made absolute here).
        environ: The environment to read the override from.
    """
    url = environ.get(STORAGE_ENV) or configured
    if url:
        try:
            parsed = make_url(url)
        except Exception:  # its message would repeat the URL, password and all
            raise StorageError(
                f"{STORAGE_ENV} or sweeps.storage: not a database URL "
                "(expected e.g. postgresql://user@host:5432/db)"
            ) from None
        if parsed.drivername == "postgresql":
            # SQLAlchemy's default PostgreSQL driver is psycopg 3; attnlab pins psycopg2.
            return parsed.set(drivername="postgresql+psycopg2").render_as_string(
                hide_password=False
            )
        return url
    return f"{JOURNAL}:///{Path(default_journal).expanduser().resolve()}"


def is_sqlite(url: str) -> bool:
    """Whether ``url`` is an SQLite file (one worker at a time)."""
    return make_url(url).get_backend_name() == "sqlite"


def is_embedded(url: str) -> bool:
    """Whether ``url`` is a file of this machine (journal or SQLite), not a shared database."""
    return make_url(url).get_backend_name() in (JOURNAL, "sqlite")


def redact(url: str) -> str:
    """``url`` with its password hidden, fit for logs and reports."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparseable URL>"


@contextmanager
def _schema_lock(url: str) -> Iterator[None]:
    """Hold a PostgreSQL advisory lock while Optuna creates (or checks) its tables.

    Optuna creates its schema on first use without a lock; two workers starting together
    on an empty database collide (``duplicate key value violates unique constraint
    "pg_type_typname_nsp_index"`` on ``CREATE TYPE studydirection``). Other databases go
    unguarded: SQLite is one worker's.
    """
    if make_url(url).get_backend_name() != "postgresql":
        yield
        return
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _SCHEMA_LOCK})
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _SCHEMA_LOCK})
    finally:
        engine.dispose()


def open_storage(
    url: str, heartbeat_interval_s: int, grace_period_s: int, max_retry: int
) -> BaseStorage:
    """The storage of ``url``, its heartbeat on and stale trials retried with the same params.

    Creates the folder of a journal or SQLite file. The retry keeps the failed trial's
    number in its system attribute ``failed_trial`` (and the chain in ``retry_history``).

    Raises:
        StorageError: the database cannot be reached (the message hides any password).
    """
    with warnings.catch_warnings():
        # The heartbeat and its retry callback are marked experimental; we rely on both.
        warnings.simplefilter("ignore", ExperimentalWarning)
        retry = RetryHeartbeatStaleTrialCallback(max_retry=max_retry)
    if make_url(url).get_backend_name() == JOURNAL:
        path = Path(make_url(url).database or "")
        return HeartbeatJournalStorage(path, heartbeat_interval_s, grace_period_s, retry)
    engine_kwargs: dict = {"pool_pre_ping": True}
    if is_sqlite(url):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine_kwargs = {"connect_args": {"timeout": _SQLITE_TIMEOUT_S}}
    try:
        with warnings.catch_warnings(), _schema_lock(url):
            warnings.simplefilter("ignore", ExperimentalWarning)
            return RDBStorage(
                url,
                engine_kwargs=engine_kwargs,
                heartbeat_interval=heartbeat_interval_s,
                grace_period=grace_period_s,
                heartbeat_stale_trial_callback=retry,
            )
    except Exception as err:
        raise StorageError(
            f"cannot open the study storage {redact(url)}: {type(err).__name__}: {err}"
        ) from None
