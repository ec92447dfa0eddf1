// The one line each top-level command shows in `warden --help`. The command modules use
// it as their description and main.ts lists it without importing them, so the root help
// starts without loading any layer.
export const SUMMARY = {
  keys: "generate and inspect key pairs",
  journal: "the signed, hash-chained evidence journal",
  canon: "print the RFC 8785 canonical JSON of a JSON file",
  hash: "print sha256:<hex> of the canonical JSON of a JSON file",
  contract: "tool contracts: validate, check, schema, sign, verify",
  policy: "validate policy files and explain decisions",
  run: "run a governed agent on a task and print each step (proposal, decision, evidence)",
  exec: "gate and execute one call; print the decision and the evidence envelope as JSON",
  gate: "decide on one request (--request) or replay a session of calls and results (--session); executes nothing",
  sidecar: "run the sidecar HTTP server: agents reach their tools only through it",
  trust:
    "APAE trust: simulate the trust engine on a file of events, explain a score from the journal, sign an early lift",
  identity: "AgentPin agent identity: init a domain key, issue and verify credentials, re-pin keys",
  provenance: "APAE provenance: which agents touched data or an ECT, transformed, chain complete (L3 ledger)",
  hooks: "Warden as an AARTS security engine for agent hosts: stdio server, Claude Code adapter, install",
  mcp: "the MCP gateway: serve upstream MCP servers governed by the Gate and the journal (stdio, HTTP)",
  export: "export evidence from the journal: --format gate writes the DARE records as GATE JSONL",
  replay: "re-run a recorded run through its pinned bundle, executors answered from snapshots",
  whatif: "replay recorded runs under a changed policy/contracts and show which decisions change",
  shadow: "shadow policies: report what a shadow bundle would have decided otherwise, promote it",
  db: "the shared PostgreSQL store of distributed mode: migrate its schema, check its version, re-pin keys",
  init: "write a working starter sidecar deployment (config, keys, policy, contracts, work dir)",
  conformance:
    "run the specifications' verification procedures (DARE, OATS, AARTS, APAE) against a deployment",
} as const;

export type CommandName = keyof typeof SUMMARY;
