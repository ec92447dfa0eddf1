import { describe, expect, it } from "vitest";
import { checkAddress, classifyAddress, parseAddress } from "../../src/executors/index.js";

function category(text: string): string {
  const a = parseAddress(text);
  if (a === undefined) throw new Error(`unparsed ${text}`);
  return classifyAddress(a);
}

describe("address classifier", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.1", "loopback"],
    ["0x7f.1", "loopback"],
    ["0x7f000001", "loopback"],
    ["2130706433", "loopback"],
    ["017700000001", "loopback"],
    ["0177.0.0.1", "loopback"],
    ["127.0.0.1.", "loopback"],
    ["0", "unspecified"],
    ["0.0.0.0", "unspecified"],
    ["10.1.2.3", "private"],
    ["012.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["3232235777", "private"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["169.254.1.1", "link_local"],
    ["169.254.169.254", "metadata"],
    ["0xa9.0xfe.0xa9.0xfe", "metadata"],
    ["2852039166", "metadata"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["::", "unspecified"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "metadata"],
    ["::ffff:10.0.0.1", "private"],
    ["::127.0.0.1", "loopback"],
    ["fe80::1", "link_local"],
    ["fe80::1%eth0", "link_local"],
    ["febf::1", "link_local"],
    ["fc00::1", "unique_local"],
    ["fd12:3456::1", "unique_local"],
    ["fd00:ec2::254", "metadata"],
    ["ff02::1", "multicast"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b::10.0.0.1", "private"],
    ["64:ff9b::a9fe:a9fe", "metadata"],
    ["2002:7f00:1::", "loopback"],
    ["2002:c0a8:101::1", "private"],
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"],
    ["2001:db8::1", "reserved"],
  ])("classifies %s as %s", (text, expected) => {
    expect(category(text)).toBe(expected);
  });

  it.each([
    ["8.8.8.8"],
    ["134744072"],
    ["1.1.1.1"],
    ["2606:4700:4700::1111"],
    ["::ffff:8.8.8.8"],
    ["172.32.0.1"],
    ["100.128.0.1"],
  ])("lets public %s through", (text) => {
    expect(checkAddress(text)).toEqual({ ok: true, category: "public" });
  });

  it("blocks loopback unless explicitly allowed, and nothing else with it", () => {
    expect(checkAddress("127.0.0.1")).toEqual({ ok: false, category: "loopback" });
    expect(checkAddress("127.0.0.1", { allowLoopback: true })).toEqual({ ok: true, category: "loopback" });
    expect(checkAddress("::ffff:127.0.0.1", { allowLoopback: true }).ok).toBe(true);
    expect(checkAddress("10.0.0.1", { allowLoopback: true }).ok).toBe(false);
    expect(checkAddress("169.254.169.254", { allowLoopback: true }).ok).toBe(false);
  });

  it.each([
    ["example.com"],
    ["256.1.1.1.1"],
    ["1.2.3.4.5"],
    ["08.1.1.1"],
    ["0xg.1"],
    ["1::2::3"],
    ["::ffff:1.2.3"],
    [""],
  ])("does not take %s for an address", (text) => {
    expect(parseAddress(text)).toBeUndefined();
    expect(checkAddress(text)).toEqual({ ok: false, category: "invalid" });
  });

  it("rejects out-of-range short forms", () => {
    expect(parseAddress("1.2.65536")).toBeUndefined();
    expect(parseAddress("4294967296")).toBeUndefined();
    expect(category("1.2.65535")).toBe("public");
  });
});
