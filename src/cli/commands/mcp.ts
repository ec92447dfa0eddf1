// `warden mcp`: the MCP gateway (docs/mcp-gateway.md).
//   mcp serve --config FILE [--http] [--port N]   stdio by default (the configured principal);
//                                                 --http serves Streamable HTTP (bearer / AgentPin)
//   mcp tools --config FILE                       what the gateway serves and what it refuses, as JSON
//   mcp approve --config FILE --server S --tool T accept a tool's current definition (after review)
// Over stdio, stdout belongs to the MCP protocol: messages go to stderr.
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import {
  Gateway,
  type LoadedGatewayConfig,
  loadGatewayConfig,
  serveHttp,
  serveStdio,
} from "../../mcp-gateway/index.js";
import { MemoryFirewall, memoryProvider } from "../../memory/index.js";
import type { CliContext } from "../io.js";
import { SUMMARY } from "./summaries.js";

function untilSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** The gateway, with the memory firewall's tools when the configuration has a `memory:` section. */
function openGateway(loaded: LoadedGatewayConfig): Promise<Gateway> {
  const memory = loaded.config.memory;
  if (memory === undefined) return Gateway.open(loaded);
  return Gateway.open(loaded, { providers: (rt) => [memoryProvider(MemoryFirewall.open(rt, memory))] });
}

async function serve(
  ctx: CliContext,
  opts: { config: string; http?: boolean; port?: string },
): Promise<void> {
  const gw = await openGateway(loadGatewayConfig(opts.config));
  try {
    for (const r of gw.refused)
      ctx.io.err(`warden mcp: refused ${r.server}/${r.tool}: ${r.code}: ${r.message}\n`);
    if (opts.http) {
      const port = opts.port === undefined ? undefined : Number.parseInt(opts.port, 10);
      if (port !== undefined && !(port >= 0 && port <= 65_535))
        throw new CliError("ERR_CLI_USAGE", "--port must be 0-65535");
      const h = await serveHttp(gw, port === undefined ? {} : { port });
      ctx.io.err(`warden mcp gateway listening on ${h.url}\n`);
      await untilSignal();
      await h.close();
    } else {
      await Promise.race([serveStdio(gw), untilSignal()]);
    }
  } finally {
    await gw.close();
  }
}

export function registerMcp(program: Command, ctx: CliContext): void {
  const mcp = program.command("mcp").description(SUMMARY.mcp);
  mcp
    .command("serve")
    .description("serve the MCP gateway over stdio (default) or Streamable HTTP (--http)")
    .requiredOption("--config <file>", "gateway configuration (YAML or JSON)")
    .option("--http", "serve Streamable HTTP on the configured host, port and path")
    .option("--port <n>", "override http.port")
    .action((opts: { config: string; http?: boolean; port?: string }) => serve(ctx, opts));
  mcp
    .command("tools")
    .description("connect to the upstreams, pin what is new, and print what is served and refused (JSON)")
    .requiredOption("--config <file>", "gateway configuration (YAML or JSON)")
    .action(async (opts: { config: string }) => {
      const gw = await openGateway(loadGatewayConfig(opts.config));
      try {
        const principals = Object.keys(gw.loaded.gate.principals);
        const served = principals.map((p) => ({ principal: p, tools: gw.toolsFor(p).map((t) => t.exposed) }));
        ctx.io.out(`${JSON.stringify({ served, refused: gw.refused }, null, 2)}\n`);
      } finally {
        await gw.close();
      }
    });
  mcp
    .command("approve")
    .description("accept an upstream tool's current definition (review it first: warden mcp tools)")
    .requiredOption("--config <file>", "gateway configuration (YAML or JSON)")
    .requiredOption("--server <name>", "the upstream")
    .requiredOption("--tool <name>", "the upstream's tool name")
    .action(async (opts: { config: string; server: string; tool: string }) => {
      const loaded = loadGatewayConfig(opts.config);
      if (!Object.hasOwn(loaded.config.upstreams, opts.server))
        throw new CliError("ERR_CLI_USAGE", `no upstream ${opts.server} in ${opts.config}`);
      const gw = await Gateway.open(loaded);
      try {
        const hash = await gw.executor.approve(opts.server, opts.tool);
        ctx.io.out(`approved ${opts.server}/${opts.tool} ${hash}\n`);
      } finally {
        await gw.close();
      }
    });
}
