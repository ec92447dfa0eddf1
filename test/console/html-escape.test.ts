// The console's markup builder as an attacker would test it: agent-controlled strings
// interpolated into pages must stay text, and what a human cannot see must be shown.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agentText, html, MAX_SHOWN_CHARS, trusted } from "../../src/console/html.js";

const OWN_TAG =
  /<(?:span class="agent-text"|\/span|mark class="(?:invisible|confusable|truncated)"(?: title="[^"<>]*")?|\/mark)>/g;

function unescapeHtml(s: string): string {
  return s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
}

describe("console html", () => {
  it("an interpolated string never opens a tag or closes an attribute (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const out = html`<p title="${s}">${s}</p>`.value;
        const inner = out.slice('<p title="'.length, -"</p>".length);
        expect(inner.replace('">', "")).not.toMatch(/[<>"']/);
      }),
      { numRuns: 500 },
    );
  });

  it("an img onerror payload is rendered as text", () => {
    const out = html`<td>${"<img src=x onerror=alert(1)>"}</td>`.value;
    expect(out).toBe("<td>&lt;img src=x onerror=alert(1)&gt;</td>");
  });

  it("markup built by html or trusted passes through once, arrays are joined, nullish is empty", () => {
    const inner = html`<b>${"&"}</b>`;
    expect(html`<i>${inner}${[html`<u>x</u>`, "<"]}${undefined}${null}${false}</i>`.value).toBe(
      "<i><b>&amp;</b><u>x</u>&lt;</i>",
    );
    expect(html`${trusted("<br>")}`.value).toBe("<br>");
  });

  it("a forged Html-looking object is escaped, not trusted", () => {
    const forged = { value: "<script>alert(1)</script>" };
    expect(html`${forged}`.value).not.toContain("<script>");
  });

  it("agent text contains only the builder's own tags, whatever the input (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (s) => {
        const out = agentText(s).value;
        expect(out.replace(OWN_TAG, "")).not.toMatch(/[<>]/);
      }),
      { numRuns: 500 },
    );
  });

  it("plain ASCII text round-trips exactly (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(..."ab<>&\"' \n\tz=/:;") }), (s) => {
        const out = agentText(s).value.replace(OWN_TAG, "");
        expect(unescapeHtml(out)).toBe(s);
      }),
    );
  });

  it("an RTL override is shown as a marked U+202E badge, never emitted raw", () => {
    const out = agentText("invoice\u202Efdp.exe").value;
    expect(out).not.toContain("\u202E");
    expect(out).toContain('<mark class="invisible" title="invisible character U+202E">U+202E</mark>');
  });

  it("a zero-width look-alike of an allowed domain is marked where the hidden character sits", () => {
    const out = agentText("https://pay\u200Bpal.com/login").value;
    expect(out).not.toContain("\u200B");
    expect(out).toContain(
      'pay<mark class="invisible" title="invisible character U+200B">U+200B</mark>pal.com',
    );
  });

  it("a Cyrillic letter inside a Latin domain is marked as confusable", () => {
    const out = agentText("p\u0430ypal.com").value;
    expect(out).toContain('<mark class="confusable" title="confusable character U+0430">\u0430</mark>');
    expect(agentText("Привет мир").value).not.toContain("confusable");
  });

  it("a 1 MB string is cut to the shown maximum with its length stated", () => {
    const big = "A".repeat(1_048_576);
    const out = agentText(big).value;
    expect(out.length).toBeLessThan(MAX_SHOWN_CHARS + 300);
    expect(out).toContain("1,048,576 characters in all");
  });

  it("line feeds and tabs stay as themselves; other controls become badges", () => {
    const out = agentText("a\nb\tc\u0000d\u001be").value;
    expect(out).toContain("a\nb\tc");
    expect(out).toContain("U+0000");
    expect(out).toContain("U+001B");
    expect(out).not.toMatch(/[\u0000\u001b]/);
  });
});
