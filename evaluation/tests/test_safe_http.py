"""The address guard of evaluation/harness/safe_http.py: which endpoints are refused at creation, the
check again at each connection (DNS rebinding), redirects, the response cap, TLS still naming the
host, and what a run records when the guard refuses. Real sockets, no database."""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpcore2
import httpx2
import pytest

from evaluation.harness.cache import MemoryRequestCache
from evaluation.harness.client import Endpoint, Failure, Settings
from evaluation.harness.loop import Protocol
from evaluation.harness.runner import run
from evaluation.harness.safe_http import (EndpointRefused, GuardedBackend, ResponseRefused, ResponseTooLarge,
                                          check_endpoint, safe_http_client)
from evaluation.harness.tools import ADAPT_TOOLS
from evaluation.tests.harness_fixtures import log_lines, simulated_model, write_items

PUBLIC = "93.184.216.34"
REAL_GETADDRINFO = socket.getaddrinfo


# --- a tiny local server: what it was asked, and a few ways to answer ------------------------------

@contextmanager
def tiny_server() -> Iterator[tuple[str, list[str]]]:
    """Yields (its base URL, the paths it was asked for, GET or POST). /redirect... answers 302 to
    /target; /big sends 4 MB with a Content-Length; /gzip a gzip body; /slow a byte every 0.3 s;
    /endless 64 KB pieces and no Content-Length, until the client leaves; anything else "ok"."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            asked.append(self.path)
            with suppress(OSError):  # the client left (the cap, the time limit): as meant
                self._answer()

        def _answer(self) -> None:
            if self.path.startswith("/redirect"):
                self.send_response(302)
                self.send_header("Location", "/target")
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif self.path == "/big":
                body = b"x" * 4_000_000
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif self.path == "/gzip":
                body = gzip.compress(b"z" * 10_000)
                self.send_response(200)
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif self.path == "/slow":
                self.send_response(200)
                self.send_header("Content-Length", "10")
                self.end_headers()
                for _ in range(10):  # a byte every 0.3 s: each read is quick, the whole is not
                    self.wfile.write(b"s")
                    self.wfile.flush()
                    time.sleep(0.3)
            elif self.path == "/endless":
                self.send_response(200)
                self.end_headers()  # HTTP/1.0: the body ends when the connection does
                for _ in range(4000):  # 256 MB at most, should the client not stop
                    self.wfile.write(b"y" * 65536)
            else:
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args) -> None:  # noqa: ANN002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


def fake_dns(monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[str]]) -> list[str]:
    """``socket.getaddrinfo`` answers each name in ``answers`` with its next address (the last one
    again once they run out), everything else as usual. Returns the names looked up, in order."""
    looked_up: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if host in answers:
            looked_up.append(host)
            queue = answers[host]
            address = queue.pop(0) if len(queue) > 1 else queue[0]
            return REAL_GETADDRINFO(address, port, *args, **kwargs)
        return REAL_GETADDRINFO(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return looked_up


# --- at creation -------------------------------------------------------------------------------

@pytest.mark.parametrize("url, words", [
    ("http://127.0.0.1:1/v1", "127.0.0.1 (the host of http://127.0.0.1:1/v1) is a loopback address"),
    ("http://localhost/v1", "(the host of http://localhost/v1) is a loopback address"),
    ("http://[::1]/v1", "::1 (the host of http://[::1]/v1) is a loopback address"),
    ("http://10.0.0.1/", "10.0.0.1 (the host of http://10.0.0.1/) is a private address"),
    ("http://169.254.169.254/latest/meta-data", "169.254.169.254 (the host of "
                                                "http://169.254.169.254/latest/meta-data) is a link-local address"),
    ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1 (the host of http://[::ffff:127.0.0.1]/) is a loopback "
                                   "address (127.0.0.1, written as IPv6)"),
    ("http://[::ffff:10.1.2.3]/", "is a private address (10.1.2.3, written as IPv6)"),
    ("http://[2002:7f00:1::]/", "is a loopback address (127.0.0.1, written as IPv6)"),  # 6to4
    ("http://[64:ff9b::a00:1]/", "is a private address (10.0.0.1, written as IPv6)"),  # NAT64
    ("http://0.0.0.0:8000/", "is the unspecified address"),
    ("http://[::]/", "is the unspecified address"),
    ("http://100.64.0.7/", "is a carrier-grade NAT address"),
    ("http://224.0.0.251/", "is a multicast address"),
    ("http://[ff02::1]/", "is a multicast address"),
    ("http://240.0.0.1/", "is a reserved address"),
    ("http://[fd00::1]/", "is a private address"),
    ("http://[fe80::1]/", "is a link-local address"),
    ("http://192.168.1.20:8001/v1", "is a private address"),
])
def test_a_non_public_address_is_refused_unless_private_ones_are_allowed(url: str, words: str) -> None:
    with pytest.raises(EndpointRefused) as refused:
        check_endpoint(url, allow_private=False)
    assert words in str(refused.value)
    assert str(refused.value).endswith(": this deployment calls only public addresses")
    check_endpoint(url, allow_private=True)


@pytest.mark.parametrize("url, words", [
    ("ftp://example.org/", "ftp://example.org/ uses the scheme 'ftp': an endpoint is called over http or https only"),
    ("file:///etc/passwd", "uses the scheme 'file'"),
    ("http://user:pw@example.org/", "http://***@example.org/ has a user name or password in the URL"),
    ("https://sk-secret@example.org/v1", "has a user name or password in the URL"),
    ("http:///v1", "names no host"),
    ("http://example.org:99999/", "is not a valid URL"),
])
def test_a_bad_scheme_or_credentials_are_refused_even_with_private_addresses_allowed(url: str, words: str) -> None:
    for allow_private in (False, True):
        with pytest.raises(EndpointRefused) as refused:
            check_endpoint(url, allow_private=allow_private)
        assert words in str(refused.value)
        assert "pw" not in str(refused.value) and "sk-secret" not in str(refused.value)


def test_a_host_that_does_not_resolve_is_refused() -> None:
    with pytest.raises(EndpointRefused, match=r"nowhere\.invalid \(the host of http://nowhere\.invalid/v1\) "
                                              r"does not resolve"):
        check_endpoint("http://nowhere.invalid/v1", allow_private=True)


def test_a_public_address_passes_and_every_resolved_address_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    check_endpoint(f"http://{PUBLIC}/", allow_private=False)  # a literal: nothing is looked up
    check_endpoint("https://[2606:4700:4700::1111]/v1", allow_private=False)

    def two_addresses(host, port, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        return REAL_GETADDRINFO(PUBLIC, port, *args, **kwargs) + REAL_GETADDRINFO("10.9.8.7", port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
    with pytest.raises(EndpointRefused, match=r"10\.9\.8\.7 \(the host of https://api\.example\.test/v1\) is a "
                                              r"private address"):
        check_endpoint("https://api.example.test/v1", allow_private=False)


# --- at each connection ------------------------------------------------------------------------

def test_a_name_that_turns_private_after_the_check_is_refused_at_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    with tiny_server() as (base, asked):
        port = base.rsplit(":", 1)[1]
        looked_up = fake_dns(monkeypatch, {"rebind.example.test": [PUBLIC, "127.0.0.1"]})
        check_endpoint(f"http://rebind.example.test:{port}/v1", allow_private=False)  # public when checked
        with (safe_http_client(allow_private=False, timeout=5, max_response_bytes=1000) as client,
              pytest.raises(EndpointRefused) as refused):
            client.get(f"http://rebind.example.test:{port}/v1/models")
        assert str(refused.value) == (f"127.0.0.1 (what rebind.example.test resolved to, connecting to port {port}) "
                                      "is a loopback address: this deployment calls only public addresses")
        assert looked_up == ["rebind.example.test", "rebind.example.test"]
        assert asked == []  # it never reached the server


def test_the_socket_goes_to_the_checked_address_never_to_the_name_again(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, {"api.example.test": [PUBLIC, "127.0.0.1"]})  # a second look-up would say loopback
    connected: list[str] = []

    class Recording(httpcore2.NetworkBackend):
        def connect_tcp(self, host, port, timeout=None, local_address=None,  # noqa: ANN001, ANN201
                        socket_options=None):  # noqa: ANN001
            connected.append(host)
            raise httpcore2.ConnectError("recorded")

    backend = GuardedBackend(allow_private=False, inner=Recording())
    with pytest.raises(httpcore2.ConnectError):
        backend.connect_tcp("api.example.test", 443, timeout=1)
    assert connected == [PUBLIC]


def test_tls_still_verifies_the_host_name_not_the_address(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, {"api.example.test": [PUBLIC]})
    seen: dict[str, object] = {}

    class Stream(httpcore2.NetworkStream):
        def start_tls(self, ssl_context, server_hostname=None, timeout=None):  # noqa: ANN001, ANN201
            seen["server_hostname"] = server_hostname
            seen["check_hostname"] = ssl_context.check_hostname
            raise httpcore2.ConnectError("stopped before the handshake")

        def close(self) -> None:
            pass

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):  # noqa: ANN001, ANN202
        seen["host"], seen["port"] = host, port
        return Stream()

    monkeypatch.setattr(httpcore2.SyncBackend, "connect_tcp", connect_tcp)
    with (safe_http_client(allow_private=False, timeout=5, max_response_bytes=1000) as client,
          pytest.raises(httpx2.ConnectError)):
        client.get("https://api.example.test/v1/models")
    assert seen == {"host": PUBLIC, "port": 443, "server_hostname": "api.example.test", "check_hostname": True}


def test_private_addresses_are_reached_when_allowed() -> None:
    with tiny_server() as (base, asked), safe_http_client(allow_private=True, timeout=5,
                                                          max_response_bytes=1000) as client:
        assert client.get(f"{base}/hello").text == "ok"
    assert asked == ["/hello"]


# --- redirects, the cap ------------------------------------------------------------------------

def test_a_redirect_is_returned_as_it_is_never_followed() -> None:
    with tiny_server() as (base, asked), safe_http_client(allow_private=True, timeout=5,
                                                          max_response_bytes=1000) as client:
        response = client.get(f"{base}/redirect")
    assert response.status_code == 302 and response.headers["location"] == "/target"
    assert asked == ["/redirect"]


@pytest.mark.parametrize("path, words", [
    ("/big", "the answer is 4,000,000 bytes, over the cap of 1,000,000 bytes (max_response_bytes)"),
    ("/endless", "the answer is larger than the cap of 1,000,000 bytes (max_response_bytes)"),
])
def test_an_answer_over_the_cap_fails_naming_it(path: str, words: str) -> None:
    with (tiny_server() as (base, _asked),
          safe_http_client(allow_private=True, timeout=10, max_response_bytes=1_000_000) as client,
          pytest.raises(ResponseTooLarge) as refused):
        client.get(f"{base}{path}")  # /endless never ends: only the cap stops it
    assert words in str(refused.value) and refused.value.limit == 1_000_000
    assert isinstance(refused.value, httpx2.HTTPError)


def test_a_compressed_answer_is_refused_and_none_is_asked_for() -> None:
    with tiny_server() as (base, _asked), safe_http_client(allow_private=True, timeout=5,
                                                           max_response_bytes=1_000_000) as client:
        assert client.build_request("GET", base).headers["accept-encoding"] == "identity"
        with pytest.raises(ResponseRefused, match=r"the answer came compressed \(gzip\) though none was asked for"):
            client.get(f"{base}/gzip")


def test_the_time_limit_holds_for_the_whole_answer_not_only_each_read() -> None:
    with tiny_server() as (base, _asked), safe_http_client(allow_private=True, timeout=1,
                                                           max_response_bytes=1000) as client:
        started = time.monotonic()
        with pytest.raises(httpx2.ReadTimeout, match="longer than the time limit of 1 s"):
            client.get(f"{base}/slow")
    assert time.monotonic() - started < 2.5


# --- through the harness -----------------------------------------------------------------------

def _endpoint(url: str, **kw) -> Endpoint:  # noqa: ANN003
    return Endpoint(Settings(model="sim-model", base_url=url, **kw), cache=MemoryRequestCache())


def test_a_run_refused_by_the_guard_ends_at_the_first_refusal_and_sends_nothing(tmp_path: Path) -> None:
    items, key = write_items(tmp_path / "data", n=2)
    log = tmp_path / "log.jsonl"
    protocol = Protocol(family="generic", tools=ADAPT_TOOLS)
    with simulated_model(key, log) as url:
        assert url.startswith("http://127.0.0.1:")
        endpoint = _endpoint(url, allow_private_addresses=False, max_retries=3, backoff=0.01)
        lines, summary = run(items, ["text", "blind"], endpoint, protocol, concurrency=1)
        assert log_lines(log) == []  # not one request reached the model
        assert endpoint.counters.retries == 0  # a retry would meet the same guard
        # The run stops: no pair is scored as the model's failure (issue 32), the reason is the guard's.
        assert lines == [] and summary.failures == {} and endpoint.counters.sent == 1
        assert summary.refused == (f"127.0.0.1 (connecting to port {url.split(':')[2].split('/')[0]}) is a "
                                   "loopback address: this deployment calls only public addresses")

        lines, summary = run(items, ["text"], _endpoint(url), protocol, concurrency=2)  # the default: allowed
        assert summary.answered == 2 and not summary.failures
        assert len(log_lines(log)) == 2


def test_an_answer_over_the_cap_is_a_provider_error_naming_the_cap(tmp_path: Path) -> None:
    items, key = write_items(tmp_path / "data", n=1)
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        endpoint = _endpoint(url, max_response_bytes=100, max_retries=3, backoff=0.01)
        lines, _ = run(items, ["text"], endpoint, Protocol(family="generic", tools=ADAPT_TOOLS))
    assert lines[0]["failure"] == "provider_error"
    assert "over the cap of 100 bytes (max_response_bytes)" in lines[0]["failure_detail"]
    assert endpoint.counters.retries == 0 and len(log_lines(tmp_path / "log.jsonl")) == 1


def test_a_redirecting_endpoint_is_a_provider_error_and_its_target_is_never_asked() -> None:
    with tiny_server() as (base, asked):
        endpoint = _endpoint(f"{base}/redirect/v1", max_retries=2, backoff=0.01)
        with pytest.raises(Failure) as failed:
            endpoint.complete([{"role": "user", "content": "hi"}], None)
    assert failed.value.klass == "provider_error"
    assert "the endpoint refused the request with HTTP 302" in failed.value.detail
    assert asked == ["/redirect/v1/chat/completions"]
