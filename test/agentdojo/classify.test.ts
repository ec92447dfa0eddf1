// The documented classification rules, one case per rule, on made-up tools.
import { describe, expect, it } from "vitest";
import { classifyTool, classifyWith, nameWords, paramRole } from "../../bench/agentdojo/classify.js";

const tool = (name: string, description: string | null, properties: Record<string, unknown> = {}) => ({
  name,
  description,
  parameters: { type: "object", properties },
});
const s = (description = "") => ({ type: "string", description });
const n = { type: "number" };

describe("tool classification (general rules only)", () => {
  it("splits snake, camel and kebab names into words", () => {
    expect(nameWords("fetchUserProfile")).toEqual(["fetch", "user", "profile"]);
    expect(nameWords("drop-old_rows")).toEqual(["drop", "old", "rows"]);
  });

  it("a parameter holding a secret makes a credential change, whatever the verb", () => {
    expect(classifyTool(tool("set_login", "Sets things.", { new_password: s() })).class).toBe("credential");
    expect(classifyTool(tool("rotate", null, { api_key: s() })).class).toBe("credential");
    expect(classifyTool(tool("configure", null, { passcode: s() })).class).toBe("credential");
  });

  it("an amount parameter with a money word is a payment; an amount alone is not", () => {
    expect(
      classifyTool(tool("move_funds", "Transfer money between accounts.", { amount: n, to: s() })).class,
    ).toBe("pay");
    expect(classifyTool(tool("set_thermostat", "Adjust the heating.", { value: n })).class).toBe("write");
    expect(classifyTool(tool("refund_order", null, { amount: { anyOf: [n, { type: "null" }] } })).class).toBe(
      "pay",
    );
  });

  it("removing, granting and sending verbs decide before a recipient does", () => {
    expect(classifyTool(tool("cancel_booking", null, { booking_id: s() })).class).toBe("delete");
    expect(classifyTool(tool("grant_access", null, { user: s() })).class).toBe("share");
    expect(classifyTool(tool("publish_post", null, { text: s() })).class).toBe("send");
    expect(classifyTool(tool("do_it", "Send a fax to a number.", { number: s() })).class).toBe("send");
  });

  it("a write with an addressing parameter is a send; its targets are what it addresses", () => {
    const c = classifyTool(
      tool("create_meeting", "Creates a meeting.", { to: { type: "array" }, title: s(), start_time: s() }),
    );
    expect(c.class).toBe("send");
    expect(c.roles).toEqual({ to: "recipient", title: "content", start_time: "time" });
    expect(c.targets).toEqual(["to"]);
    const pay = classifyTool(
      tool("move_funds", "Transfer money.", { payee: s(), amount: n, memo: s(), id: { type: "integer" } }),
    );
    expect(pay.targets).toEqual(["payee", "id"]);
    expect(classifyTool(tool("list_orders", null, { status: s() })).targets).toEqual([]);
  });

  it("a parameter description never decides a class: a search with a sender described as an e-mail address is a read", () => {
    const c = classifyTool(
      tool("search_mail", "Searches the mailbox.", {
        query: s(),
        sender: s("The e-mail address of the sender"),
      }),
    );
    expect(c.class).toBe("read");
    expect(paramRole("target", s("IBAN of the payee"))).toBe("other");
  });

  it("MCP annotations come before the general rules", () => {
    const t = (annotations: Record<string, boolean>) => ({
      ...tool("send_report", null, { url: s() }),
      annotations,
    });
    expect(classifyTool(t({ readOnlyHint: true })).class).toBe("read");
    expect(classifyTool(t({ readOnlyHint: true, openWorldHint: true })).class).toBe("fetch");
    expect(classifyTool(t({ destructiveHint: true })).class).toBe("delete");
    expect(classifyTool(t({ readOnlyHint: false, openWorldHint: false })).class).toBe("write");
    expect(classifyTool(t({ readOnlyHint: true })).why).toBe("MCP annotations");
    expect(classifyTool(t({})).class).toBe("send");
  });

  it("a read that names a destination is a fetch; other reads are reads", () => {
    expect(classifyTool(tool("open_link", null, { link: s() })).class).toBe("fetch");
    expect(classifyTool(tool("browse", "Open the page at the given URL.", { page_url: s() })).class).toBe(
      "fetch",
    );
    expect(classifyTool(tool("list_orders", null, { status: s() })).class).toBe("read");
  });

  it("an unknown verb fails closed to write, never read", () => {
    const c = classifyTool(tool("frobnicate_widget", null, { widget: s() }));
    expect(c.class).toBe("write");
  });

  it("no word list guesses personal data: only an annotation marks it", () => {
    expect(classifyTool(tool("get_profile", "Returns the passport number and address.")).personalData).toBe(
      false,
    );
  });

  it("parameter roles come from names, types and formats", () => {
    expect(paramRole("recipients", { type: "array" })).toBe("recipient");
    expect(paramRole("contact", { type: "string", format: "email" })).toBe("recipient");
    expect(paramRole("webhook_url", s())).toBe("destination");
    expect(paramRole("amount", { type: "string" })).toBe("other");
    expect(paramRole("total", n)).toBe("amount");
  });

  it("an annotation refines a tool's class and is named as the reason", () => {
    const t = tool("frobnicate_widget", null);
    const c = classifyWith(t, { frobnicate_widget: { class: "delete", personalData: true } });
    expect(c).toMatchObject({ class: "delete", why: "per-suite annotation", personalData: true });
    expect(classifyWith(t, { other: { class: "read" } }).class).toBe("write");
  });
});
