// A Warden sidecar client in plain JavaScript: nothing but fetch. Any language that can
// send JSON over HTTP can be governed the same way — the agent never holds a tool, only
// a bearer token for the sidecar, which decides, executes and journals each call.
//
//   npm run build
//   node bin/warden.js sidecar --config examples/sidecar/sidecar.yaml --init-keys &
//   node examples/sidecar-client.mjs
//
// It also runs against a `warden init` deployment: `eval "$(warden init DIR --shell)"`
// exports WARDEN_TOKEN and WARDEN_OPERATOR_TOKEN (README, "Sidecar").
//
// WARDEN_URL (default http://127.0.0.1:8787), WARDEN_TOKEN (the agent's token) and
// WARDEN_OPERATOR_TOKEN (an approver/auditor token) override the demo defaults.

const base = process.env.WARDEN_URL ?? "http://127.0.0.1:8787";
const agentToken = process.env.WARDEN_TOKEN ?? "demo-agent-token-change-me";
const operatorToken = process.env.WARDEN_OPERATOR_TOKEN ?? "demo-approver-token-change-me";
async function call(method, path, token, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

let failures = 0;
function check(label, ok, detail) {
  process.stdout.write(`${ok ? "ok  " : "FAIL"} ${label}${detail ? `: ${detail}` : ""}\n`);
  if (!ok) failures++;
}

// 0. A run comes from the sidecar, bound to the agent's credential: run ids are never
//    invented by the client (an invented or another agent's run id is 404 ERR_RUN_UNKNOWN).
const started = await call("POST", "/v1/runs", agentToken, {});
const runId = started.body.runId;
check("run started", started.status === 201 && typeof runId === "string", runId);
const invented = await call("POST", "/v1/decide", agentToken, {
  runId: "my-own-run-id",
  tool: "echo",
  parameters: { message: "hi" },
});
check("invented run id refused", invented.status === 404, invented.body.error?.code);

// 1. An allowed call: the sidecar gates it, runs the contract's template, and returns
//    the output validated against the contract, with the evidence id.
const hello = await call("POST", "/v1/execute", agentToken, {
  runId,
  tool: "echo",
  parameters: { message: "hello from a plain fetch client" },
});
check(
  "allowed call executed",
  hello.status === 200 && hello.body.decision === "allow" && hello.body.result?.ok === true,
  JSON.stringify(hello.body.result?.output ?? hello.body),
);
check("evidence id returned", typeof hello.body.evidenceId === "string", hello.body.evidenceId);

// 2. A denied call: the denial and its reasons come back; nothing runs.
const rm = await call("POST", "/v1/execute", agentToken, {
  runId,
  tool: "echo",
  parameters: { message: "rm -rf /" },
});
check(
  "destructive call denied",
  rm.status === 200 && rm.body.decision === "deny" && rm.body.result === undefined,
  rm.body.denial?.message,
);

// 3. Spoofing another principal in the body is refused: identity comes from the token.
const spoof = await call("POST", "/v1/decide", agentToken, {
  runId,
  principalId: "someone-else",
  tool: "echo",
  parameters: { message: "hi" },
});
check("principal spoofing refused", spoof.status === 403, spoof.body.error?.code);

// 4. The agent can read its own run's state (counters, budgets), not the journal.
const run = await call("GET", `/v1/runs/${runId}`, agentToken);
check(
  "run state readable",
  run.status === 200,
  JSON.stringify({ counters: run.body.counters, budgets: run.body.budgets }),
);
const journal = await call("GET", "/v1/journal?limit=1", agentToken);
check("journal closed to the agent", journal.status === 403, journal.body.error?.code);

// 5. An operator verifies the evidence chain.
const verify = await call("POST", "/v1/journal/verify", operatorToken, {});
check("journal verifies", verify.status === 200 && verify.body.ok === true, `${verify.body.checked} entries`);

process.exitCode = failures === 0 ? 0 : 1;
