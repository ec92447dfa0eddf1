// The root help a person meets first (`warden`, `warden --help`): the commands grouped by
// task, one line each, an example per group and the acronyms spelled out. It is built from
// SUMMARY alone, so it loads no command module (bench/cli.ts measures the root help).
import { type CommandName, SUMMARY } from "./commands/summaries.js";

export interface HelpGroup {
  title: string;
  commands: readonly CommandName[];
  /** One command line a person can adapt. */
  example: string;
}

/** Every command in exactly one group, in the order a new user needs them. */
export const HELP_GROUPS: readonly HelpGroup[] = [
  {
    title: "Get started",
    commands: ["init", "sidecar"],
    example: "warden init ~/warden-demo && warden sidecar --config ~/warden-demo/sidecar.yaml",
  },
  {
    title: "Run agents",
    commands: ["run", "exec", "gate"],
    example: "warden exec --call call.json --policy policy.yaml --contracts contracts",
  },
  {
    title: "Hosts and gateways",
    commands: ["hooks", "mcp"],
    example: "warden hooks install claude-code",
  },
  {
    title: "Audit and evidence",
    commands: ["journal", "export", "replay", "whatif", "provenance"],
    example: "warden journal verify --db journal.db --keys keys/journal.pub.pem",
  },
  {
    title: "Identity and trust",
    commands: ["keys", "identity", "trust", "contract"],
    example: "warden keys generate --type ed25519 --out keys --name journal",
  },
  {
    title: "Operations",
    commands: ["policy", "shadow", "quarantine", "db", "conformance"],
    example: "warden conformance --config sidecar.yaml",
  },
  {
    title: "Low level",
    commands: ["canon", "hash"],
    example: "warden hash record.json",
  },
];

/** The acronyms the summaries use, spelled out once. */
export const ACRONYMS: readonly (readonly [string, string])[] = [
  ["AARTS", "AI Agent Runtime Safety standard: hook points from agent hosts to security engines"],
  ["AgentPin", "signed agent credentials (JWTs) checked against a domain's published keys"],
  ["APAE", "Assurance Profiles for Agent Ecosystems: trust scores, quarantine, provenance"],
  ["DARE/GATE", "Deterministic Agent Runtime Environment: the decision and evidence record formats"],
  ["ECT", "Execution Context Token: a signed record of one agent step (APAE)"],
  ["MCP", "Model Context Protocol: how agent hosts reach tool servers"],
  ["OATS", "Open Agent Trust Stack: the zero-trust agent execution specification"],
  ["RFC 8785", "JSON Canonicalization Scheme: one byte form of a JSON value, for hashing"],
];

const WIDTH = 13;

function row(name: string, text: string): string {
  return `  ${name.padEnd(WIDTH)} ${text}`;
}

/** The root help text. */
export function rootHelp(version: string): string {
  const lines = [
    `warden ${version}: a zero-trust runtime for AI agents. Every tool call an agent makes is`,
    "checked against a tool contract and a policy, decided outside the model, and recorded in a",
    "signed, hash-chained journal.",
    "",
    "Usage: warden <command> [options]     (warden <command> --help: that command's options)",
  ];
  for (const g of HELP_GROUPS) {
    lines.push("", g.title);
    for (const name of g.commands) lines.push(row(name, SUMMARY[name]));
    lines.push(`  e.g. ${g.example}`);
  }
  lines.push("", "Terms");
  for (const [term, meaning] of ACRONYMS) lines.push(row(term, meaning));
  lines.push(
    "",
    "Options: -V, --version  print the version;  -h, --help  print this help",
    "Docs: docs/cli.md (every command and flag); exit codes: 0 ok, 1 a negative outcome, 2 bad input",
  );
  return `${lines.join("\n")}\n`;
}
