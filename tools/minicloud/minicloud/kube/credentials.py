"""What a client needs to trust and be trusted: a CA, a serving certificate, a bearer token,
and the kubeconfig that carries them.

Real clusters serve HTTPS with their own CA and authenticate clients; doing the
same lets tests exercise ``validate_certs`` / ``ca_cert`` and missing credentials.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import secrets
import ssl
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CONTEXT = "minicloud"
USER = "minicloud-admin"
VALIDITY = datetime.timedelta(days=3650)


@dataclass(frozen=True)
class Credentials:
    """The files in one folder: ``ca.crt``, ``server.crt``, ``server.key``, ``token``."""

    folder: Path

    @property
    def ca_cert(self) -> Path:
        return self.folder / "ca.crt"

    @property
    def server_cert(self) -> Path:
        return self.folder / "server.crt"

    @property
    def server_key(self) -> Path:
        return self.folder / "server.key"

    @property
    def token_file(self) -> Path:
        return self.folder / "token"

    def exist(self) -> bool:
        return all(p.is_file() for p in (self.ca_cert, self.server_cert, self.server_key, self.token_file))

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()

    def generate(self, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> None:
        """A new CA, a serving certificate for ``hosts`` signed by it, and a random token."""
        self.folder.mkdir(parents=True, exist_ok=True)
        now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "minicloud-ca")])
        ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
              .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now).not_valid_after(now + VALIDITY)
              .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                           content_commitment=False, key_encipherment=False,
                                           data_encipherment=False, key_agreement=False, encipher_only=False,
                                           decipher_only=False), critical=True)
              .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
              .sign(ca_key, hashes.SHA256()))
        key = ec.generate_private_key(ec.SECP256R1())
        names = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
                .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now).not_valid_after(now + VALIDITY)
                .add_extension(x509.SubjectAlternativeName(names), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                               critical=False)
                .sign(ca_key, hashes.SHA256()))
        pem = serialization.Encoding.PEM
        self.ca_cert.write_bytes(ca.public_bytes(pem))
        self.server_cert.write_bytes(cert.public_bytes(pem))
        self.server_key.write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                      serialization.NoEncryption()))
        self.server_key.chmod(0o600)
        self.token_file.write_text(secrets.token_urlsafe(32) + "\n")
        self.token_file.chmod(0o600)

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.server_cert, self.server_key)
        return context

    def client_context(self) -> ssl.SSLContext:
        """Trusts the CA (for minicloud's own health probes)."""
        return ssl.create_default_context(cafile=str(self.ca_cert))

    def kubeconfig(self, server: str) -> dict:
        ca_data = base64.b64encode(self.ca_cert.read_bytes()).decode()
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": CONTEXT, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
            "users": [{"name": USER, "user": {"token": self.token}}],
            "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": USER, "namespace": "default"}}],
            "current-context": CONTEXT,
            "preferences": {},
        }

    def workload_kubeconfig(self, server: str, cluster: str, token: str) -> dict:
        """The kubeconfig of a workload cluster's API (served with this CA), named as CAPI names the one in
        the ``<cluster>-kubeconfig`` Secret: cluster ``<cluster>``, user ``<cluster>-admin``, context
        ``<cluster>-admin@<cluster>``."""
        ca_data = base64.b64encode(self.ca_cert.read_bytes()).decode()
        user, context = f"{cluster}-admin", f"{cluster}-admin@{cluster}"
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": cluster, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": context, "context": {"cluster": cluster, "user": user}}],
            "current-context": context,
            "preferences": {},
        }

    def write_kubeconfig(self, path: Path, server: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(yaml.safe_dump(self.kubeconfig(server), sort_keys=False))
        tmp.chmod(0o600)
        tmp.replace(path)
