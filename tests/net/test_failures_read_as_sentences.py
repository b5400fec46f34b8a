"""A failed outgoing call reads as a sentence everywhere: never an httpx class name."""

import socket
import threading

import httpx
import pytest

from foldrun import net


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_a_refused_connection_says_nothing_is_listening():
    with pytest.raises(httpx.HTTPError) as caught:
        httpx.get(f"http://127.0.0.1:{_closed_port()}/", timeout=2)
    assert net.describe(caught.value) == "nothing is listening there (connection refused)"


def test_a_server_that_hangs_up_mid_answer_is_said_so():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]

    def hang_up():
        conn, _ = server.accept()
        conn.recv(1024)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
        conn.close()

    threading.Thread(target=hang_up, daemon=True).start()
    with pytest.raises(httpx.HTTPError) as caught:
        httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
    server.close()
    assert net.describe(caught.value) == "the server closed the connection before a whole answer"


@pytest.mark.parametrize(
    "exc, sentence",
    [
        (httpx.ConnectTimeout("x"), "the connection timed out"),
        (httpx.ReadTimeout("x"), "no answer came in time"),
        (httpx.TooManyRedirects("x"), "it redirected too many times"),
        (httpx.UnsupportedProtocol("x"), "the URL is not an http or https address"),
        (
            httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"),
            "its TLS certificate could not be verified",
        ),
        (RuntimeError("boom"), "the request failed"),
    ],
)
def test_each_kind_of_failure_has_its_sentence_and_no_class_name(exc, sentence):
    said = net.describe(exc)
    assert said == sentence
    assert type(exc).__name__ not in said


def test_the_guards_own_refusal_is_passed_through_unchanged():
    refusal = net.PrivateAddress("intranet.example", "10.0.0.1")
    assert net.describe(refusal) == str(refusal)
