"""Ed25519 signatures (RFC 8032, section 5.1) for the approver's key, standard library only.

The ``cryptography`` package is used when it is installed; otherwise this module signs in
pure Python, following RFC 8032's reference code (extended twisted Edwards coordinates).
Ed25519 is deterministic, so both give the same bytes; the tests check the pure-Python path
against signatures Node's crypto made, and against RFC 8032's test vector 1. The pure-Python
path is not constant-time: it signs on the approver's own machine, a few statements a
minute, which is the use it is made for.
"""

from __future__ import annotations

import hashlib
from typing import Tuple

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)

_Point = Tuple[int, int, int, int]


def _recover_x(y: int, sign: int) -> int:
    x2 = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P) % _P
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P != 0:
        x = x * _SQRT_M1 % _P
    if x & 1 != sign:
        x = _P - x
    return x


_GY = 4 * pow(5, _P - 2, _P) % _P
_GX = _recover_x(_GY, 0)
_G: _Point = (_GX, _GY, 1, _GX * _GY % _P)


def _add(p: _Point, q: _Point) -> _Point:
    a = (p[1] - p[0]) * (q[1] - q[0]) % _P
    b = (p[1] + p[0]) * (q[1] + q[0]) % _P
    c = 2 * p[3] * q[3] * _D % _P
    d = 2 * p[2] * q[2] % _P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _mul(s: int, p: _Point) -> _Point:
    q: _Point = (0, 1, 1, 0)
    while s > 0:
        if s & 1:
            q = _add(q, p)
        p = _add(p, p)
        s >>= 1
    return q


def _encode(p: _Point) -> bytes:
    z_inv = pow(p[2], _P - 2, _P)
    x, y = p[0] * z_inv % _P, p[1] * z_inv % _P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


def _expand(seed: bytes) -> Tuple[int, bytes]:
    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8
    a |= 1 << 254
    return a, h[32:]


def _check_seed(seed: bytes) -> None:
    if not isinstance(seed, (bytes, bytearray)) or len(seed) != 32:
        raise ValueError("an Ed25519 private key is 32 bytes")


def public_key_pure(seed: bytes) -> bytes:
    """The 32-byte public key of a 32-byte private key (pure Python)."""
    _check_seed(seed)
    return _encode(_mul(_expand(bytes(seed))[0], _G))


def sign_pure(seed: bytes, message: bytes) -> bytes:
    """The 64-byte Ed25519 signature of ``message`` (pure Python, RFC 8032 5.1.6)."""
    _check_seed(seed)
    a, prefix = _expand(bytes(seed))
    public = _encode(_mul(a, _G))
    r = int.from_bytes(hashlib.sha512(prefix + message).digest(), "little") % _L
    big_r = _encode(_mul(r, _G))
    k = int.from_bytes(hashlib.sha512(big_r + public + message).digest(), "little") % _L
    return big_r + ((r + k * a) % _L).to_bytes(32, "little")


def _native():  # type: ignore[no-untyped-def]
    try:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return Ed25519PrivateKey
    except ImportError:
        return None


def public_key(seed: bytes) -> bytes:
    """The public key: through ``cryptography`` when installed, else pure Python."""
    native = _native()
    if native is None:
        return public_key_pure(seed)
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    _check_seed(seed)
    return native.from_private_bytes(bytes(seed)).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def sign(seed: bytes, message: bytes) -> bytes:
    """The signature: through ``cryptography`` when installed, else pure Python (same bytes)."""
    native = _native()
    if native is None:
        return sign_pure(seed, message)
    _check_seed(seed)
    return bytes(native.from_private_bytes(bytes(seed)).sign(message))
