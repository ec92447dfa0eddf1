// Where a deployment may be written: `warden init` keeps private keys, token hashes and the
// journal out of source control. A directory inside a git checkout is refused
// (ERR_CLI_INIT_INSIDE_CHECKOUT) unless git ignores it there, or the operator says
// `--inside-checkout`. Fail closed: when git cannot answer whether the path is ignored
// (git missing, a broken checkout), the answer is "not ignored".
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** The working tree DIR would land in: the nearest folder at or above DIR holding `.git`. */
export function enclosingCheckout(dir: string): string | undefined {
  let d = resolve(dir);
  for (;;) {
    if (existsSync(join(d, ".git"))) return d;
    const up = dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

/** Whether git ignores every one of `paths` (relative to `checkout`); false when git cannot say. */
export function gitIgnoresAll(checkout: string, paths: readonly string[]): boolean {
  try {
    const out = execFileSync("git", ["check-ignore", "--", ...paths], {
      cwd: checkout,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10_000,
    });
    const ignored = new Set(out.split("\n").filter((l) => l !== ""));
    return paths.every((p) => ignored.has(p));
  } catch {
    // Exit 1: none ignored (a tracked file never is); any other failure (no git): cannot say.
    return false;
  }
}

export type CheckoutVerdict =
  | { kind: "outside" }
  | { kind: "ignored"; checkout: string }
  | { kind: "tracked"; checkout: string; rel: string };

/**
 * Where a deployment in `dir` stands relative to source control. `probes` are files the
 * deployment will hold (relative to `dir`, e.g. its private key): all of them must be ignored.
 */
export function deploymentPlacement(dir: string, probes: readonly string[]): CheckoutVerdict {
  const checkout = enclosingCheckout(dir);
  if (checkout === undefined) return { kind: "outside" };
  const rel = relative(checkout, resolve(dir)) || ".";
  const paths = probes.map((p) => (rel === "." ? p : `${rel}/${p}`).split("\\").join("/"));
  return gitIgnoresAll(checkout, paths) ? { kind: "ignored", checkout } : { kind: "tracked", checkout, rel };
}
