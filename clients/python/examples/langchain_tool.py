"""Warden-governed tools for LangChain (Python), over the sidecar.

    pip install langchain-core            # not a dependency of warden_client
    WARDEN_URL=http://127.0.0.1:8787 WARDEN_TOKEN=wdn_... python examples/langchain_tool.py

Each LangChain tool is a thin wrapper around :class:`warden_client.GovernedTool`: the
model's structured arguments go to ``POST /v1/execute`` (never its text), the model reads
the output when the call was allowed and ``{"error": {"code", "reason", "decisionId"}}``
when it was not, and the taint of every result is carried into the next call. The import
of LangChain is guarded: without it, the script says so and exits 2. (LangChain is not
installable in Warden's own CI, so this file is an example, not a tested integration; the
governed session under it is tested against a real sidecar.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from warden_client import GovernedSession, WardenClient  # noqa: E402

try:
    from langchain_core.tools import StructuredTool
except ImportError:  # pragma: no cover - depends on the environment
    StructuredTool = None  # type: ignore[assignment,misc]


def governed_langchain_tools(session: GovernedSession, specs: Dict[str, str]) -> List[Any]:
    """LangChain tools named after Warden contracts (``{name: description}``).

    The argument schema is the contract's; the sidecar validates every call against it.
    """
    if StructuredTool is None:
        raise RuntimeError("langchain-core is not installed: pip install langchain-core")
    tools = []
    for name, description in specs.items():
        governed = session.tool(name)

        def run(_governed: Any = governed, **kwargs: Any) -> str:
            value = _governed(**kwargs)
            return value if isinstance(value, str) else json.dumps(value)

        tools.append(StructuredTool.from_function(func=run, name=name, description=description))
    return tools


def main() -> int:
    if StructuredTool is None:
        print("langchain-core is not installed (pip install langchain-core); nothing to run.", file=sys.stderr)
        return 2
    url, token = os.environ.get("WARDEN_URL"), os.environ.get("WARDEN_TOKEN")
    if not url or not token:
        print("set WARDEN_URL and WARDEN_TOKEN (an agent token of your sidecar)", file=sys.stderr)
        return 2
    session = GovernedSession(WardenClient(url, token))
    tools = governed_langchain_tools(session, {"fetch_page": "Fetch a page by id", "send_email": "Send an email"})
    # Hand `tools` to your agent (e.g. `llm.bind_tools(tools)`); here, one direct call.
    print(tools[0].invoke({"page": "pricing"}))
    print(f"run {session.run_id}, taint so far: {[t.source for t in session.taint]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
