"""The sidecar's answers as typed values (docs/http-api.md). Decisions are values, not errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from .errors import ERR_CLIENT_RESPONSE_INVALID, ClientError

DECISIONS = ("allow", "deny", "modify", "step_up", "defer")
#: Reason codes a step-up (or deferral) that ended without an approval carries.
STEP_UP_ENDED = frozenset(
    {
        "approval_timeout",
        "approval_cancelled",
        "approval_queue_full",
        "defer_timeout",
        "defer_cancelled",
        "defer_queue_full",
    }
)


def _invalid(what: str) -> ClientError:
    return ClientError(ERR_CLIENT_RESPONSE_INVALID, f"the sidecar's answer has no valid {what}")


def _str(body: Mapping[str, Any], key: str, nullable: bool = False) -> Optional[str]:
    v = body.get(key)
    if v is None and nullable:
        return None
    if not isinstance(v, str):
        raise _invalid(key)
    return v


def _str_list(body: Mapping[str, Any], key: str) -> List[str]:
    v = body.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _invalid(key)
    return list(v)


@dataclass(frozen=True)
class TaintLabel:
    source: str
    origin: str

    @staticmethod
    def parse(v: Any) -> "TaintLabel":
        if not isinstance(v, dict) or not isinstance(v.get("source"), str) or not isinstance(v.get("origin"), str):
            raise _invalid("taint label")
        return TaintLabel(v["source"], v["origin"])

    def to_json(self) -> Dict[str, str]:
        return {"source": self.source, "origin": self.origin}


@dataclass(frozen=True)
class Decision:
    """The Gate's decision on one call (``POST /v1/decide``, and the head of an execute answer)."""

    decision_id: Optional[str]
    decision: str
    reason_codes: List[str]
    taint: List[TaintLabel]
    raw: Dict[str, Any] = field(repr=False)

    @property
    def allowed(self) -> bool:
        return self.decision in ("allow", "modify")

    @property
    def step_up_ended(self) -> bool:
        """A step-up (or deferral) that was not approved in time."""
        return any(c in STEP_UP_ENDED for c in self.reason_codes)

    @staticmethod
    def parse(body: Any) -> "Decision":
        if not isinstance(body, dict):
            raise _invalid("body")
        decision = _str(body, "decision")
        if decision not in DECISIONS:
            raise _invalid("decision")
        taint = body.get("taint", [])
        if not isinstance(taint, list):
            raise _invalid("taint")
        return Decision(
            decision_id=_str(body, "decisionId", nullable=True),
            decision=decision,
            reason_codes=_str_list(body, "reasonCodes"),
            taint=[TaintLabel.parse(t) for t in taint],
            raw=body,
        )


@dataclass(frozen=True)
class ExecuteResult:
    """``POST /v1/execute``: the decision and, when it ran, the contract-checked output or the failure."""

    decision: Decision
    executed: bool
    ok: bool
    output: Any
    error_code: Optional[str]
    error_message: Optional[str]

    @staticmethod
    def parse(body: Any) -> "ExecuteResult":
        d = Decision.parse(body)
        result = d.raw.get("result")
        if result is None:
            if d.allowed:
                raise _invalid("result for an allowed call")
            return ExecuteResult(d, False, False, None, None, None)
        if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
            raise _invalid("result")
        if result["ok"]:
            return ExecuteResult(d, True, True, result.get("output"), None, None)
        return ExecuteResult(d, True, False, None, _str(result, "code"), _str(result, "message"))


@dataclass(frozen=True)
class PendingApproval:
    """One item of ``GET /v1/approvals``: the structured action only (never the model's text)."""

    id: str
    kind: str
    decision_id: str
    run_id: str
    principal_id: str
    approver_role: str
    reason_codes: List[str]
    expires_at: str
    raw: Dict[str, Any] = field(repr=False)

    @staticmethod
    def parse(v: Any) -> "PendingApproval":
        if not isinstance(v, dict):
            raise _invalid("approval")
        return PendingApproval(
            id=str(_str(v, "id")),
            kind=str(_str(v, "kind")),
            decision_id=str(_str(v, "decisionId")),
            run_id=str(_str(v, "runId")),
            principal_id=str(_str(v, "principalId")),
            approver_role=str(_str(v, "approverRole")),
            reason_codes=_str_list(v, "reasonCodes"),
            expires_at=str(_str(v, "expiresAt")),
            raw=v,
        )
