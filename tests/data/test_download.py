"""Download: the checksum, atomic landing, retries and the offline mirror (stage download)."""

import hashlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from attnlab.data.download import fetch_corpus, sha256_of
from attnlab.errors import CorpusError

BODY = b"First Citizen:\nBefore we proceed any further, hear me speak.\n" * 50
DIGEST = hashlib.sha256(BODY).hexdigest()


class _Server(http.server.ThreadingHTTPServer):
    """Serves BODY at /corpus.txt; fails the first ``failures`` requests, or truncates."""

    failures = 0
    truncate = False
    requests = 0


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        self.server.requests += 1
        if self.server.requests <= self.server.failures:
            self.send_error(503, "warming up")
            return
        if self.path != "/corpus.txt":
            self.send_error(404)
            return
        body = BODY[: len(BODY) // 2] if self.server.truncate else BODY
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _url(server: _Server, path: str = "/corpus.txt") -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


@pytest.fixture
def existing(tmp_path: Path) -> Path:
    """A destination holding an earlier good download, which no failure may touch."""
    dest = tmp_path / "raw" / "input.txt"
    dest.parent.mkdir()
    dest.write_bytes(b"an earlier download")
    return dest


def _untouched(dest: Path) -> bool:
    leftovers = [p.name for p in dest.parent.iterdir() if p != dest]
    return dest.read_bytes() == b"an earlier download" and leftovers == []


def test_a_transient_failure_is_retried_with_backoff(server, tmp_path):
    server.failures = 2
    waits: list[float] = []
    dest = fetch_corpus(_url(server), DIGEST, tmp_path / "input.txt", sleep=waits.append)
    assert dest.read_bytes() == BODY
    assert waits == [1.0, 2.0]
    assert server.requests == 3


def test_retries_run_out_with_a_clear_message(server, existing):
    server.failures = 10
    with pytest.raises(CorpusError, match=r"\(3 attempt\(s\)\): HTTP 503.*ATTNLAB_CORPUS_MIRROR"):
        fetch_corpus(_url(server), DIGEST, existing, retries=3, sleep=lambda _: None)
    assert _untouched(existing)


def test_a_missing_file_is_not_retried(server, existing):
    with pytest.raises(CorpusError, match="HTTP 404"):
        fetch_corpus(_url(server, "/absent"), DIGEST, existing, sleep=lambda _: None)
    assert server.requests == 1 and _untouched(existing)


def test_a_truncated_download_never_lands(server, existing):
    server.truncate = True
    with pytest.raises(CorpusError) as caught:
        fetch_corpus(_url(server), DIGEST, existing, sleep=lambda _: None)
    message = str(caught.value)
    assert DIGEST in message
    assert hashlib.sha256(BODY[: len(BODY) // 2]).hexdigest() in message
    assert _untouched(existing)


def test_an_unreachable_host_fails_cleanly_and_says_how_to_work_offline(existing):
    # Port 9 on loopback: nothing listens, so the connection is refused at once.
    with pytest.raises(CorpusError, match="ATTNLAB_CORPUS_MIRROR=/path/to/input.txt"):
        fetch_corpus("http://127.0.0.1:9/x", DIGEST, existing, retries=2, sleep=lambda _: None)
    assert _untouched(existing)


@pytest.mark.parametrize("as_url", [False, True])
def test_a_mirror_replaces_the_network(tmp_path, as_url):
    mirror = tmp_path / "mirror.txt"
    mirror.write_bytes(BODY)
    source = mirror.as_uri() if as_url else str(mirror)
    dest = fetch_corpus("http://127.0.0.1:9/never", DIGEST, tmp_path / "out" / "in.txt",
                        mirror=source)
    assert dest.read_bytes() == BODY and sha256_of(dest) == DIGEST
    assert oct(dest.stat().st_mode & 0o777) == "0o644"


def test_a_corrupt_mirror_is_refused_with_both_hashes(tmp_path, existing):
    mirror = tmp_path / "mirror.txt"
    mirror.write_bytes(BODY[:-1] + b"?")
    with pytest.raises(CorpusError) as caught:
        fetch_corpus("http://127.0.0.1:9/never", DIGEST, existing, mirror=str(mirror))
    assert DIGEST in str(caught.value)
    assert sha256_of(mirror) in str(caught.value)
    assert _untouched(existing)


def test_a_missing_mirror_is_named(tmp_path, existing):
    with pytest.raises(CorpusError, match="cannot read the corpus mirror .*absent.txt"):
        fetch_corpus("http://x", DIGEST, existing, mirror=str(tmp_path / "absent.txt"))
    assert _untouched(existing)


def test_the_shared_mirror_matches_the_catalogue_checksum(corpus_mirror):
    assert sha256_of(corpus_mirror) == (
        "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
    )
