// The real browser for the console's end-to-end tests (shared with the bench): the Chromium
// build of the @sparticuz/chromium devDependency, or WARDEN_CHROMIUM; a missing browser fails
// the tests with what to do.
export { chromiumPath, launchChromium } from "../../bench/_console-harness.js";
