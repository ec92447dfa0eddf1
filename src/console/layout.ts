// The console's page shell: one stylesheet and one script, both served by the plugin from
// the repository (no CDN, no inline script or style), a navigation of the pages the
// signed-in roles may open, and the sign-out form (which carries the CSRF token).
import { type Html, html } from "./html.js";
import type { ConsolePage, ConsoleRole } from "./page.js";

export interface Shell {
  readonly base: string;
  readonly title: string;
  /** Signed in: who, the roles, the CSRF token and the pages to link. */
  readonly signedIn?: {
    readonly principalId: string;
    readonly roles: readonly ConsoleRole[];
    readonly csrfToken: string;
    readonly pages: readonly Pick<ConsolePage, "path" | "title" | "roles">[];
  };
}

/** Whether any of `have` is among `need`. */
export function hasRole(have: readonly ConsoleRole[], need: readonly ConsoleRole[]): boolean {
  return need.some((r) => have.includes(r));
}

function nav(s: Shell): Html {
  const who = s.signedIn;
  if (who === undefined) return html``;
  const links = [
    ...(who.roles.includes("approver")
      ? [
          html`<li><a href="${s.base}/approvals">Approvals</a></li>`,
          html`<li><a href="${s.base}/quarantine">Quarantine</a></li>`,
          html`<li><a href="${s.base}/keys">Keys</a></li>`,
        ]
      : []),
    ...who.pages
      .filter((p) => hasRole(who.roles, p.roles) && !p.path.includes(":"))
      .map((p) => html`<li><a href="${s.base}${p.path}">${p.title}</a></li>`),
  ];
  return html`<nav aria-label="Console">
  <ul>${links}</ul>
  <form method="post" action="${s.base}/sign-out" class="sign-out">
    <input type="hidden" name="csrf" value="${who.csrfToken}">
    <span class="who">${who.principalId} (${who.roles.join(", ")})</span>
    <button type="submit">Sign out</button>
  </form>
</nav>`;
}

export function page(s: Shell, main: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${s.title} · Warden console</title>
<link rel="stylesheet" href="${s.base}/static/console.css">
<script src="${s.base}/static/console.js" defer></script>
</head>
<body data-base="${s.base}">
<a class="skip" href="#main">Skip to content</a>
<header><p class="brand">Warden console</p>${nav(s)}</header>
<main id="main" tabindex="-1">
<h1>${s.title}</h1>
${main}
</main>
</body>
</html>`;
}

/** A refusal page: the stable code and a short message (never a stack or a secret). */
export function errorPage(base: string, code: string, message: string, signedIn?: Shell["signedIn"]): Html {
  return page(
    { base, title: "Refused", ...(signedIn !== undefined ? { signedIn } : {}) },
    html`<p role="alert" class="error"><code>${code}</code> ${message}</p>
<p><a href="${base}/sign-in">Sign in</a> · <a href="${base}/approvals">Approvals</a></p>`,
  );
}
