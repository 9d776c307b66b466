"""Why a device refused a P4Runtime connection, in TLS terms.

gRPC reports a failed TLS connection tersely, and a device that refuses the
client's certificate (BMv2's gRPC 1.51 server, for one) closes the TCP
connection without a TLS alert, so gRPC only says "Socket closed". For those
cases a short probe with Python's ssl module repeats the handshake to see
what the device did (completed it and then hung up: it refused our
certificate; answered a plaintext client with TLS: it requires TLS), and
the controller's own files say why its certificate may be unacceptable.
"""

from __future__ import annotations

import datetime as dt
import socket
import ssl

from cryptography import x509

from control_plane.tls import TlsSettings, host_of, read_certificates

PROBE_TIMEOUT = 3.0


def explain(grpc_addr: str, settings: TlsSettings | None, message: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """The TLS cause of a failed connection to the device at `grpc_addr`,
    given gRPC's `message` (the caller names the device), or None when the
    failure is not a TLS matter. May probe the device (blocks up to
    `timeout` seconds)."""
    where = f"at {grpc_addr}"
    if settings is None:
        if "Socket closed" in message and _speaks_tls(grpc_addr, timeout):
            return (f"plaintext refused {where}: the device requires TLS (it answered a TLS handshake); "
                    "give its tls settings (ca_cert, cert, key)")
        return None
    if "CERTIFICATE_VERIFY_FAILED" in message:
        detail = message.split("CERTIFICATE_VERIFY_FAILED:", 1)[1].split(": OK")[0].strip()
        return (f"TLS handshake failed {where}: the device's certificate is not trusted by "
                f"tls.ca_cert ({settings.ca_cert}): {detail}")
    if "Hostname Verification" in message:
        target = settings.server_name or host_of(grpc_addr)
        return (f"TLS handshake failed {where}: the device's certificate does not name {target!r}"
                + ("" if settings.server_name else " (set tls.server_name to a name it holds)"))
    if "WRONG_VERSION_NUMBER" in message:
        return f"TLS handshake failed {where}: the device does not speak TLS there (a plaintext P4Runtime server?)"
    if "Socket closed" in message or "Connection reset" in message:
        verdict = _client_refused(grpc_addr, settings, timeout)
        if verdict:
            return f"TLS refused {where}: {verdict}"
    if "handshake" in message.lower() or "SSL" in message:
        return f"TLS handshake failed {where}: {message}"
    return None


def _endpoint(grpc_addr: str) -> tuple[str, int]:
    return host_of(grpc_addr), int(grpc_addr.rpartition(":")[2])


def _speaks_tls(grpc_addr: str, timeout: float) -> bool:
    """Whether the device completes a TLS handshake (nothing verified, no
    certificate sent, nothing written after it)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    try:
        with socket.create_connection(_endpoint(grpc_addr), timeout=timeout) as raw:
            with ctx.wrap_socket(raw, server_hostname=host_of(grpc_addr)):
                return True
    except (OSError, ssl.SSLError):
        return False


def _client_refused(grpc_addr: str, s: TlsSettings, timeout: float) -> str | None:
    """Handshake with the controller's own settings and read: the device
    speaks first in HTTP/2, so end of stream instead means it refused this
    client. The reason, or None if the device accepted."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(cafile=str(s.ca_cert))
    if s.cert and s.key:
        ctx.load_cert_chain(str(s.cert), str(s.key))
    ctx.set_alpn_protocols(["h2"])
    alert = ""
    try:
        with socket.create_connection(_endpoint(grpc_addr), timeout=timeout) as raw:
            with ctx.wrap_socket(raw, server_hostname=s.server_name or host_of(grpc_addr)) as tls:
                if tls.recv(1):
                    return None
    except ssl.SSLCertVerificationError:
        return None  # the device's side: gRPC has said so already
    except ssl.SSLEOFError:
        pass  # TLS 1.2: hung up in the handshake, once it had our certificate
    except ssl.SSLError as exc:  # a device that sends an alert names the cause
        alert = f" (alert: {exc.reason})"
    except OSError:
        return None
    return "the device refused this controller's client certificate" + alert + ": " + client_cert_problem(s)


def client_cert_problem(s: TlsSettings, now: dt.datetime | None = None) -> str:
    """What is wrong with the controller's certificate, judged from its files."""
    if s.cert is None:
        return "none was given (tls.cert and tls.key are not set) and the device requires one"
    now = now or dt.datetime.now(dt.UTC)
    leaf = read_certificates(s.cert)[0]
    when = "%Y-%m-%d %H:%M:%S UTC"
    if leaf.not_valid_after_utc < now:
        return f"{s.cert} expired on {leaf.not_valid_after_utc.strftime(when)}"
    if leaf.not_valid_before_utc > now:
        return f"{s.cert} is not valid before {leaf.not_valid_before_utc.strftime(when)}"
    cas = read_certificates(s.ca_cert)
    issuer = leaf.issuer.rfc4514_string()
    if not any(_issued_by(leaf, ca) for ca in cas):
        names = ", ".join(repr(ca.subject.rfc4514_string()) for ca in cas)
        return f"{s.cert} is issued by {issuer!r}, not by the CA in tls.ca_cert ({names})"
    return (f"{s.cert} (issued by {issuer!r}, valid until {leaf.not_valid_after_utc.strftime(when)}): "
            "the device may trust another CA for its clients, or check other fields")


def _issued_by(leaf: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        leaf.verify_directly_issued_by(ca)
    except Exception:  # ValueError (names), TypeError (key type), InvalidSignature
        return False
    return True
