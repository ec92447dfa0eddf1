// The real browser for the console's end-to-end tests (shared with the bench): Debian's
// Chromium, or WARDEN_CHROMIUM; a missing browser fails the tests with what to do.
export { chromiumPath, launchChromium } from "../../bench/_console-harness.js";
