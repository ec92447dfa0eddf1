// The files `warden init` writes: a sidecar configuration that stores only token hashes,
// a starter policy (deny by default; two harmless tools allowed; a destructive-looking
// echo denied), two example tool contracts, and a sample file in the tools' work
// directory. The journal key lives in keys/, beside work/ and never inside it, so no
// tool the deployment serves can read it.

export interface StarterTokens {
  agentSha256: string;
  operatorSha256: string;
  /** The operator's Ed25519 public key (PEM): step-up verdicts signed outside the console. */
  operatorPublicKey?: string;
}

export const STARTER = {
  config: "sidecar.yaml",
  policy: "policy.yaml",
  contracts: "contracts",
  work: "work",
  keys: "keys",
  keyName: "journal",
  /** P-256 key that signs the starter contracts (trust mode enforce). */
  contractKeyName: "contracts",
  /** Ed25519 key the operator signs step-up verdicts with (scripts, the Python client). */
  operatorKeyName: "operator",
  /** The domain the starter contract signatures name. */
  contractDomain: "localhost",
  journal: "journal.db",
  agent: "agent",
  operator: "operator",
} as const;

/** The operator's public key as a flow-mapping member: its own verdicts signed with keys/operator.pem. */
function publicKeys(t: StarterTokens): string {
  return t.operatorPublicKey === undefined ? "" : `, publicKeys: [${JSON.stringify(t.operatorPublicKey)}]`;
}

export function sidecarYaml(t: StarterTokens, port: number): string {
  return `# Warden sidecar configuration written by \`warden init\` (docs/http-api.md).
# Relative paths are relative to this file. Only SHA-256 hashes of the tokens are
# stored; \`warden sidecar --new-token\` mints more.
host: 127.0.0.1
port: ${port}
policies: [${STARTER.policy}]
contracts: ${STARTER.contracts}
# Every contract must carry a signature by this key (\`warden contract sign\`); an
# unsigned or changed contract stops the sidecar from starting.
trust:
  mode: enforce
  keys: [${STARTER.keys}/${STARTER.contractKeyName}.pub.pem]
journal:
  path: ${STARTER.journal}               # created 0600 on first start
  key: ${STARTER.keys}/${STARTER.keyName}.pem           # Ed25519, 0600, outside the tools' work directory
gate:
  tenant: starter
  environment: dev
  principals:
    - { id: ${STARTER.agent}, roles: [agent] }
  # Calls must name a tool contract (the default); \`requireContract: false\` opts out.
  requireContract: true
  # A tool result or error that addresses the agent (an order to ignore previous instructions,
  # a ###(system_message) header, "Dear AI", a TODO: order, in ten languages, however disguised)
  # quarantines the agent read-only (docs/gate.md#output-screening).
  outputScreening: { instructions: quarantine }
  context:
    budgets: { toolCalls: 200 }
auth:
  principals:
    - { id: ${STARTER.agent}, tokenSha256: "${t.agentSha256}" }
  approvers:
    - { id: ${STARTER.operator}, roles: [approver, auditor], tokenSha256: "${t.operatorSha256}"${publicKeys(t)} }
executors:
  process:
    workDir: ${STARTER.work}                  # the only directory the tools run in
# The approval console at http://127.0.0.1:${port}/console (docs/console.md): sign in with
# the operator token. Approvers sign step-up decisions with a key made in their browser,
# so every step-up verdict must then be approver-signed (also over the JSON API).
console:
  enabled: true
`;
}

export const STARTER_POLICY = `# Starter policy written by \`warden init\` (docs/policy.md). Anything no rule allows
# is denied (Warden's default deny).
name: starter
version: "1.0"
rules:
  - id: deny-destructive-echo
    name: nothing that looks like rm
    priority: 100
    match: { toolClass: shell, tool: echo, parameters: { message: { pattern: "\\\\brm\\\\b" } } }
    decision: deny
    reason: looks destructive
    reasonCode: DESTRUCTIVE
  - id: allow-echo
    name: echo is harmless
    priority: 200
    match: { toolClass: shell, action: exec, tool: echo }
    decision: allow
    reason: harmless
  - id: allow-word-count
    name: counting words of a work file is a read
    priority: 210
    match: { toolClass: shell, action: exec, tool: word_count }
    decision: allow
    reason: read-only
`;

export const STARTER_CONTRACTS: Record<string, string> = {
  "echo.clad.toml": `# Print a message (argv only, no shell).
[tool]
name = "echo"
version = "1.0.0"
binary = "echo"
description = "Print a message"
category = "read_only"
timeout_seconds = 10

[args.message]
type = "string"
required = true
max_length = 200

[command]
exec = ["echo", "{message}"]

[output]
format = "text"
schema = { type = "object", required = ["raw_output"] }
`,
  "word_count.clad.toml": `# Count the words of a file in the work directory: a relative path, no traversal,
# no absolute paths, no leading dash.
[tool]
name = "word_count"
version = "1.0.0"
binary = "wc"
description = "Count the words in a text file of the work directory"
category = "read_only"
timeout_seconds = 10

[args.path]
type = "path"
required = true
description = "File path relative to the work directory"

[command]
exec = ["wc", "-w", "{path}"]

[output]
format = "text"
schema = { type = "object", required = ["raw_output"] }
`,
};

export const SAMPLE_FILE = {
  name: "hello.txt",
  text: "Hello from the Warden starter deployment.\n",
};
