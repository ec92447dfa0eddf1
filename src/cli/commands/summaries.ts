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
  gate: "decide on one request or replay a session of calls and results; executes nothing",
  sidecar: "run the sidecar HTTP server: agents reach their tools only through it",
  trust: "APAE trust: simulate the engine on events, explain a score, sign an early lift",
  quarantine: "list a sidecar's quarantines; sign and present an approver's lift of one",
  identity: "AgentPin agent identity: init a domain key, issue and verify credentials, re-pin",
  provenance: "APAE provenance: which agents touched data or an ECT, and is the chain complete",
  hooks: "Warden as the AARTS security engine of agent hosts (Claude Code, Cursor, …)",
  mcp: "the MCP gateway: upstream MCP servers behind the Gate and the journal",
  export: "export evidence from the journal: DARE records as GATE JSONL, SIEM formats",
  replay: "re-run a recorded run through its pinned bundle, executors answered from snapshots",
  whatif: "replay recorded runs under a changed policy or contracts: which decisions change",
  shadow: "shadow policies: what a shadow bundle would have decided otherwise; promote it",
  db: "distributed mode's PostgreSQL store: migrate the schema, check its version, re-pin",
  init: "write a working starter sidecar deployment (config, keys, policy, contracts)",
  conformance: "run the DARE, OATS, AARTS and APAE verification procedures on a deployment",
} as const;

export type CommandName = keyof typeof SUMMARY;
