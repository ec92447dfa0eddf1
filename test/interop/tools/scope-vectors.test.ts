// toolclad/scope_vectors.json (WARDEN_VECTORS): every ToolClad implementation must pass these.
import { describe, expect, it } from "vitest";
import { ipInCidr, matchHostPattern, parseCidr, parseIp, validateArgs } from "../../../src/tools/index.js";
import { compile, manifest } from "../../tools/helpers.js";
import { readVectorJson } from "../vectors.js";

interface Vectors {
  vectors: {
    ipv4_in_cidr: { ip: string; cidr: string; expected: boolean }[];
    ipv6_in_cidr: { ip: string; cidr: string; expected: boolean }[];
    hostname_wildcard_match: { hostname: string; pattern: string; expected: boolean }[];
    scope_target_validation: { value: string; valid: boolean; note: string }[];
    url_scope_check: { url: string; allowed_hosts: string[]; expected: boolean }[];
  };
}
const { vectors } = readVectorJson("toolclad", "scope_vectors.json") as Vectors;

describe("ToolClad scope vectors", () => {
  it.each([...vectors.ipv4_in_cidr, ...vectors.ipv6_in_cidr])(
    "$ip in $cidr is $expected",
    ({ ip, cidr, expected }) => {
      const a = parseIp(ip);
      const c = parseCidr(cidr);
      if (a === undefined || c === undefined) throw new Error("vector does not parse");
      expect(ipInCidr(a, c)).toBe(expected);
    },
  );

  it.each(vectors.hostname_wildcard_match)(
    "$hostname ~ $pattern is $expected",
    ({ hostname, pattern, expected }) => {
      expect(matchHostPattern(hostname, pattern)).toBe(expected);
    },
  );

  const target = compile(manifest('[args.target]\ntype = "scope_target"\n'));
  it.each(vectors.scope_target_validation)(
    "scope_target $value: valid=$valid ($note)",
    ({ value, valid }) => {
      const r = validateArgs(target, { value: "v", target: value }, { unrestrictedScope: true });
      expect(r.ok).toBe(valid);
      if (!r.ok) expect(r.arg).toBe("target");
    },
  );

  const url = compile(manifest('[args.url]\ntype = "url"\nscope_check = true\n'));
  it.each(vectors.url_scope_check)(
    "url $url in $allowed_hosts is $expected",
    ({ url: u, allowed_hosts, expected }) => {
      const r = validateArgs(url, { value: "v", url: u }, { scope: { allowed_hosts } });
      expect(r.ok).toBe(expected);
      if (!r.ok) expect(r.code).toBe("ERR_TOOL_ARG_OUT_OF_SCOPE");
    },
  );
});
