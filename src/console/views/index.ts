// Public face of the console's audit views (docs/console-audit.md): the runs, run,
// journal, journal entry, what-if and shadow pages and the verify, export and what-if actions,
// for the console plugin to mount, and their style sheet. What-if replays through the
// entry point's replay host (`auditViews({ replayHost })`); the constants have none and
// answer what-if with ERR_CONSOLE_VIEW_UNAVAILABLE.
import type { ReplayHost } from "../../evidence/index.js";
import type { ConsoleAction, ConsolePage } from "../page.js";
import { JOURNAL_ENTRY_PAGE, JOURNAL_PAGE } from "./journal.js";
import { EXPORT_ACTION, VERIFY_ACTION } from "./journal-actions.js";
import { RUN_PAGE, RUNS_PAGE } from "./runs.js";
import { SHADOW_PAGE } from "./shadow.js";
import { WHATIF_PAGE, whatifAction } from "./whatif.js";

export { VIEWS_CSS } from "./views-css.js";
export { MAX_WHATIF_POLICY_BYTES, MAX_WHATIF_RUNS } from "./whatif.js";

export interface AuditViewOptions {
  /** How the entry point opens a runtime over a recorded bundle (the CLI's `cliReplayHost`). */
  replayHost?: ReplayHost;
}

export interface AuditViews {
  pages: readonly ConsolePage[];
  actions: readonly ConsoleAction[];
}

/** The audit pages and actions, what-if through `o.replayHost`. */
export function auditViews(o: AuditViewOptions = {}): AuditViews {
  return {
    pages: [RUNS_PAGE, RUN_PAGE, JOURNAL_PAGE, JOURNAL_ENTRY_PAGE, WHATIF_PAGE, SHADOW_PAGE],
    actions: [VERIFY_ACTION, EXPORT_ACTION, whatifAction(o.replayHost)],
  };
}

const DEFAULT = auditViews();
export const VIEW_PAGES: readonly ConsolePage[] = DEFAULT.pages;
export const VIEW_ACTIONS: readonly ConsoleAction[] = DEFAULT.actions;
