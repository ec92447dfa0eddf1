// The real browser for the console's end-to-end tests: Debian's Chromium (installed by
// .ci/run), or the executable WARDEN_CHROMIUM names. A missing browser fails the tests
// with what to do; they are never skipped.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium"];

export function chromiumPath(): string {
  const env = process.env.WARDEN_CHROMIUM;
  if (env !== undefined && env !== "") {
    if (!existsSync(env)) throw new Error(`WARDEN_CHROMIUM=${env} does not exist`);
    return env;
  }
  const found = CANDIDATES.find((p) => existsSync(p));
  if (found === undefined)
    throw new Error(
      "the console's browser tests need Chromium: run `apt-get install chromium` (Debian) or set WARDEN_CHROMIUM to a Chromium executable",
    );
  return found;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, timeout: 60_000 });
}
