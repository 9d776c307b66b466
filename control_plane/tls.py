"""TLS settings of one P4Runtime device: the CA that signs the device's
certificate, this controller's certificate and key (mutual TLS), and an
optional name to check the device's certificate against.

The same object serves the topology file's `devices[i].tls`, mrcctl's
`--tls-*` flags and any other place that names a device. Files are read and
checked when the settings are loaded, so a bad path or a key that does not
belong to its certificate is an error naming the field before anything
touches a device. Whether a certificate has expired is left to the device,
which judges it at connection time (control_plane.tls_errors then says why
it refused). docs/tls.md is the lab guide.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from pydantic import Field

from control_plane import grpc_address
from control_plane.config import MAX_FILE_BYTES, ConfigError, Model, read_regular, short

LOG = logging.getLogger("control_plane.tls")

if TYPE_CHECKING:
    import finsy as fy

KEYS = ("ca_cert", "cert", "key", "server_name")


TlsError = ConfigError  # the old name: callers catch it


class TlsFile(Model):
    """`devices[i].tls` as the file writes it (the files are checked by `load`)."""

    ca_cert: str | None = Field(None, description="the CA certificate that signed the device's certificate")
    cert: str | None = Field(None, description="this controller's certificate (mutual TLS; with key)")
    key: str | None = Field(None, description="this controller's private key (mutual TLS; with cert)")
    server_name: str | None = Field(None, description="the name to check the device's certificate against")


@dataclass(frozen=True)
class TlsSettings:
    """Checked TLS settings (absolute paths). Build with `load` or
    `from_fields`; constructing one directly skips the file checks."""

    ca_cert: Path
    cert: Path | None = None
    key: Path | None = None
    server_name: str | None = None

    def credentials(self) -> fy.GRPCCredentialsTLS:
        """finsy channel credentials (read from the files now)."""
        import finsy as fy  # finsy only when a device is contacted

        return fy.GRPCCredentialsTLS(
            cacert=self.ca_cert,
            cert=self.cert,
            private_key=self.key,
            target_name_override=self.server_name or "",
        )


def load(raw: Any, path: str, base: Path = Path(".")) -> TlsSettings:
    """TlsSettings from a YAML mapping {ca_cert, cert, key, server_name} at
    field path `path` (e.g. "devices[0].tls"); relative file paths are taken
    from `base` (the topology file's folder). Raise TlsError naming the field."""
    if not isinstance(raw, Mapping):
        raise TlsError(path, f"expected a mapping with {', '.join(KEYS)}, got {short(raw)}")
    unknown = [(f"{path}.{key}", f"unknown key (expected {', '.join(KEYS)})") for key in raw if key not in KEYS]
    if unknown:
        raise TlsError.of(unknown)
    return from_fields(dict(raw), {k: f"{path}.{k}" for k in KEYS}, base)


def from_fields(values: Mapping[str, Any], names: Mapping[str, str], base: Path = Path(".")) -> TlsSettings:
    """TlsSettings from `values` keyed by KEYS (None: not given); `names`
    says how each field is called in errors (a field path, a flag)."""
    given = {k: values.get(k) for k in KEYS}
    errors = [(names[k], f"expected a {'name' if k == 'server_name' else 'file path'}, got {short(v)}")
              for k, v in given.items() if v is not None and (not isinstance(v, str | Path) or not str(v))]
    if given["ca_cert"] is None:
        errors.append((names["ca_cert"], "missing: the CA certificate that signed the device's certificate"))
    if (given["cert"] is None) != (given["key"] is None):
        have, lack = ("cert", "key") if given["key"] is None else ("key", "cert")
        errors.append((names[lack], f"missing: {names[have]} is given, and a client certificate needs both "
                                    "cert and key"))
    if errors:
        raise TlsError.of(errors)
    ca = cert = key = None
    for check in (lambda: _ca(given["ca_cert"], names["ca_cert"], base),
                  lambda: _pair(given, names, base)):  # both checked, every mistake reported
        try:
            got = check()
        except TlsError as exc:
            errors += exc.errors
            continue
        if isinstance(got, Path):
            ca = got
        elif got is not None:
            cert, key = got
    if errors or ca is None:  # ca_cert was given (checked above): _ca returned its path or raised
        raise TlsError.of(errors)
    server_name = str(given["server_name"]) if given["server_name"] is not None else None
    return TlsSettings(ca_cert=ca, cert=cert, key=key, server_name=server_name)


def _ca(value: Any, name: str, base: Path) -> Path:
    ca = _file(value, name, base)
    _certificates(ca, name)
    return ca


def _pair(given: Mapping[str, Any], names: Mapping[str, str], base: Path) -> tuple[Path, Path] | None:
    if given["cert"] is None:
        return None
    cert = _file(given["cert"], names["cert"], base)
    key = _file(given["key"], names["key"], base)
    leaf = _certificates(cert, names["cert"])[0]
    _check_key(key, names["key"], leaf, names["cert"], cert)
    warning = key_mode_warning(names["key"], key)
    if warning:
        LOG.warning(warning)
    return cert, key


def key_mode_warning(name: str, path: Path) -> str | None:
    """The one-line warning for a private key that others may read (a
    key that leaks lets anyone act as this controller), else None."""
    mode = path.stat().st_mode & 0o077
    if not mode:
        return None
    return (f"{name}: {path} is readable by {'others' if mode & 0o007 else 'its group'} "
            f"(mode {path.stat().st_mode & 0o777:o}): chmod 600 it")


def from_flags(values: Mapping[str, Any], prefix: str) -> TlsSettings | None:
    """TlsSettings from command-line flags named `{prefix}ca-cert`, ...
    (`values` keyed by KEYS, None where not given); None if none is given."""
    if all(values.get(k) is None for k in KEYS):
        return None
    return from_fields(values, {k: f"{prefix}{k.replace('_', '-')}" for k in KEYS})


def _file(value: Any, name: str, base: Path) -> Path:
    path = (base / Path(str(value)).expanduser()).resolve()
    if not path.exists():
        raise TlsError(name, f"file not found: {path}")
    try:
        raw = read_regular(path, MAX_FILE_BYTES, name)  # the one check of every file a CLI reads
    except TlsError as exc:
        raise TlsError(name, exc.reason.replace("cannot read:", f"cannot read {path}:")) from None
    if len(raw) > MAX_FILE_BYTES:  # a certificate or key is a few KiB
        raise TlsError(name, f"larger than {MAX_FILE_BYTES >> 20} MiB, not a PEM file: {path}")
    return path


def read_certificates(path: Path) -> list[x509.Certificate]:
    """Every certificate of a PEM file (a CA bundle or a chain); [] if none."""
    try:
        return x509.load_pem_x509_certificates(path.read_bytes())
    except ValueError:
        return []


def _certificates(path: Path, name: str) -> list[x509.Certificate]:
    certs = read_certificates(path)
    if not certs:
        raise TlsError(name, f"not a PEM certificate: {path}")
    return certs


def _check_key(path: Path, name: str, leaf: x509.Certificate, cert_name: str, cert_path: Path) -> None:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except TypeError:  # gRPC cannot ask for a passphrase
        raise TlsError(name, f"encrypted private keys are not supported: {path}") from None
    except (ValueError, UnsupportedAlgorithm):
        raise TlsError(name, f"not a PEM private key: {path}") from None
    der = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(*der) != leaf.public_key().public_bytes(*der):
        raise TlsError(name, f"{path} is not the key of the certificate in {cert_name} ({cert_path})")


def host_of(grpc_addr: str) -> str:
    """The host part of host:port ([v6]:port too; a Unix socket's path)."""
    try:
        where = grpc_address.parse(grpc_addr)
    except ValueError:
        return grpc_addr.rpartition(":")[0].strip("[]")  # a Device built in code: its text as written
    return where.path or where.host


def is_loopback(grpc_addr: str) -> bool:
    try:
        return grpc_address.parse(grpc_addr).is_local
    except ValueError:
        return False


def plaintext_warning(name: str, grpc_addr: str, settings: TlsSettings | None) -> str | None:
    """The one-line warning for a device reached without TLS away from
    loopback (None when TLS is set or the address is loopback)."""
    if settings is not None or is_loopback(grpc_addr):
        return None
    return (f"{name} ({grpc_addr}): plaintext P4Runtime, no tls settings: "
            "anyone who reaches this address can rewrite the device's tables")
