"""A real OpenSSH server on loopback: the DVC remote of the round-trip test (README, remotes).

The server is Debian's ``openssh-server`` (``.ci/run`` installs it): ``sshd`` started in the
foreground on a free port of 127.0.0.1 with a host key and a client key generated for the
test, public-key login only, SFTP served in-process (what dvc-ssh speaks). Under root it
runs and logs in as root (OpenSSH refuses the locked service accounts, and as root it needs
its privilege-separation folder, which Debian's service would make); otherwise as the
current user. A server that cannot start fails the test.
"""

import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_PRIVSEP_DIR = Path("/run/sshd")  # OpenSSH's compiled-in chroot for its unprivileged child


@dataclass(frozen=True)
class SshServer:
    """A running server: the DVC remote URL of its storage folder, and the key to log in.

    Attributes:
        url: ``ssh://<user>@127.0.0.1:<port>/<folder>``, for ``dvc remote add``.
        keyfile: The client's private key, for ``dvc remote modify --local <name> keyfile``.
        storage: The remote's folder on this machine (what the server writes to).
    """

    url: str
    keyfile: Path
    storage: Path


def find_sshd() -> str | None:
    """The absolute path of ``sshd`` (it re-executes itself, so it needs one), or None."""
    found = shutil.which("sshd") or "/usr/sbin/sshd"
    return found if os.access(found, os.X_OK) else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
    )


def _wait_listening(port: int, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"sshd exited {server.returncode}:\n{log.read_text()}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"sshd did not listen on 127.0.0.1:{port} in 30 s:\n{log.read_text()}")


@contextmanager
def ssh_server(root: Path) -> Iterator[SshServer]:
    """Start ``sshd`` with its keys, config and storage under ``root``; stop it afterwards."""
    root.mkdir(parents=True, exist_ok=True)
    host_key, client_key = root / "host_key", root / "client_key"
    _keygen(host_key)
    _keygen(client_key)
    shutil.copy(client_key.with_suffix(".pub"), root / "authorized_keys")
    storage = root / "storage"
    storage.mkdir()
    port = _free_port()
    config = root / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\n"
        f"PidFile {root / 'sshd.pid'}\nAuthorizedKeysFile {root / 'authorized_keys'}\n"
        # The keys lie in pytest's folders, whose owners and modes StrictModes would judge.
        "StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "UsePAM no\nSubsystem sftp internal-sftp\n"
    )
    sshd = find_sshd()
    if sshd is None:
        raise RuntimeError("no sshd: apt-get install openssh-server (.ci/run installs it)")
    if os.geteuid() == 0:
        _PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    log = root / "sshd.log"
    with log.open("w") as log_file:
        # -D: stay in the foreground (our child, stopped below); -e: log to the file.
        server = subprocess.Popen(
            [sshd, "-D", "-e", "-f", str(config)], stdout=log_file, stderr=subprocess.STDOUT
        )
    try:
        _wait_listening(port, server, log)
        yield SshServer(f"ssh://{getpass.getuser()}@127.0.0.1:{port}{storage}", client_key, storage)
    finally:
        server.terminate()
        server.wait(timeout=30)
