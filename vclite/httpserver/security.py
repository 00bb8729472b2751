"""Credentials on disk: the bearer token, the kubeconfig, and the TLS certificate.

All in the server's data directory:
- `token`: generated at first start (256 random bits, URL-safe), mode 0600, reused afterwards;
- `kubeconfig`: rewritten at every start (the address may change) with the server URL, the
  token and, with TLS, the CA certificate; mode 0600 since it carries the token;
- `tls/ca.crt`, `tls/ca.key`, `tls/server.crt`, `tls/server.key`: a self-signed CA and a server
  certificate for the served address, localhost and 127.0.0.1, generated when TLS is wanted and
  no certificate is given (keys 0600); regenerated when the address is not covered.
Loopback addresses may serve plain HTTP; any other address requires TLS.
"""
from __future__ import annotations

import base64
import datetime
import hmac
import ipaddress
import os
import pathlib
import secrets
import socket
import ssl

import yaml

TOKEN_FILE = "token"
KUBECONFIG_FILE = "kubeconfig"
TLS_DIR = "tls"
CONTEXT = "vclite"


def write_private(path: pathlib.Path, data: bytes) -> None:
    """Write a file readable by its owner only (created 0600, never world-readable meanwhile)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def load_or_create_token(data_dir: pathlib.Path) -> str:
    path = data_dir / TOKEN_FILE
    if path.exists():
        token = path.read_text().strip()
        if token:
            os.chmod(path, 0o600)
            return token
    token = secrets.token_urlsafe(32)
    write_private(path, token.encode() + b"\n")
    return token


def token_matches(header: str | None, token: str) -> bool:
    """`Authorization: Bearer <token>` (the scheme in any case, as kube-apiserver reads it), compared in
    constant time."""
    scheme, _, given = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


def is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def client_host(address: str) -> str:
    """The host a local client should dial: the address itself, or loopback for a wildcard bind."""
    if address in ("0.0.0.0", ""):
        return "127.0.0.1"
    if address == "::":
        return "::1"
    return address


def url(address: str, port: int, tls: bool) -> str:
    host = client_host(address)
    if ":" in host:
        host = f"[{host}]"
    return f"{'https' if tls else 'http'}://{host}:{port}"


def kubeconfig(server_url: str, token: str, ca_pem: bytes | None) -> dict:
    cluster: dict = {"server": server_url}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {"apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": CONTEXT, "cluster": cluster}],
            "users": [{"name": CONTEXT, "user": {"token": token}}],
            "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": "default"}}],
            "current-context": CONTEXT}


def write_kubeconfig(data_dir: pathlib.Path, server_url: str, token: str, ca_pem: bytes | None) -> pathlib.Path:
    path = data_dir / KUBECONFIG_FILE
    write_private(path, yaml.safe_dump(kubeconfig(server_url, token, ca_pem), sort_keys=False).encode())
    return path


# ---- TLS ------------------------------------------------------------------------------------------

WILDCARDS = ("0.0.0.0", "::", "")


def _host_addresses() -> list[str]:
    """This machine's own addresses, as other machines may dial them: what its name resolves to,
    and the source address of its default route (a UDP connect sends nothing)."""
    found: set[str] = set()
    for name in {socket.gethostname(), socket.getfqdn()}:
        try:
            found.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
        except OSError:
            pass
    for family, probe in ((socket.AF_INET, "10.255.255.255"), (socket.AF_INET6, "fd00::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))
                found.add(str(s.getsockname()[0]))
        except OSError:
            pass
    return sorted(a for a in found if "%" not in a and not ipaddress.ip_address(a).is_unspecified)


def _names_for(address: str) -> tuple[list[str], list[str]]:
    """The names a certificate for `address` covers: loopback, the address, this host's name, and
    for a wildcard bind every address of this host (clients elsewhere dial one of those)."""
    dns, ips = ["localhost"], ["127.0.0.1", "::1"]
    for host in {address, client_host(address)}:
        if not host:
            continue
        try:
            if not ipaddress.ip_address(host).is_unspecified:
                ips.append(host)
        except ValueError:
            dns.append(host)
    dns.append(socket.gethostname())
    if address in WILDCARDS:
        ips.extend(_host_addresses())
        dns.append(socket.getfqdn())
    return sorted(set(dns)), sorted(set(ips))


def generate_self_signed(tls_dir: pathlib.Path, address: str) -> tuple[pathlib.Path, pathlib.Path, bytes]:
    """A CA and a server certificate for `address` (reused while they cover it and are valid).
    Returns (server cert path, server key path, CA PEM)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    cert_path, key_path, ca_path = tls_dir / "server.crt", tls_dir / "server.key", tls_dir / "ca.crt"
    dns, ips = _names_for(address)
    if cert_path.exists() and key_path.exists() and ca_path.exists():
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        have = {str(i) for i in san.get_values_for_type(x509.IPAddress)} | set(san.get_values_for_type(x509.DNSName))
        now = datetime.datetime.now(datetime.timezone.utc)
        if set(ips) | set(dns) <= have and cert.not_valid_after_utc > now + datetime.timedelta(days=1):
            return cert_path, key_path, ca_path.read_bytes()
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vclite-ca")])
    ca_cert = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
               .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=3650))
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                            content_commitment=False, key_encipherment=False, data_encipherment=False,
                                            key_agreement=False, encipher_only=False, decipher_only=False),
                              critical=True)
               .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    alt = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vclite-server")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=825))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    private = {"encoding": pem, "format": serialization.PrivateFormat.PKCS8,
               "encryption_algorithm": serialization.NoEncryption()}
    tls_dir.mkdir(parents=True, exist_ok=True)
    write_private(tls_dir / "ca.key", ca_key.private_bytes(**private))
    write_private(key_path, key.private_bytes(**private))
    ca_pem = ca_cert.public_bytes(pem)
    ca_path.write_bytes(ca_pem)
    cert_path.write_bytes(cert.public_bytes(pem))
    return cert_path, key_path, ca_pem


def server_context(cert: pathlib.Path, key: pathlib.Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(cert), str(key))
    return ctx
