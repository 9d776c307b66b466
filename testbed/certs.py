"""Throwaway certificates for TLS tests and lab trials: a CA, switch (server)
and controller (client) certificates, written as PEM files.

Test harness only: it needs the `cryptography` package (the test extra),
and its keys are for a test's tmp_path, never for a real fabric (see
docs/tls.md for how a lab makes its own). EC P-256 keys: fast to make.

    python -m testbed.certs OUT_DIR [--server-name NAME ...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class Issued:
    """A certificate and its key, as PEM files."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Ca:
    """A certificate authority that can issue certificates."""

    name: str
    cert: Path
    key: Path
    _cert: x509.Certificate
    _key: ec.EllipticCurvePrivateKey

    def issue(self, out: Path, stem: str, *, server_names: tuple[str, ...] = (), client: bool = False,
              not_before: dt.datetime | None = None, not_after: dt.datetime | None = None) -> Issued:
        """A leaf certificate signed by this CA: a server one naming
        `server_names` (DNS names or IP addresses) in its SAN, or a client
        one (`client`). Validity defaults to yesterday..+30 days; pass dates
        in the past to make an expired one."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, stem)]))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before or now - DAY)
            .not_valid_after(not_after or now + 30 * DAY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if server_names:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([_san(n) for n in server_names]), critical=False
            )
        cert = builder.sign(self._key, hashes.SHA256())
        return Issued(_write_cert(out / f"{stem}.crt", cert), _write_key(out / f"{stem}.key", key))


def make_ca(out: Path, name: str = "mrc-test-ca") -> Ca:
    """A self-signed CA valid from yesterday for a year, written to OUT/NAME.crt|key."""
    out.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - DAY)
        .not_valid_after(now + 365 * DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return Ca(name, _write_cert(out / f"{name}.crt", cert), _write_key(out / f"{name}.key", key), cert, key)


def _san(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _write_cert(path: Path, cert: x509.Certificate) -> Path:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> Path:
    path.touch(mode=0o600)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m testbed.certs", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="folder for the PEM files (keep it out of the repository)")
    ap.add_argument("--server-name", action="append", default=[],
                    help="DNS name or IP address for the switch certificate (repeatable; default localhost, 127.0.0.1)")
    args = ap.parse_args(argv)
    ca = make_ca(args.out)
    server = ca.issue(args.out, "switch", server_names=tuple(args.server_name or ["localhost", "127.0.0.1"]))
    client = ca.issue(args.out, "controller", client=True)
    for what, path in (("CA certificate", ca.cert), ("switch certificate", server.cert), ("switch key", server.key),
                       ("controller certificate", client.cert), ("controller key", client.key)):
        print(f"{what}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
