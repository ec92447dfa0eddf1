// The console's read-only pages (runs, trust, journal, what-if) and their actions. The
// console plugin mounts every entry generically (roles, CSRF, audit: view-routes.ts).
import type { ConsoleAction, ConsolePage } from "../page.js";

export const VIEW_PAGES: readonly ConsolePage[] = [];
export const VIEW_ACTIONS: readonly ConsoleAction[] = [];
