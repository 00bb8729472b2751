"""Credentials on disk: token, kubeconfig, self-signed certificates; loopback rules."""
import stat

import pytest
import yaml

from vclite.httpserver import security
from vclite.httpserver import server as server_mod


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_token_is_created_once_private_and_reused(tmp_path):
    token = security.load_or_create_token(tmp_path)
    assert len(token) >= 40 and mode(tmp_path / "token") == 0o600
    assert security.load_or_create_token(tmp_path) == token


@pytest.mark.parametrize("header, ok", [
    pytest.param("Bearer abc", True, id="right"),
    pytest.param("bearer abc", True, id="scheme-in-lower-case"),
    pytest.param("BEARER abc", True, id="scheme-in-upper-case"),
    pytest.param("Bearerabc", False, id="no-space"),
    pytest.param("Bearer abd", False, id="wrong"),
    pytest.param("Bearer ", False, id="empty"),
    pytest.param("abc", False, id="no-scheme"),
    pytest.param("Basic abc", False, id="basic"),
    pytest.param(None, False, id="missing"),
])
def test_token_matches(header, ok):
    assert security.token_matches(header, "abc") is ok


def test_kubeconfig_names_server_token_and_ca(tmp_path):
    path = security.write_kubeconfig(tmp_path, "https://127.0.0.1:6443", "tok", b"PEM")
    cfg = yaml.safe_load(path.read_text())
    assert mode(path) == 0o600
    assert cfg["clusters"][0]["cluster"] == {"server": "https://127.0.0.1:6443", "certificate-authority-data": "UEVN"}
    assert cfg["users"][0]["user"] == {"token": "tok"} and cfg["current-context"] == "vclite"


@pytest.mark.parametrize("address, loopback", [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
    ("0.0.0.0", False), ("10.0.0.1", False), ("example.com", False), ("::", False)])
def test_is_loopback(address, loopback):
    assert security.is_loopback(address) is loopback


@pytest.mark.parametrize("address, port, url", [
    ("127.0.0.1", 6443, "https://127.0.0.1:6443"), ("0.0.0.0", 1, "https://127.0.0.1:1"),
    ("::1", 2, "https://[::1]:2")])
def test_url(address, port, url):
    assert security.url(address, port, True) == url


def test_self_signed_certificate_covers_the_address_and_is_reused(tmp_path):
    from cryptography import x509
    cert, key, ca = security.generate_self_signed(tmp_path, "10.1.2.3")
    assert mode(key) == 0o600 and mode(tmp_path / "ca.key") == 0o600
    san = x509.load_pem_x509_certificate(cert.read_bytes()).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert {str(i) for i in san.get_values_for_type(x509.IPAddress)} >= {"10.1.2.3", "127.0.0.1"}
    assert "localhost" in san.get_values_for_type(x509.DNSName)
    before = cert.read_bytes()
    security.generate_self_signed(tmp_path, "10.1.2.3")
    assert cert.read_bytes() == before                  # still covers the address: reused
    security.generate_self_signed(tmp_path, "10.9.9.9")
    assert cert.read_bytes() != before                  # a new address: regenerated
    security.server_context(cert, key)                  # loads


def test_a_wildcard_bind_s_certificate_covers_this_host_s_own_addresses(tmp_path):
    """Served on 0.0.0.0, clients elsewhere dial one of this machine's addresses: the certificate
    must name them (and never 0.0.0.0 itself)."""
    import socket

    from cryptography import x509
    cert, _, _ = security.generate_self_signed(tmp_path, "0.0.0.0")
    san = x509.load_pem_x509_certificate(cert.read_bytes()).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    ips = {str(i) for i in san.get_values_for_type(x509.IPAddress)}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:   # this host's default-route address
        try:
            s.connect(("10.255.255.255", 9))
            own = s.getsockname()[0]
        except OSError:
            own = "127.0.0.1"   # (no route at all: loopback is all there is)
    assert own in ips and "127.0.0.1" in ips and "0.0.0.0" not in ips, ips
    assert socket.gethostname() in san.get_values_for_type(x509.DNSName)


@pytest.mark.parametrize("options, message", [
    pytest.param(dict(plain_http=True, address="0.0.0.0"), "only served on a loopback", id="plain-beyond-loopback"),
    pytest.param(dict(tls_cert="c.pem"), "go together", id="cert-without-key"),
    pytest.param(dict(address="nosuchhost.invalid"), "cannot listen on nosuchhost.invalid", id="unknown-host"),
])
def test_refused_options(tmp_path, options, message):
    with pytest.raises(server_mod.ServeError, match=message):
        server_mod.check_options(server_mod.Options(data_dir=tmp_path / "data", **options))
    assert not (tmp_path / "data").exists()


def test_a_given_certificate_that_does_not_load_is_refused_before_the_data_directory_is_made(tmp_path):
    own = tmp_path / "own"
    cert, key, _ = security.generate_self_signed(own, "127.0.0.1")
    other_cert, other_key, _ = security.generate_self_signed(tmp_path / "other", "127.0.0.1")
    data = tmp_path / "data"
    for c, k, words in ((cert, cert, "not a PEM certificate and its PEM private key"),
                        (cert, other_key, "the key does not belong to the certificate")):
        with pytest.raises(server_mod.ServeError, match=words):
            server_mod.check_options(server_mod.Options(data_dir=data, tls_cert=c, tls_key=k))
    assert not data.exists()
    server_mod.check_options(server_mod.Options(data_dir=data, tls_cert=cert, tls_key=key))
    ctx, ca = server_mod.tls_settings(server_mod.Options(data_dir=data, tls_cert=cert, tls_key=key))
    assert ctx is not None and ca == cert.read_bytes()


def test_tls_by_default_even_on_loopback(tmp_path):
    ctx, ca = server_mod.tls_settings(server_mod.Options(data_dir=tmp_path))
    assert ctx is not None and ca.startswith(b"-----BEGIN CERTIFICATE-----")
    assert server_mod.tls_settings(server_mod.Options(data_dir=tmp_path, plain_http=True)) == (None, None)
