// Public face of the MCP gateway: an MCP server (stdio, Streamable HTTP) that fronts
// upstream MCP servers and governs every tool call, resource read and prompt get through
// the Gate and the journal (docs/mcp-gateway.md).
export {
  GATEWAY_ACTIONS,
  type LocalEntry,
  NAME_SEPARATOR,
  type PromptEntry,
  type Refusal,
  type ToolEntry,
} from "./catalog.js";
export {
  type GatewayConfig,
  type GatewayConfigInput,
  GatewayConfigSchema,
  type LoadedGatewayConfig,
  loadGatewayConfig,
  parseGatewayConfig,
} from "./config.js";
export { Gateway, type GatewayOptions, gatewayRuntimeConfig } from "./gateway.js";
export { type GatewayHttp, serveHttp } from "./http.js";
export type { LocalTool, LocalToolProvider, LocalToolResult } from "./providers.js";
export { serveStdio, sessionServer } from "./server.js";
export { GatewaySession, type Governed, type ListedResource, type ListedTool } from "./session.js";
export {
  McpLimitsSchema,
  type McpUpstreamConfig,
  McpUpstreamName,
  McpUpstreamSchema,
  resolveSecretText,
  runtimeMcpConfig,
  SecretText,
  upstreamPaths,
  upstreamSpecs,
} from "./upstreams.js";
export { canEverAllow, type VisibilityProbe } from "./visibility.js";
