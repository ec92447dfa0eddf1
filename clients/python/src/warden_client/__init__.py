"""warden_client: a typed, standard-library-only client for the Warden sidecar.

>>> from warden_client import WardenClient, GovernedSession
>>> agent = WardenClient("http://127.0.0.1:8787", token)          # doctest: +SKIP
>>> session = GovernedSession(agent)                              # doctest: +SKIP
>>> session.tool("fetch_page")(page="pricing")                    # doctest: +SKIP
"""

from .approver import ApproverKey
from .client import WardenClient
from .errors import (
    ERR_CLIENT_CONFIG_INVALID,
    ERR_CLIENT_KEY_INVALID,
    ERR_CLIENT_RESPONSE_INVALID,
    ERR_CLIENT_TIMEOUT,
    ERR_CLIENT_UNREACHABLE,
    ApprovalError,
    AuthenticationError,
    ClientError,
    NoExecutorError,
    RateLimitedError,
    RequestInvalidError,
    RunError,
    UnavailableError,
    WardenError,
    error_class,
    error_for,
)
from .governed import GovernedSession, GovernedTool, Outcome
from .types import Decision, ExecuteResult, PendingApproval, TaintLabel

__version__ = "0.1.0"

__all__ = [
    "ERR_CLIENT_CONFIG_INVALID",
    "ERR_CLIENT_KEY_INVALID",
    "ERR_CLIENT_RESPONSE_INVALID",
    "ERR_CLIENT_TIMEOUT",
    "ERR_CLIENT_UNREACHABLE",
    "ApprovalError",
    "ApproverKey",
    "AuthenticationError",
    "ClientError",
    "Decision",
    "ExecuteResult",
    "GovernedSession",
    "GovernedTool",
    "NoExecutorError",
    "Outcome",
    "PendingApproval",
    "RateLimitedError",
    "RequestInvalidError",
    "RunError",
    "TaintLabel",
    "UnavailableError",
    "WardenClient",
    "WardenError",
    "error_class",
    "error_for",
]
