"""Which addresses a run may call: the guard that keeps the platform from becoming a proxy into its
own network (SSRF) once it calls endpoints users give it (docs/runs.md, "Which addresses a run may
call"). Standard library, httpx2 and httpcore2 only; no Django.

- ``check_endpoint(url, allow_private=...)`` when an endpoint is given: the scheme (http or https),
  no credentials in the URL, and every address the host resolves to is public.
- ``safe_http_client(...)`` for every request: an ``httpx2.Client`` whose network backend resolves
  the host itself at each new connection, checks every address and connects the socket to a
  checked address, never to the name again (so a name that changes its answer between the check
  and the connection, DNS rebinding, gains nothing). TLS still verifies the certificate against the
  request's host name: httpcore2's ``HTTPConnection._connect`` passes ``server_hostname`` from the
  request's origin (or its ``sni_hostname`` extension) to ``start_tls``, whatever address
  ``connect_tcp`` connected to. Redirects are not followed, a response larger than
  ``max_response_bytes`` is refused before it is all read, and a compressed response (asked for
  none) is refused, since its size would only be known once inflated.

What a caller sees (openai 3.54 over httpx2): a refused connection raises ``EndpointRefused`` itself,
through httpx2 and the openai SDK (neither wraps an exception that is not an ``httpx2.RequestError``),
so it is never retried as a connection error; a refused response raises ``ResponseRefused``
(``ResponseTooLarge`` for the cap), an ``httpx2.HTTPError`` that the SDK lets through likewise; a 3xx
is returned as it is (the SDK raises ``openai.APIStatusError``); the time limit raises an
``httpx2.TimeoutException`` (the SDK's ``openai.APITimeoutError``).
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterable, Iterator
from urllib.parse import urlsplit

import httpcore2
import httpx2

PUBLIC_ONLY = "this deployment calls only public addresses"
_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # the well-known prefix: the last 32 bits are an IPv4 address

LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)  # the openai SDK's own
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class EndpointRefused(ValueError):
    """An endpoint this deployment will not call; the message says why."""


class ResponseRefused(httpx2.HTTPError):
    """An answer the client will not read; the message says why."""


class ResponseTooLarge(ResponseRefused):
    """An answer larger than the client's ``max_response_bytes``."""

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


def address_kind(address: IPAddress) -> str | None:
    """Why ``address`` is not a public address, in words ("a loopback address"), or None if it is."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            kind = address_kind(embedded)
            return None if kind is None else f"{kind} ({embedded}, written as IPv6)"
    if address.is_unspecified:
        return "the unspecified address (this host)"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "a carrier-grade NAT address (100.64.0.0/10)"
    if address.is_reserved:
        return "a reserved address"
    if address.is_private or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local):
        return "a private address"
    if not address.is_global:
        return "not a public address"
    return None


def _redacted(url: str) -> str:
    """The URL as a message may show it: without any user name or password."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]).geturl()


