// The ToolClad project's example contracts have the same bytes in schemapin-v1 and RFC 8785.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../../src/contracts/index.js";
import { contractToCanonical, loadContract } from "../../../../src/tools/index.js";
import { schemapinCanonical } from "../../../../src/tools/integrity/index.js";
import { EXAMPLES } from "../examples.js";

describe("schemapin-v1 canonical form of the ToolClad examples", () => {
  it.each(["curl_fetch", "dig_lookup", "nmap_scan", "whois_lookup"])(
    "the %s ToolClad contract has the same bytes in schemapin-v1 and RFC 8785",
    (name) => {
      const loaded = loadContract(join(EXAMPLES, `${name}.clad.toml`));
      if (!loaded.ok) throw new Error(loaded.message);
      const canonical = contractToCanonical(loaded.tool.contract);
      expect(schemapinCanonical(canonical)).toBe(canonicalJson(canonical));
    },
  );
});
