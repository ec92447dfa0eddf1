// Public face of the console: the fastify plugin the sidecar mounts under `/console`, its
// configuration section, the browser key store (loaded into the approval keyring at start)
// and the escaped-markup and page declarations the views are written with.
export { CONSOLE_EVENTS, registerConsoleEventTypes } from "./audit.js";
export { CONSOLE_DEFAULTS, type ConsoleConfig, ConsoleConfigSchema } from "./config.js";
export type { ConsoleCredential, ConsoleOptions } from "./context.js";
export { agentText, escapeText, type Html, html, isHtml, MAX_SHOWN_CHARS, trusted } from "./html.js";
export {
  type BrowserKey,
  BrowserKeyStore,
  browserKeyPath,
  browserPublicKey,
  type ConsoleKeyStore,
  type KeyRevoked,
} from "./keys.js";
export type {
  ConsoleAction,
  ConsoleActionResult,
  ConsolePage,
  ConsolePageInput,
  ConsoleRole,
  ConsoleViewContext,
} from "./page.js";
export { consolePlugin } from "./plugin.js";
export { CONSOLE_CSP, SECURITY_HEADERS, SESSION_COOKIE } from "./security.js";
export { SharedBrowserKeyStore, type SharedKeyRow, type SharedKeyRows } from "./shared-keys.js";
export {
  type AuditViewOptions,
  type AuditViews,
  auditViews,
  VIEW_ACTIONS,
  VIEW_PAGES,
} from "./views/index.js";
