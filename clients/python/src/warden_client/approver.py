"""The approver's Ed25519 key and the approval statement it signs (docs/identity.md,
Signed approvals): ``{v, decision_id, action, approver_id, justification, time,
parameters_hash?}`` in canonical JSON, signed with the approver's own key, so that a
deployment with approver keys (every ``warden init`` deployment: the console is on) accepts
the verdict. The key is read from the files ``warden keys generate --type ed25519`` writes
(PKCS#8 PEM or private JWK) or from bytes (those files' contents, or the raw 32-byte key).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Union

from . import ed25519
from .canonical import canonical_bytes, canonical_json
from .errors import ERR_CLIENT_KEY_INVALID, ClientError

STATEMENT_VERSION = "warden.approval.v1"
#: PKCS#8 DER of an Ed25519 private key, before its 32 key bytes (RFC 8410).
_PKCS8_PREFIX = bytes.fromhex("302e020100300506032b657004220420")
_PEM = re.compile(rb"-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\s]+)-----END PRIVATE KEY-----")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _invalid(why: str) -> ClientError:
    return ClientError(ERR_CLIENT_KEY_INVALID, f"the approver key {why}")


def _seed_of(data: bytes) -> bytes:
    if len(data) == 32 and not data.lstrip().startswith((b"-----", b"{")):
        return data
    pem = _PEM.search(data)
    if pem is not None:
        der = base64.b64decode(b"".join(pem.group(1).split()))
        if len(der) != 48 or not der.startswith(_PKCS8_PREFIX):
            raise _invalid("is not an Ed25519 PKCS#8 private key")
        return der[16:]
    if data.lstrip().startswith(b"{"):
        try:
            jwk = json.loads(data)
        except ValueError:
            raise _invalid("file is neither PEM nor JSON") from None
        if not isinstance(jwk, dict) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
            raise _invalid("JWK is not an Ed25519 key")
        if not isinstance(jwk.get("d"), str):
            raise _invalid("JWK has no private part (d)")
        return _unb64url(jwk["d"])
    if b"PUBLIC KEY" in data:
        raise _invalid("is a public key: give the private key file")
    raise _invalid("is not a PEM, a JWK or 32 raw bytes")


class ApproverKey:
    """An approver's Ed25519 private key."""

    def __init__(self, seed: bytes) -> None:
        if len(seed) != 32:
            raise _invalid("is not 32 bytes")
        self._seed = bytes(seed)
        self.public_key = ed25519.public_key(self._seed)
        #: RFC 7638 thumbprint, as Warden names keys (keyIdOf).
        members = f'{{"crv":"Ed25519","kty":"OKP","x":"{_b64url(self.public_key)}"}}'
        self.key_id = _b64url(hashlib.sha256(members.encode("ascii")).digest())

    def __repr__(self) -> str:
        return f"ApproverKey(key_id={self.key_id!r})"

    @staticmethod
    def from_bytes(data: Union[bytes, str]) -> "ApproverKey":
        """From a PEM or JWK text, or the raw 32-byte private key."""
        return ApproverKey(_seed_of(data.encode("utf-8") if isinstance(data, str) else bytes(data)))

    @staticmethod
    def from_file(path: Union[str, Path]) -> "ApproverKey":
        """From the private key file ``warden keys generate --type ed25519`` wrote (.pem or .jwk.json)."""
        try:
            data = Path(path).read_bytes()
        except OSError as err:
            raise _invalid(f"file {path} cannot be read ({err.strerror})") from None
        return ApproverKey.from_bytes(data)

    @staticmethod
    def of(key: Union["ApproverKey", bytes, str, Path]) -> "ApproverKey":
        """An ApproverKey as given: a key, bytes (key material), or a path (str or Path)."""
        if isinstance(key, ApproverKey):
            return key
        if isinstance(key, (bytes, bytearray)):
            return ApproverKey.from_bytes(bytes(key))
        return ApproverKey.from_file(key)

    def sign_statement(
        self,
        decision_id: str,
        action: str,
        approver_id: str,
        justification: str,
        parameters: Optional[Mapping[str, Any]] = None,
        time: Optional[str] = None,
    ) -> Dict[str, str]:
        """The ``signature`` member of ``POST /v1/approvals/:id``: {decisionId, keyId, sig, time}."""
        at = time or iso_now()
        statement: Dict[str, str] = {
            "v": STATEMENT_VERSION,
            "decision_id": decision_id,
            "action": action,
            "approver_id": approver_id,
            "justification": justification,
            "time": at,
        }
        if action == "modify":
            digest = hashlib.sha256(canonical_json(dict(parameters or {})).encode("utf-8")).hexdigest()
            statement["parameters_hash"] = f"sha256:{digest}"
        sig = ed25519.sign(self._seed, canonical_bytes(statement))
        return {"decisionId": decision_id, "keyId": self.key_id, "sig": _b64url(sig), "time": at}


def iso_now() -> str:
    """Now as JavaScript's toISOString writes it (UTC, milliseconds, Z)."""
    now = datetime.now(timezone.utc)
    return f"{now:%Y-%m-%dT%H:%M:%S}.{now.microsecond // 1000:03d}Z"
