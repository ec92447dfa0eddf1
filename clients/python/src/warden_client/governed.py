"""A governed session for agent frameworks: one run, its accumulated taint, and tools that
return what the model may read.

Each call goes through ``POST /v1/execute``. The model gets the tool's output when the call
was allowed, and otherwise a structured tool error it can reason about:
``{"error": {"code", "reason", "decisionId"}}`` with reason codes only (never rule texts).
The taint of every result is carried into the next call, as Warden's own agent loop does,
so content read from the web keeps judging what the agent proposes next.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from .client import WardenClient
from .errors import WardenError
from .types import ExecuteResult, TaintLabel


@dataclass(frozen=True)
class Outcome:
    """One governed call: ``kind`` is ``allowed``, ``denied`` or ``fault``."""

    kind: str
    tool: str
    decision_id: Optional[str]
    output: Any = None
    code: Optional[str] = None
    reason_codes: tuple = ()
    message: str = ""

    def model_value(self) -> Any:
        """What the model reads: the output, or the structured tool error."""
        if self.kind == "allowed":
            return self.output
        reason = self.message if self.kind == "fault" else (", ".join(self.reason_codes) or "denied")
        return {"error": {"code": self.code, "reason": reason, "decisionId": self.decision_id}}


class GovernedSession:
    """A run on the sidecar and the taint it has accumulated."""

    def __init__(self, client: WardenClient, run_id: Optional[str] = None, parent_run: Optional[str] = None) -> None:
        self.client = client
        self._parent = parent_run
        self._run_id = run_id
        self._taint: List[TaintLabel] = []
        self.outcomes: List[Outcome] = []

    @property
    def run_id(self) -> str:
        if self._run_id is None:
            self._run_id = self.client.start_run(self._parent)
        return self._run_id

    @property
    def taint(self) -> List[TaintLabel]:
        return list(self._taint)

    def call(self, tool: str, **parameters: Any) -> Outcome:
        """One governed call with the model's structured arguments (never its text)."""
        try:
            r = self.client.execute(self.run_id, tool, parameters, self._taint)
        except WardenError as e:
            return self._keep(Outcome("fault", tool, None, code=e.code, message=e.message[:300]))
        self._carry(r)
        return self._keep(_outcome_of(tool, r))

    def tool(self, name: str) -> "GovernedTool":
        return GovernedTool(self, name)

    def _carry(self, r: ExecuteResult) -> None:
        for label in r.decision.taint:
            if label not in self._taint:
                self._taint.append(label)

    def _keep(self, o: Outcome) -> Outcome:
        self.outcomes.append(o)
        return o


def _outcome_of(tool: str, r: ExecuteResult) -> Outcome:
    d = r.decision
    if not d.allowed:
        code = "ERR_ADAPTER_STEP_UP_TIMEOUT" if d.step_up_ended else "ERR_ADAPTER_DENIED"
        return Outcome("denied", tool, d.decision_id, code=code, reason_codes=tuple(d.reason_codes))
    if not r.ok:
        return Outcome("fault", tool, d.decision_id, code=r.error_code, message=(r.error_message or "")[:300])
    return Outcome("allowed", tool, d.decision_id, output=r.output)


class GovernedTool:
    """A callable a framework can wrap: keyword arguments in, the model's value out."""

    def __init__(self, session: GovernedSession, name: str) -> None:
        self.session = session
        self.name = name

    def __call__(self, **parameters: Any) -> Any:
        return self.session.call(self.name, **parameters).model_value()


__all__: List[str] = ["GovernedSession", "GovernedTool", "Outcome"]
