"""A private certificate authority made at test time, for the emulator's HTTPS mode: ``make_pki(directory)`` writes
``ca.crt`` (what a client passes as ``ca_path``), ``other-ca.crt`` (an unrelated CA) and, signed by the CA, ``server``
(for 127.0.0.1 and localhost), ``expired`` (expired yesterday) and ``wrong-host`` certificates and keys. The emulator
only reads PEM files (``ssl``); making them needs ``cryptography``, which ansible-core depends on."""

from __future__ import annotations

import datetime
import ipaddress
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVER_NAMES = ('localhost',)
SERVER_ADDRESSES = ('127.0.0.1',)
WRONG_HOST = 'wrong-host.example.test'


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, 'uptime.monitoring tests'),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _ca(common_name, now):
    key = _key()
    certificate = (x509.CertificateBuilder()
                   .subject_name(_name(common_name)).issuer_name(_name(common_name))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=30))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                   .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                content_commitment=False, key_encipherment=False,
                                                data_encipherment=False, key_agreement=False, encipher_only=False,
                                                decipher_only=False), critical=True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                   .sign(key, hashes.SHA256()))
    return key, certificate


def _leaf(ca_key, ca_certificate, names, addresses, not_before, not_after):
    key = _key()
    alternative_names = [x509.DNSName(name) for name in names]
    alternative_names += [x509.IPAddress(ipaddress.ip_address(address)) for address in addresses]
    certificate = (x509.CertificateBuilder()
                   .subject_name(_name(names[0])).issuer_name(ca_certificate.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(not_before).not_valid_after(not_after)
                   .add_extension(x509.SubjectAlternativeName(alternative_names), critical=False)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                                  critical=False)
                   .sign(ca_key, hashes.SHA256()))
    return key, certificate


def _write(directory, name, item):
    path = os.path.join(directory, name)
    with open(path, 'wb') as handle:
        handle.write(item.public_bytes(serialization.Encoding.PEM) if isinstance(item, x509.Certificate) else
                     item.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return path


def make_pki(directory):
    os.makedirs(directory, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, ca_certificate = _ca('uptime.monitoring test CA', now)
    dummy, other_ca = _ca('an unrelated CA', now)
    paths = {'ca': _write(directory, 'ca.crt', ca_certificate), 'other-ca': _write(directory, 'other-ca.crt', other_ca)}
    leaves = {
        'server': (SERVER_NAMES, SERVER_ADDRESSES, now - datetime.timedelta(hours=1), now + datetime.timedelta(days=7)),
        'expired': (SERVER_NAMES, SERVER_ADDRESSES, now - datetime.timedelta(days=30), now - datetime.timedelta(days=1)),
        'wrong-host': ((WRONG_HOST,), (), now - datetime.timedelta(hours=1), now + datetime.timedelta(days=7)),
    }
    for name, (names, addresses, not_before, not_after) in leaves.items():
        key, certificate = _leaf(ca_key, ca_certificate, names, addresses, not_before, not_after)
        paths[name] = (_write(directory, name + '.crt', certificate), _write(directory, name + '.key', key))
    return paths
