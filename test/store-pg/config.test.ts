// The `store:` section of sidecar.yaml and the connection settings it becomes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/contracts/index.js";
import { hashToken, parseSidecarConfig } from "../../src/server/index.js";
import { resolveUrl, sslOf } from "../../src/store-pg/index.js";

const base = (store: unknown) => ({
  policies: ["p.yaml"],
  journal: { path: "j.db", key: "k.pem" },
  gate: { principals: [{ id: "agent-a", roles: ["agent"] }] },
  auth: { principals: [{ id: "agent-a", tokenSha256: hashToken("agent-token") }] },
  store,
});

describe("store: {kind: postgres}", () => {
  it("keeps its pool and resolves the TLS CA path against the configuration file", () => {
    const loaded = parseSidecarConfig(
      base({
        kind: "postgres",
        url: "env:DB",
        pool: { max: 4 },
        tls: { mode: "verify-full", caFile: "ca.pem" },
      }),
      "/srv/warden",
    );
    expect(loaded.config.store).toEqual({
      kind: "postgres",
      url: "env:DB",
      pool: { max: 4 },
      tls: { mode: "verify-full", caFile: "/srv/warden/ca.pem" },
    });
  });

  it("refuses an unknown store kind, an unknown member and an unknown TLS mode", () => {
    for (const store of [
      { kind: "mysql", url: "env:DB" },
      { kind: "postgres", url: "env:DB", password: "x" },
      { kind: "postgres", url: "env:DB", tls: { mode: "prefer" } },
      // A clock margin of half the lease or more would let a stale owner and an adopter overlap.
      { kind: "postgres", url: "env:DB", runs: { leaseMs: 1000 } },
      { kind: "postgres", url: "env:DB", runs: { leaseMs: 4000, marginMs: 2000 } },
    ]) {
      expect(() => parseSidecarConfig(base(store), "/srv")).toThrow(/store/);
    }
  });

  it("env:NAME reads the variable; an unset one or a non-postgres URL is refused, never a default server", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/), fc.webSegment(), (name, db) => {
        const url = `postgres://u:p@127.0.0.1:5432/${encodeURIComponent(db)}`;
        expect(resolveUrl(`env:${name}`, { [name]: url })).toBe(url);
        const unset = (() => {
          try {
            resolveUrl(`env:${name}`, {});
          } catch (err) {
            return err;
          }
          return undefined;
        })();
        expect(hasErrorCode(unset, "ERR_RUNTIME_CONFIG_INVALID")).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.string(), (s) => {
        if (/^postgres(ql)?:\/\//.test(s) || /^env:[A-Za-z_][A-Za-z0-9_]*$/.test(s)) return;
        expect(() => resolveUrl(s, {})).toThrow(/store\.url/);
      }),
    );
  });

  it("verify-full checks the server certificate; require encrypts without; disable is plain", () => {
    expect(sslOf({ mode: "verify-full" })).toEqual({ rejectUnauthorized: true });
    expect(sslOf({ mode: "require" })).toEqual({ rejectUnauthorized: false });
    expect(sslOf({ mode: "disable" })).toBe(false);
    expect(sslOf(undefined)).toBe(false);
  });
});
