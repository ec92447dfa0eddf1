"""Coded exceptions mirroring the sidecar's ``ERR_*`` codes (docs/http-api.md, Errors).

Every refusal the sidecar answers as an HTTP error becomes a :class:`WardenError` whose
``code`` is the sidecar's stable code; the subclass names the family so callers can catch
what they handle. A *decision* (allow, deny, step-up that timed out) is never an exception:
it is a value (:class:`warden_client.Decision`). Client-side failures use the
``ERR_CLIENT_*`` codes below.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type

#: The sidecar could not be reached (connection refused, DNS, TLS).
ERR_CLIENT_UNREACHABLE = "ERR_CLIENT_UNREACHABLE"
#: No answer within the client's timeout (a step-up wait counts; the sidecar journals it cancelled).
ERR_CLIENT_TIMEOUT = "ERR_CLIENT_TIMEOUT"
#: The answer is not the sidecar's documented shape (fail closed: nothing is assumed).
ERR_CLIENT_RESPONSE_INVALID = "ERR_CLIENT_RESPONSE_INVALID"
#: The client was given something it will not send (a non-loopback plain-http URL, an empty token).
ERR_CLIENT_CONFIG_INVALID = "ERR_CLIENT_CONFIG_INVALID"
#: The approver key cannot be used (unreadable, not an Ed25519 private key).
ERR_CLIENT_KEY_INVALID = "ERR_CLIENT_KEY_INVALID"


class WardenError(Exception):
    """A coded refusal from the sidecar (or the client). ``code`` is stable API."""

    def __init__(
        self,
        code: str,
        message: str,
        status: Optional[int] = None,
        details: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.details: Dict[str, Any] = dict(details or {})


class ClientError(WardenError):
    """ERR_CLIENT_*: the request did not complete (unreachable, timeout, malformed answer)."""


class AuthenticationError(WardenError):
    """ERR_AUTH_* and ERR_IDENTITY_*: a missing, unknown or forbidden credential."""


class RunError(WardenError):
    """ERR_RUN_* and ERR_SERVER_RUN_*: an unknown run (or another principal's), run limits."""


class ApprovalError(WardenError):
    """ERR_APPROVAL_*: the approval is unknown, already decided, or the approver may not decide it."""


class RequestInvalidError(WardenError):
    """ERR_SERVER_REQUEST_INVALID, ERR_JSON_*, ERR_CANON_*, ...: the request itself was refused."""


class RateLimitedError(WardenError):
    """ERR_SERVER_RATE_LIMITED, ERR_RUN_RATE_LIMITED: slow down (``details['retry_after']`` when sent)."""


class UnavailableError(WardenError):
    """503s: the journal, policy or state store is unavailable, or the sidecar is shutting down.

    Nothing was executed (the sidecar fails closed).
    """


class NoExecutorError(WardenError):
    """ERR_SERVER_NO_EXECUTOR: no executor serves that contract in this deployment."""


_EXACT: Dict[str, Type[WardenError]] = {
    "ERR_SERVER_RATE_LIMITED": RateLimitedError,
    "ERR_RUN_RATE_LIMITED": RateLimitedError,
    "ERR_SERVER_NO_EXECUTOR": NoExecutorError,
    "ERR_SERVER_RUN_NOT_FOUND": RunError,
    "ERR_SERVER_RUN_FORBIDDEN": RunError,
    "ERR_SERVER_REQUEST_INVALID": RequestInvalidError,
    "ERR_SERVER_BODY_TOO_LARGE": RequestInvalidError,
    "ERR_SERVER_BODY_MALFORMED": RequestInvalidError,
    "ERR_SERVER_MEDIA_TYPE": RequestInvalidError,
}

_PREFIX = (
    ("ERR_CLIENT_", ClientError),
    ("ERR_AUTH_", AuthenticationError),
    ("ERR_IDENTITY_", AuthenticationError),
    ("ERR_RUN_", RunError),
    ("ERR_APPROVAL_", ApprovalError),
    ("ERR_JSON_", RequestInvalidError),
    ("ERR_CANON_", RequestInvalidError),
)


def error_class(code: str, status: Optional[int] = None) -> Type[WardenError]:
    """The exception class of a code (by exact code, then family prefix, then HTTP status)."""
    if code in _EXACT:
        return _EXACT[code]
    for prefix, cls in _PREFIX:
        if code.startswith(prefix):
            return cls
    if status == 503:
        return UnavailableError
    return WardenError


def error_for(
    code: str,
    message: str,
    status: Optional[int] = None,
    details: Optional[Mapping[str, Any]] = None,
) -> WardenError:
    """The coded exception for a sidecar error answer."""
    return error_class(code, status)(code, message, status, details)