def _resolve(host: str, port: int) -> list[tuple[int, tuple]]:
    """(family, socket address) of every address ``host`` resolves to; raises OSError."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [(family, sockaddr) for family, _type, _proto, _name, sockaddr in infos]


def _refusal(sockaddr: tuple, where: str, allow_private: bool) -> str | None:
    if allow_private:
        return None
    text = str(sockaddr[0])
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 scope ("%eth0") is not the address
    except ValueError:
        return f"{text} ({where}) is not an IP address: {PUBLIC_ONLY}"
    kind = address_kind(address)
    return None if kind is None else f"{text} ({where}) is {kind}: {PUBLIC_ONLY}"


def check_endpoint(url: str, *, allow_private: bool) -> None:
    """Raises ``EndpointRefused`` unless ``url`` is an http(s) URL without credentials whose host
    resolves, to public addresses only (any address with ``allow_private``)."""
    shown = _redacted(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise EndpointRefused(f"{shown} is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise EndpointRefused(f"{shown} uses the scheme {parts.scheme or '(none)'!r}: "
                              "an endpoint is called over http or https only")
    if parts.username is not None or parts.password is not None:
        raise EndpointRefused(f"{shown} has a user name or password in the URL: give the API key "
                              "as the key, never in the URL")
    host = parts.hostname
    if not host:
        raise EndpointRefused(f"{shown} names no host")
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        resolved = _resolve(host, port)
    except (OSError, UnicodeError) as exc:
        raise EndpointRefused(f"{host} (the host of {shown}) does not resolve: {exc}") from None
    if not resolved:
        raise EndpointRefused(f"{host} (the host of {shown}) does not resolve to any address")
    for _family, sockaddr in resolved:
        why = _refusal(sockaddr, f"the host of {shown}", allow_private)
        if why:
            raise EndpointRefused(why)


class GuardedBackend(httpcore2.NetworkBackend):
    """httpcore2's ``SyncBackend``, except that ``connect_tcp`` resolves the host itself, refuses
    (``EndpointRefused``) if any address is not allowed, and connects to the checked addresses."""

    def __init__(self, *, allow_private: bool, inner: httpcore2.NetworkBackend | None = None) -> None:
        self.allow_private = allow_private
        self._inner = inner or httpcore2.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None) -> httpcore2.NetworkStream:
        try:
            resolved = _resolve(host, port)
        except (OSError, UnicodeError) as exc:  # as the stock backend reports it: a connection error
            raise httpcore2.ConnectError(f"{host} does not resolve: {exc}") from exc
        if not resolved:
            raise httpcore2.ConnectError(f"{host} does not resolve to any address")
        for _family, sockaddr in resolved:  # every address first: none is tried unless all are allowed
            where = (f"connecting to port {port}" if str(sockaddr[0]) == host
                     else f"what {host} resolved to, connecting to port {port}")
            why = _refusal(sockaddr, where, self.allow_private)
            if why:
                raise EndpointRefused(why)
        last: Exception | None = None
        for _family, sockaddr in resolved:
            try:
                # A literal address: getaddrinfo in there parses it, no name is looked up again.
                return self._inner.connect_tcp(str(sockaddr[0]), port, timeout=timeout, local_address=local_address,
                                               socket_options=socket_options)
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None) -> httpcore2.NetworkStream:
        raise EndpointRefused(f"the Unix socket {path}: {PUBLIC_ONLY}")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _CappedStream(httpx2.SyncByteStream):
    def __init__(self, stream: httpx2.SyncByteStream, *, limit: int, deadline: float, timeout: float) -> None:
        self._stream, self._limit, self._deadline, self._timeout = stream, limit, deadline, timeout

    def __iter__(self) -> Iterator[bytes]:
        received = 0
        for chunk in self._stream:
            received += len(chunk)
            if received > self._limit:
                raise ResponseTooLarge(f"the answer is larger than the cap of {self._limit:,} bytes "
                                       "(max_response_bytes); it was not read further", limit=self._limit)
            if time.monotonic() > self._deadline:
                raise httpx2.ReadTimeout(f"the answer took longer than the time limit of {self._timeout:g} s")
            yield chunk

    def close(self) -> None:
        self._stream.close()


class GuardedTransport(httpx2.HTTPTransport):
    """``httpx2.HTTPTransport`` over a ``GuardedBackend``, with the response cap and the time limit.

    httpx2 2.16's ``HTTPTransport`` takes no ``network_backend``: its ``handle_request`` and ``close``
    use ``self._pool``, which is replaced here by a pool with the same settings and the guarded
    backend (evaluation/tests/test_safe_http.py fails if it is not used)."""

    def __init__(self, *, allow_private: bool, max_response_bytes: int, timeout: float,
                 verify: bool = True, limits: httpx2.Limits | None = None) -> None:
        limits = limits or httpx2.Limits()
        super().__init__(verify=verify, limits=limits)
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx2.create_ssl_context(verify=verify),
            max_connections=limits.max_connections, max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry, network_backend=GuardedBackend(allow_private=allow_private))
        self.max_response_bytes = max_response_bytes
        self.timeout = timeout

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = time.monotonic() + self.timeout
        response = super().handle_request(request)
        try:
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                raise ResponseRefused(f"the answer came compressed ({encoding}) though none was asked for; "
                                      "a compressed answer is refused, its size unknown until inflated")
            length = response.headers.get("content-length", "")
            if length.strip().isdigit() and int(length) > self.max_response_bytes:
                raise ResponseTooLarge(f"the answer is {int(length):,} bytes, over the cap of "
                                       f"{self.max_response_bytes:,} bytes (max_response_bytes); it was not read",
                                       limit=self.max_response_bytes)
        except ResponseRefused:
            response.close()
            raise
        assert isinstance(response.stream, httpx2.SyncByteStream)
        response.stream = _CappedStream(response.stream, limit=self.max_response_bytes, deadline=deadline,
                                        timeout=self.timeout)
        return response


def safe_http_client(*, allow_private: bool, timeout: float, max_response_bytes: int) -> httpx2.Client:
    """An ``httpx2.Client`` that calls only allowed addresses (checked at each connection), follows
    no redirect, reads at most ``max_response_bytes`` of an answer and gives a request ``timeout``
    seconds (each of connecting, sending, each read and waiting for a connection, and the whole
    answer as it arrives). No proxy or credentials are taken from the environment (the CA
    certificates may be, as httpx2 reads SSL_CERT_FILE)."""
    return httpx2.Client(
        transport=GuardedTransport(allow_private=allow_private, max_response_bytes=max_response_bytes,
                                   timeout=timeout, limits=LIMITS),
        timeout=httpx2.Timeout(timeout), follow_redirects=False, trust_env=False,
        headers={"Accept-Encoding": "identity"})


__all__ = ["EndpointRefused", "GuardedBackend", "GuardedTransport", "ResponseRefused", "ResponseTooLarge",
           "address_kind", "check_endpoint", "safe_http_client"]
