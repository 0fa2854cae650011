"""``EngineClient``: the ``Exchange`` that speaks HTTP, libcurl (through pycurl) driven by
the event loop, for one engine origin (one TLS setting, one proxy or none).

libcurl writes and reads HTTP: the request's head and body, the answer's head, chunked
framing, decompression, keep-alive connections, proxies (a CONNECT tunnel for https),
TLS and the deadline. This module only hands it requests and maps what it says. Its
transfers run on the event loop's own thread, through libcurl's "multi socket" interface:
libcurl names the sockets it waits for and when it next needs to be woken; the loop
watches those (``_Multi``: an epoll set of its own on Linux, one timer) and hands each
event back to libcurl. No thread of its own: nothing takes turns with the loop for the
interpreter's lock.

One libcurl "multi" per event loop, made on first use: at most ``max_connections``
connections to the origin (more requests wait their turn, in order), idle keep-alive
connections closed after ``keepalive_seconds`` or as soon as they stir, no cookies, no
redirects, no proxy but the one chosen when the client is made (``pools.py``), answers
decompressed (every coding this libcurl decodes). ``timeout`` is the deadline of the
whole exchange: waiting for a turn, then libcurl's ``CURLOPT_TIMEOUT_MS`` for the rest
(connecting until the body is read). Failures are raised in searchport's vocabulary
(``exchange.py``); a message never carries an address.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import io
import os
import select
import socket
import ssl
from collections import deque
from collections.abc import Iterator, Mapping
from functools import cache
from urllib.parse import quote

import pycurl

from searchport import __version__
from searchport.adapters.network.exchange import (
    Answer,
    BadAnswer,
    Dropped,
    ExchangeError,
    Refused,
    TimedOut,
    Tls,
)
from searchport.domain.running_loop import running_loop

SYSTEM_TLS = Tls()  # verified against the system's roots
USER_AGENT = f"searchport/{__version__}"
# methods whose requests carry no body unless given one (RFC 9110 defines none for them)
BODILESS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "CONNECT"})
READ_SIZE = 65536  # bytes read from a socket at once: a search answer in one read
URL_SAFE = ":/?#[]@!$&'()*+,;=%~"  # RFC 3986's delimiters and "%": left as they are
MAX_FIELDS = 100  # header fields of an answer's head, as most servers and clients allow
# libcurl's codes that not every pycurl release names
E_PROXY = getattr(pycurl, "E_PROXY", 97)
E_WEIRD_SERVER_REPLY = getattr(pycurl, "E_WEIRD_SERVER_REPLY", 8)
# libcurl's codes for a failure before any connection was made (name, TCP, proxy, TLS)
NOT_CONNECTED = frozenset({
    pycurl.E_COULDNT_RESOLVE_PROXY, pycurl.E_COULDNT_RESOLVE_HOST, pycurl.E_COULDNT_CONNECT,
    pycurl.E_SSL_CONNECT_ERROR, pycurl.E_PEER_FAILED_VERIFICATION, pycurl.E_SSL_CERTPROBLEM,
    pycurl.E_SSL_CIPHER, pycurl.E_SSL_CACERT_BADFILE, pycurl.E_SSL_ISSUER_ERROR,
    pycurl.E_SSL_PINNEDPUBKEYNOTMATCH, pycurl.E_SSL_INVALIDCERTSTATUS,
    pycurl.E_SSL_ENGINE_NOTFOUND, pycurl.E_SSL_ENGINE_SETFAILED, pycurl.E_SSL_CRL_BADFILE,
    E_PROXY})
TIMED_OUT = pycurl.E_OPERATION_TIMEDOUT
# libcurl's words for its most common codes, for the logs (its own messages name the host)
CAUSES = {
    pycurl.E_COULDNT_RESOLVE_PROXY: "proxy name not resolved",
    pycurl.E_COULDNT_RESOLVE_HOST: "host name not resolved",
    pycurl.E_COULDNT_CONNECT: "connection refused or unreachable",
    pycurl.E_PARTIAL_FILE: "body cut short",
    pycurl.E_OPERATION_TIMEDOUT: "timed out",
    pycurl.E_SSL_CONNECT_ERROR: "TLS handshake failed",
    pycurl.E_GOT_NOTHING: "closed without an answer",
    pycurl.E_SEND_ERROR: "send failed",
    pycurl.E_RECV_ERROR: "receive failed",
    pycurl.E_BAD_CONTENT_ENCODING: "bad content encoding",
    pycurl.E_PEER_FAILED_VERIFICATION: "certificate not trusted",
    E_WEIRD_SERVER_REPLY: "not an HTTP answer",
    pycurl.E_UNSUPPORTED_PROTOCOL: "not an HTTP answer",
    E_PROXY: "proxy refused the tunnel",
}
IN, OUT, REMOVE = pycurl.POLL_IN, pycurl.POLL_OUT, pycurl.POLL_REMOVE
EPOLL = hasattr(select, "epoll")  # Linux: libcurl's sockets in an epoll set of their own
EPOLL_IN = getattr(select, "EPOLLIN", 0) | getattr(select, "EPOLLRDHUP", 0)
EPOLL_ERR = getattr(select, "EPOLLERR", 0) | getattr(select, "EPOLLHUP", 0)


class Headers(Mapping[str, str]):
    """An answer's header fields, looked up case-insensitively (a repeated field: its
    first value), read from the lines libcurl handed over (``final_head``) by the standard
    library (``http.client.parse_headers``) when first looked at."""

    __slots__ = ("_lines", "_names", "_values")

    def __init__(self, lines: list[bytes]) -> None:
        self._lines = lines
        self._values: dict[str, str] | None = None
        self._names: list[str] = []

    def _read(self) -> dict[str, str]:
        values = self._values
        if values is None:
            values = {}
            fields = final_head(self._lines)[0]
            parsed = http.client.parse_headers(io.BytesIO(b"".join(fields) + b"\r\n"))
            for name, value in parsed.items():
                if name.lower() not in values:
                    values[name.lower()] = value
                    self._names.append(name)
            self._values = values
        return values

    def __getitem__(self, name: str) -> str:
        return self._read()[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._read()

    def __iter__(self) -> Iterator[str]:
        self._read()
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._read())


class _Handle:
    """A libcurl handle set up for one kind of request (its method, with or without a
    body), kept for the next request of that kind: its settings stay, only the URL, the
    headers, the body and the deadline change. libcurl hands it the lines of the answer's
    heads and the pieces of its body (appended by the lists' own methods)."""

    __slots__ = ("curl", "future", "header_list", "lines", "pieces", "timeout_ms")

    def __init__(self, curl: pycurl.Curl) -> None:
        self.curl = curl
        self.lines: list[bytes] = []
        self.pieces: list[bytes] = []
        self.future: asyncio.Future[None] | None = None
        self.header_list: list[str] | None = None
        self.timeout_ms = 0
        curl.setopt(pycurl.HEADERFUNCTION, self.lines.append)
        curl.setopt(pycurl.WRITEFUNCTION, self.pieces.append)

    def taken(self) -> tuple[list[bytes], bytes]:
        """The head's lines and the body, the handle emptied for its next request."""
        lines, pieces = self.lines[:], self.pieces
        body = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        self.lines.clear()
        pieces.clear()
        return lines, body


def final_head(lines: list[bytes]) -> tuple[list[bytes], bool]:
    """The header lines of the last head libcurl handed over (a status line begins a head,
    so an interim 1xx one is forgotten; the trailers after a body are not kept), and
    whether that head was read whole (its empty line)."""
    fields: list[bytes] = []
    whole = False
    for line in lines:
        if line.startswith(b"HTTP/"):
            fields, whole = [], False
        elif line in (b"\r\n", b"\n"):
            whole = True
        elif whole:
            break  # the trailers
        else:
            fields.append(line)
    return fields, whole


def _refused(lines: list[bytes]) -> Dropped | None:
    """Why an answer libcurl read is refused: a head it took as ended by the connection's
    close (not whole), or one of more than ``MAX_FIELDS`` fields; None for an answer
    whose head ends with its empty line as usual and has few lines (no closer look)."""
    if lines[-1:] == [b"\r\n"] and len(lines) <= MAX_FIELDS + 2:
        return None
    fields, whole = final_head(lines)
    if not whole:
        return Dropped("the connection closed inside the head")
    if len(fields) > MAX_FIELDS:
        return Dropped(f"more than {MAX_FIELDS} header fields")
    return None


def _failure(code: int, head_read: bool) -> ExchangeError:
    """The vocabulary's error for libcurl's code: no connection, no whole head, or a body
    that failed after the head."""
    name = f"curl error {code}" + (f" ({CAUSES[code]})" if code in CAUSES else "")
    if code == TIMED_OUT:
        return TimedOut(name)
    if code in NOT_CONNECTED:
        return Refused(name)
    if head_read:  # the head was read: the engine may have done the work
        return BadAnswer(name)
    return Dropped(name)  # closed, reset, too large or not HTTP before the head


@cache
def _system_roots() -> bytes:
    """The system's trusted certificates (the PEM file the standard library's OpenSSL
    reads), empty when there is none."""
    paths = ssl.get_default_verify_paths()
    for path in (paths.cafile, paths.openssl_cafile):
        if path and os.path.isfile(path):
            with open(path, "rb") as file:
                return file.read()
    return b""


class _Multi:
    """libcurl's multi interface on one event loop: its sockets watched for the loop, its
    timer kept as one ``call_at``, its finished transfers handed to their futures.

    On Linux the sockets libcurl waits on are kept in an epoll set of the multi's own,
    which the loop watches as one file: a socket stays in it while its connection is
    idle, so that a kept connection is not taken out of the loop and put back for every
    exchange. libcurl closes sockets without saying so (pycurl cannot always call back
    when it does): a closed socket leaves the set by itself, a number used again by
    libcurl is put back in, and one used again by anything else is never in the set, so
    nothing outside libcurl is ever watched or unwatched by it. Elsewhere each socket is
    the loop's reader or writer while libcurl waits on it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, max_connections: int,
                 keepalive: float) -> None:
        self.loop = loop
        self._keepalive = keepalive
        multi = self.multi = pycurl.CurlMulti()
        multi.setopt(pycurl.M_SOCKETFUNCTION, self._socket)
        multi.setopt(pycurl.M_TIMERFUNCTION, self._timer)
        multi.setopt(pycurl.M_MAX_HOST_CONNECTIONS, max_connections)
        multi.setopt(pycurl.M_MAX_TOTAL_CONNECTIONS, max_connections)
        multi.setopt(pycurl.M_MAXCONNECTS, max_connections)
        self.transfers: dict[pycurl.Curl, _Handle] = {}
        self._waits: dict[int, int] = {}  # the sockets libcurl waits on: what for
        self._set = select.epoll() if EPOLL else None
        self._idle: dict[int, float] = {}  # in the set, their connection idle: since when
        self._sweep: asyncio.TimerHandle | None = None
        if self._set is not None:
            loop.add_reader(self._set.fileno(), self._ready)
        self._due: float | None = None  # when libcurl next wants its timer
        self._wake: asyncio.TimerHandle | asyncio.Handle | None = None
        self._wake_at = 0.0
        self.closed = False

    # -- what libcurl asks of the loop -----------------------------------------------------

    def _socket(self, what: int, fd: int, multi: object, data: object) -> None:
        """libcurl's ``SOCKETFUNCTION``: what it now waits for on ``fd``."""
        waits = self._waits
        before = waits.pop(fd, 0)
        if what != REMOVE:
            waits[fd] = what
        watched = self._set
        if watched is None:
            self._watch(fd, before, 0 if what == REMOVE else what)
        elif what != REMOVE:
            self._idle.pop(fd, None)
            mask = (select.EPOLLIN if what & IN else 0) | (select.EPOLLOUT if what & OUT else 0)
            try:
                watched.modify(fd, mask)  # in the set already, unless closed since
            except FileNotFoundError:
                watched.register(fd, mask)
        else:  # the socket stays in the set while its connection is idle (or closed)
            self._idle[fd] = self.loop.time()
            if self._sweep is None:
                self._sweep = self.loop.call_at(self._idle[fd] + self._keepalive,
                                                self._swept)

    def _end_idle(self, fd: int) -> None:
        """An idle connection's socket (still in the set: libcurl's) shut down and out of
        the set: libcurl finds it closed when it next picks it, and opens another."""
        assert self._set is not None
        self._idle.pop(fd, None)
        with contextlib.suppress(OSError):
            self._set.unregister(fd)
        _shut_down(fd)

    def _swept(self) -> None:
        """The connections idle for ``keepalive`` ended; the next sweep set for the first
        to reach it."""
        self._sweep = None
        if self.closed or self._set is None:
            return
        now = self.loop.time()
        for fd, since in list(self._idle.items()):
            if now - since < self._keepalive:
                continue
            try:
                self._set.modify(fd, select.EPOLLIN)  # still in the set: still libcurl's
            except OSError:
                del self._idle[fd]  # closed by libcurl since: its number is not ours
                continue
            self._end_idle(fd)
        if self._idle:
            self._sweep = self.loop.call_at(min(self._idle.values()) + self._keepalive,
                                            self._swept)

    def _ready(self) -> None:
        """The multi's epoll set has sockets ready: each handed to libcurl; the connection
        of an idle one (closed by the engine, or sent bytes nobody asked for, such as a
        408 before the engine closes it) is ended, so that no request is sent on it."""
        assert self._set is not None
        waits = self._waits
        ready = []
        for fd, events in self._set.poll(0):
            if fd not in waits:  # its connection idle: nothing may come on it now
                self._end_idle(fd)
                continue
            ready.append((fd, (pycurl.CSELECT_IN if events & EPOLL_IN else 0)
                          | (pycurl.CSELECT_OUT if events & select.EPOLLOUT else 0)
                          | (pycurl.CSELECT_ERR if events & EPOLL_ERR else 0)))
        for fd, events in ready:
            self._act(fd, events)

    def _watch(self, fd: int, before: int, what: int) -> None:
        """Without epoll: ``fd`` the loop's reader and writer as libcurl now waits."""
        loop = self.loop
        if before & IN and not what & IN:
            loop.remove_reader(fd)
        if before & OUT and not what & OUT:
            loop.remove_writer(fd)
        if what & IN and not before & IN:
            loop.add_reader(fd, self._act, fd, pycurl.CSELECT_IN)
        if what & OUT and not before & OUT:
            loop.add_writer(fd, self._act, fd, pycurl.CSELECT_OUT)

    def _timer(self, ms: int) -> None:
        """libcurl's ``TIMERFUNCTION``: when it next wants ``socket_action`` with no
        socket (-1: never). One wake-up is kept, moved only to an earlier time; one that
        comes early is set again for the time then due."""
        if ms < 0:
            self._due = None
            return
        due = self.loop.time() + ms / 1000
        self._due = due
        if self._wake is None or due < self._wake_at:
            self._arm(due, ms == 0)

    def _arm(self, at: float, now: bool) -> None:
        if self._wake is not None:
            self._wake.cancel()
        self._wake_at = at
        self._wake = (self.loop.call_soon(self._woken) if now
                      else self.loop.call_at(at, self._woken))

    def _woken(self) -> None:
        self._wake = None
        due = self._due
        if due is None or self.closed:
            return
        if due > self.loop.time():
            self._arm(due, False)
            return
        self._act(pycurl.SOCKET_TIMEOUT, 0)

    def _act(self, fd: int, events: int) -> None:
        multi = self.multi
        while multi.socket_action(fd, events)[0] == pycurl.E_CALL_MULTI_PERFORM:
            pass
        while True:
            queued, finished, failed = multi.info_read()
            for curl in finished:
                self._finish(curl, None)
            for curl, code, _message in failed:
                self._finish(curl, code)
            if not queued:
                return

    def _finish(self, curl: pycurl.Curl, code: int | None) -> None:
        handle = self.transfers.pop(curl, None)
        refused = None if code is not None or handle is None else _refused(handle.lines)
        if refused is not None:
            _end_connection(curl)  # before the handle leaves the multi, which knows it
        self.multi.remove_handle(curl)
        future = handle.future if handle is not None else None
        if handle is None or future is None or future.done():
            return
        if refused is not None:
            future.set_exception(refused)
        elif code is None:
            future.set_result(None)
        elif curl.getinfo(pycurl.HTTP_CONNECTCODE) not in (0, 200):
            # a proxy refused the tunnel: the head read was its own, never the engine's
            future.set_exception(Refused(f"curl error {code} (proxy refused the tunnel)"))
        else:
            future.set_exception(_failure(code, final_head(handle.lines)[1]))

    # -- what the client asks --------------------------------------------------------------

    def start(self, handle: _Handle) -> asyncio.Future[None]:
        """The transfer added: libcurl asks for its timer at 0 ms, and begins the transfers
        added meanwhile together on the loop's next turn."""
        future = handle.future = self.loop.create_future()
        self.transfers[handle.curl] = handle
        self.multi.add_handle(handle.curl)
        return future

    def abandon(self, handle: _Handle) -> None:
        """A transfer its caller stopped waiting for (cancelled): taken out of libcurl,
        which closes its connection when it was in the middle of it."""
        if self.transfers.pop(handle.curl, None) is not None:
            with contextlib.suppress(pycurl.error):
                self.multi.remove_handle(handle.curl)

    def close(self) -> None:
        self.closed = True
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
        for handle in list(self.transfers.values()):
            self.abandon(handle)
            if handle.future is not None and not handle.future.done():
                handle.future.set_exception(Dropped("the client was closed"))
        with contextlib.suppress(Exception):  # the loop may be closed already
            if self._set is not None:
                self.loop.remove_reader(self._set.fileno())
            else:
                for fd, what in self._waits.items():
                    self._watch(fd, what, 0)
        self._waits.clear()
        self.multi.close()  # closes the idle connections
        if self._set is not None:
            self._set.close()


class EngineClient:
    """Exchanges with one origin (``http://host:port``), through ``proxy`` when given."""

    def __init__(self, origin: str, *, max_connections: int, keepalive_seconds: float,
                 tls: Tls = SYSTEM_TLS, proxy: str | None = None,
                 connect_to: str | None = None) -> None:
        """``tls``: verification and a CA to trust besides the system's; ``proxy``: an
        http:// proxy URL, its credentials (``http://user:pass@host:port``) sent as
        ``Proxy-Authorization``; ``connect_to``: ``host:port`` where every connection is
        made instead of the origin's address, the origin's name kept in the request and
        its TLS check (the contract tests send every engine host to a loopback server)."""
        self.origin = origin.rstrip("/")
        self._tls = tls
        self._max_connections = max_connections
        self._keepalive = keepalive_seconds
        self._proxy = proxy
        self._connect_to = connect_to
        self._multi: _Multi | None = None
        self._busy = 0  # exchanges holding one of the ``max_connections`` places
        self._waiting: deque[asyncio.Future[None]] = deque()  # the others, in turn
        self._spare: dict[tuple[str, bool], list[_Handle]] = {}  # by (method, body)
        self._header_lists: dict[tuple[tuple[str, str], ...], list[str]] = {}
        self._ca_blob: bytes | None = None
        if tls.verify and tls.ca_pem is not None:
            self._ca_blob = _system_roots() + b"\n" + tls.ca_pem

    def _multi_here(self) -> _Multi:
        multi, loop = self._multi, running_loop()
        if multi is None or multi.loop is not loop:
            if multi is not None:
                self._close_multi(multi)
            multi = self._multi = _Multi(loop, self._max_connections, self._keepalive)
        return multi

    def _close_multi(self, multi: _Multi) -> None:
        spare, self._spare = self._spare, {}
        multi.close()
        for handles in spare.values():
            for handle in handles:
                handle.curl.close()

    def _handle(self, method: str, with_body: bool) -> _Handle:
        """An idle handle for ``method`` with or without a body, else a new one."""
        handles = self._spare.get((method, with_body))
        if handles:
            return handles.pop()
        curl = pycurl.Curl()
        curl.setopt(pycurl.NOSIGNAL, 1)
        curl.setopt(pycurl.PROTOCOLS, pycurl.PROTO_HTTP | pycurl.PROTO_HTTPS)
        curl.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_1)
        curl.setopt(pycurl.FOLLOWLOCATION, 0)
        curl.setopt(pycurl.USERAGENT, USER_AGENT)
        curl.setopt(pycurl.ACCEPT_ENCODING, "")  # every coding this libcurl decodes
        # without the epoll set an idle connection is not watched, and libcurl looks at one
        # before using it again only after a second of idleness: none older is reused, so
        # that nothing an engine sent on it meanwhile is read as the next answer
        curl.setopt(pycurl.MAXAGE_CONN,
                    max(1, round(self._keepalive if EPOLL else min(self._keepalive, 1.0))))
        curl.setopt(pycurl.BUFFERSIZE, READ_SIZE)
        curl.setopt(pycurl.PROXY, self._proxy or "")  # "": none, not the environment's
        if self._connect_to is not None:
            curl.setopt(pycurl.CONNECT_TO, [f"::{self._connect_to}"])
        if not self._tls.verify:
            curl.setopt(pycurl.SSL_VERIFYPEER, 0)
            curl.setopt(pycurl.SSL_VERIFYHOST, 0)
        elif self._ca_blob is not None:
            curl.setopt(pycurl.CAINFO_BLOB, self._ca_blob)
        else:
            roots = _system_roots()
            if roots:
                curl.setopt(pycurl.CAINFO_BLOB, roots)
        if method == "GET" and not with_body:
            curl.setopt(pycurl.HTTPGET, 1)
        elif method == "HEAD" and not with_body:
            curl.setopt(pycurl.NOBODY, 1)
        elif with_body:
            curl.setopt(pycurl.POST, 1)
            if method != "POST":
                curl.setopt(pycurl.CUSTOMREQUEST, method)
        else:
            curl.setopt(pycurl.CUSTOMREQUEST, method)
        return _Handle(curl)

    def _header_list(self, headers: Mapping[str, str], with_body: bool) -> list[str]:
        key = (*headers.items(), ("", "body" if with_body else ""))
        lines = self._header_lists.get(key)
        if lines is None:
            lines = []
            for name, value in headers.items():
                if (not name or any(c in name for c in ":\r\n\0 \t")
                        or any(c in value for c in "\r\n\0")):
                    raise ValueError("a header that cannot be sent")
                lines.append(f"{name}: {value}")
            names = {name.lower() for name in headers}
            # what libcurl would add on its own and an engine must not see
            lines.append("Expect:")
            if with_body and "content-type" not in names:
                lines.append("Content-Type:")
            if "accept" not in names:
                lines.append("Accept:")
            if len(self._header_lists) >= 64:
                self._header_lists.clear()
            self._header_lists[key] = lines
        return lines

    async def exchange(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes | None, timeout: float) -> Answer:
        """The whole answer, decompressed. ``ValueError`` (nothing sent) for a URL on
        another origin or a line break in a header value."""
        if not url.startswith(self.origin) or url[len(self.origin):][:1] not in ("", "/", "?"):
            raise ValueError("the URL is not on this client's origin")
        with_body = body is not None or method not in BODILESS
        header_list = self._header_list(headers, with_body)
        multi = self._multi_here()
        if self._busy < self._max_connections and not self._waiting:
            self._busy += 1
        else:
            timeout = await self._turn(multi.loop, timeout)
        try:
            handle = self._handle(method, with_body)
            curl = handle.curl
            timeout_ms = max(1, round(timeout * 1000))
            try:
                curl.setopt(pycurl.URL, _sendable(url))
                if handle.header_list is not header_list:
                    curl.setopt(pycurl.HTTPHEADER, header_list)
                    handle.header_list = header_list
                if with_body:
                    curl.setopt(pycurl.POSTFIELDS, body or b"")
                if handle.timeout_ms != timeout_ms:
                    curl.setopt(pycurl.TIMEOUT_MS, timeout_ms)
                    handle.timeout_ms = timeout_ms
            except (pycurl.error, UnicodeEncodeError):
                curl.close()
                raise ValueError("a request that cannot be sent") from None
            try:
                await multi.start(handle)
            except BaseException:
                multi.abandon(handle)
                curl.close()
                raise
            lines, content = handle.taken()
            handle.future = None
            status = curl.getinfo(pycurl.RESPONSE_CODE)
            self._spare.setdefault((method, with_body), []).append(handle)
            return Answer(status, Headers(lines), content)
        finally:
            self._release()

    async def _turn(self, loop: asyncio.AbstractEventLoop, timeout: float) -> float:
        """A place among the ``max_connections``, in the order asked (libcurl's own queue
        is not first come, first served); what is left of ``timeout`` then."""
        turn = loop.create_future()
        self._waiting.append(turn)
        started = loop.time()
        try:
            async with asyncio.timeout(timeout):
                await turn
        except TimeoutError:
            raise TimedOut("no connection was free in time") from None
        except BaseException:
            if turn.done() and not turn.cancelled():
                self._release()  # handed a place while leaving: the next one's
            raise
        finally:
            turn.cancel()  # no longer waiting (nothing if it was handed its place)
        return max(0.001, timeout - (loop.time() - started))

    def _release(self) -> None:
        """A place given back: handed to the first still waiting, if any."""
        waiting = self._waiting
        while waiting:
            turn = waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self._busy -= 1

    async def aclose(self) -> None:
        multi, self._multi = self._multi, None
        if multi is not None:
            self._close_multi(multi)


def _end_connection(curl: pycurl.Curl) -> None:
    """The connection of an answer just refused shut down (libcurl would keep it; it finds
    it closed if it picks it again): it is never used for another exchange."""
    with contextlib.suppress(pycurl.error):
        fd = curl.getinfo(pycurl.ACTIVESOCKET)
        if fd >= 0:
            _shut_down(fd)


def _shut_down(fd: int) -> None:
    """The connection of libcurl's socket ``fd`` shut down both ways (the socket stays
    libcurl's to close)."""
    with contextlib.suppress(OSError), socket.socket(fileno=os.dup(fd)) as kept:
        kept.shutdown(socket.SHUT_RDWR)


def _sendable(url: str) -> str:
    """The URL with what cannot travel in a request line percent-encoded (non-ASCII as
    UTF-8, spaces), as browsers and other HTTP clients send such a path; what is already
    percent-encoded and every delimiter kept."""
    if url.isascii() and " " not in url:
        return url
    return quote(url, safe=URL_SAFE)
