// The matching half of the coding-agent profile, free of zod so the sandbox runner
// (contain-run.ts, started for every contained shell call) loads nothing it does not need.
// coding-profile.ts re-exports both functions; import them from there elsewhere.
import { isAbsolute, relative, sep } from "node:path";

/** Whether `path` (absolute, already resolved) is `root` or lies below it. */
export function isWithin(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** Whether the egress allowlist names `host` (exact, or `*.suffix` for a subdomain). */
export function egressAllowed(profile: { egress: readonly string[] }, host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return profile.egress.some((e) => {
    const p = e.toLowerCase();
    return p.startsWith("*.") ? h.endsWith(p.slice(1)) : h === p;
  });
}
