"""HTTPS on loopback: a certificate for `localhost` signed by a throwaway CA, and a `LoopbackServer` that speaks
TLS with it. A client made to trust `ca` (the CA's PEM file) verifies the name; a browser told to ignore
certificate errors reaches it as any HTTPS site."""

from __future__ import annotations

import datetime as dt
import ssl
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.fakes.loopback import LoopbackServer


def localhost_certificate(folder: Path) -> tuple[Path, Path, Path]:
    """(the CA's PEM, the certificate's PEM, its key's PEM), written in `folder`; a day either side of now."""
    now = dt.datetime.now(dt.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "foldrun test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(2)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


class TlsLoopbackServer(LoopbackServer):
    """`LoopbackServer` over TLS on 127.0.0.1, its certificate for localhost: `host` is `localhost:port`, `url`
    its https URL, `ca` the CA's PEM file (written in `folder`)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], folder: Path) -> None:
        super().__init__(handler)
        self.ca, cert, key = localhost_certificate(folder)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.host = f"localhost:{self.port}"
        self.url = f"https://{self.host}"
