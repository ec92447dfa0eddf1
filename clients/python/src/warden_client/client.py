"""A small client for the Warden sidecar, standard library only (urllib, json).

The principal comes from the bearer token, never from the body; runs are created by the
sidecar. ``execute`` blocks while a step-up waits for an approver, at most ``timeout``
seconds (then :class:`ClientError` ``ERR_CLIENT_TIMEOUT``; the sidecar journals the wait as
cancelled). Refusals the sidecar answers as HTTP errors raise coded exceptions; decisions
(allow, deny, a step-up that timed out) are values.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from .approver import ApproverKey

from .errors import (
    ERR_CLIENT_CONFIG_INVALID,
    ERR_CLIENT_RESPONSE_INVALID,
    ERR_CLIENT_TIMEOUT,
    ERR_CLIENT_UNREACHABLE,
    ClientError,
    error_for,
)
from .types import Decision, ExecuteResult, PendingApproval, TaintLabel

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_MAX_ANSWER = 16 * 1024 * 1024


class WardenClient:
    """One credential against one sidecar. Use an agent token for runs and calls, an
    operator (approver) token for approvals. ``approver_key`` (a key file path, its bytes, or
    an :class:`ApproverKey`) and ``approver_id`` (the approver principal the token belongs
    to) make :meth:`decide_approval` sign each step-up verdict, as a deployment with
    approver keys requires (every ``warden init`` deployment)."""

    def __init__(
        self,
        url: str,
        token: str,
        timeout: float = 60.0,
        approver_key: Union[ApproverKey, bytes, str, Path, None] = None,
        approver_id: Optional[str] = None,
    ) -> None:
        parsed = urllib.parse.urlsplit(url)
        host = parsed.hostname or ""
        if parsed.scheme not in ("http", "https") or not host:
            raise ClientError(ERR_CLIENT_CONFIG_INVALID, "the sidecar URL must be http(s)://host[:port]")
        if parsed.scheme == "http" and host not in _LOOPBACK:
            raise ClientError(ERR_CLIENT_CONFIG_INVALID, "plain http is for a loopback sidecar only")
        if not token or len(token) > 512 or any(c.isspace() for c in token):
            raise ClientError(ERR_CLIENT_CONFIG_INVALID, "the token is empty, too long or has spaces")
        if not 0 < timeout <= 86400:
            raise ClientError(ERR_CLIENT_CONFIG_INVALID, "the timeout must be 0 to 86400 seconds")
        if (approver_key is None) != (approver_id is None):
            raise ClientError(ERR_CLIENT_CONFIG_INVALID, "approver_key and approver_id go together")
        self._base = url.rstrip("/")
        self._token = token
        self.timeout = timeout
        self._approver_key = None if approver_key is None else ApproverKey.of(approver_key)
        self._approver_id = approver_id

    # -- runs ---------------------------------------------------------------------------

    def start_run(self, parent_run: Optional[str] = None) -> str:
        """``POST /v1/runs``: a new run bound to this token's principal (``parent_run`` passes its taint on)."""
        body: Dict[str, Any] = {} if parent_run is None else {"parentRun": parent_run}
        answer = self._request("POST", "/v1/runs", body)
        run_id = answer.get("runId")
        if not isinstance(run_id, str):
            raise ClientError(ERR_CLIENT_RESPONSE_INVALID, "the run answer has no runId")
        return run_id

    def run_state(self, run_id: str) -> Dict[str, Any]:
        """``GET /v1/runs/:id``: quarantine, counters, budgets, taint seen."""
        return self._request("GET", f"/v1/runs/{urllib.parse.quote(run_id, safe='')}")

    # -- calls --------------------------------------------------------------------------

    def execute(
        self,
        run_id: str,
        tool: str,
        parameters: Mapping[str, Any],
        taint_labels: Iterable[TaintLabel] = (),
    ) -> ExecuteResult:
        """``POST /v1/execute``: decided, journaled, executed from the contract, reported back."""
        body = self._call_body(run_id, tool, parameters, taint_labels)
        return ExecuteResult.parse(self._request("POST", "/v1/execute", body))

    def decide(
        self,
        run_id: str,
        tool: str,
        parameters: Mapping[str, Any],
        taint_labels: Iterable[TaintLabel] = (),
    ) -> Decision:
        """``POST /v1/decide``: the decision only (journaled); nothing runs, no approval is queued."""
        body = self._call_body(run_id, tool, parameters, taint_labels)
        return Decision.parse(self._request("POST", "/v1/decide", body))

    # -- approvals (operator token) -------------------------------------------------------

    def approvals(self) -> List[PendingApproval]:
        """``GET /v1/approvals``: the pending step-ups and deferrals."""
        pending = self._request("GET", "/v1/approvals").get("pending")
        if not isinstance(pending, list):
            raise ClientError(ERR_CLIENT_RESPONSE_INVALID, "the approvals answer has no pending list")
        return [PendingApproval.parse(p) for p in pending]

    def decide_approval(
        self,
        approval_id: str,
        outcome: str,
        justification: str,
        parameters: Optional[Mapping[str, Any]] = None,
    ) -> Dict[str, Any]:
        """``POST /v1/approvals/:id``: approve, deny or modify (with ``parameters``) a pending item.

        With an approver key, a step-up verdict carries the approver's signature over the
        approval statement (its decision id is read from ``GET /v1/approvals``); deferred
        actions are released unsigned, as the sidecar expects."""
        body: Dict[str, Any] = {"outcome": outcome, "justification": justification}
        if parameters is not None:
            body["parameters"] = dict(parameters)
        if self._approver_key is not None and self._approver_id is not None:
            item = next((p for p in self.approvals() if p.id == approval_id), None)
            if item is not None and item.kind == "step_up":
                body["signature"] = self._approver_key.sign_statement(
                    item.decision_id, outcome, self._approver_id, justification, parameters
                )
        return self._request("POST", f"/v1/approvals/{urllib.parse.quote(approval_id, safe='')}", body)

    # -- transport ----------------------------------------------------------------------

    @staticmethod
    def _call_body(
        run_id: str, tool: str, parameters: Mapping[str, Any], taint_labels: Iterable[TaintLabel]
    ) -> Dict[str, Any]:
        return {
            "runId": run_id,
            "tool": tool,
            "parameters": dict(parameters),
            "taintLabels": [t.to_json() for t in taint_labels],
        }

    def _request(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self._base + path, data=data, method=method)
        req.add_header("authorization", f"Bearer {self._token}")
        if data is not None:
            req.add_header("content-type", "application/json")
        status, text = self._send(req)
        try:
            answer = json.loads(text) if text else {}
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise ClientError(ERR_CLIENT_RESPONSE_INVALID, f"the sidecar answered {status} without a JSON object", status)
        if status >= 400:
            err = answer.get("error")
            if not isinstance(err, dict) or not isinstance(err.get("code"), str):
                raise ClientError(ERR_CLIENT_RESPONSE_INVALID, f"the sidecar answered {status}", status)
            details = err.get("details") if isinstance(err.get("details"), dict) else None
            raise error_for(err["code"], str(err.get("message", "")), status, details)
        return answer

    def _send(self, req: urllib.request.Request) -> Tuple[int, str]:
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:  # noqa: S310 (URL checked above)
                return res.status, res.read(_MAX_ANSWER).decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read(_MAX_ANSWER).decode("utf-8", "replace")
        except (socket.timeout, TimeoutError) as e:
            raise ClientError(ERR_CLIENT_TIMEOUT, f"no answer within {self.timeout} s") from e
        except urllib.error.URLError as e:
            if isinstance(e.reason, (socket.timeout, TimeoutError)):
                raise ClientError(ERR_CLIENT_TIMEOUT, f"no answer within {self.timeout} s") from e
            raise ClientError(ERR_CLIENT_UNREACHABLE, f"the sidecar is unreachable: {e.reason}") from e
