// Warden console client (served from the sidecar; no CDN, no inline script). It never puts
// server or agent text into the page as markup except the queue fragment, which the server
// built with every agent string escaped. It keeps the live queue current (server-sent
// events), shows countdowns, and signs each decision with this browser's non-extractable
// Ed25519 key (WebCrypto), registered once per approver.

const base = document.body.dataset.base || "/console";
const STATEMENT_VERSION = "warden.approval.v1";

/** RFC 8785 canonical JSON for the values a statement holds. */
function canonical(v) {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
}

function b64url(bytes) {
  let s = "";
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function sha256Hex(text) {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// ---- browser key (IndexedDB holds the CryptoKey objects; the private key cannot be exported)
function idb() {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open("warden-console", 1);
    r.onupgradeneeded = () => r.result.createObjectStore("keys");
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

async function idbGet(key) {
  const db = await idb();
  return new Promise((resolve, reject) => {
    const r = db.transaction("keys").objectStore("keys").get(key);
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

async function idbPut(key, value) {
  const db = await idb();
  return new Promise((resolve, reject) => {
    const t = db.transaction("keys", "readwrite");
    t.objectStore("keys").put(value, key);
    t.oncomplete = () => resolve();
    t.onerror = () => reject(t.error);
  });
}

let signingKey; // { privateKey, keyId }

async function prepareKey(status) {
  const approver = status.dataset.approverId;
  const csrf = status.dataset.csrf;
  if (status.dataset.signing !== "required") {
    status.textContent = "Decisions are not signed by approvers on this deployment.";
    return;
  }
  let stored = await idbGet(`${location.host}|${approver}`);
  if (stored === undefined) {
    let pair;
    try {
      pair = await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
    } catch {
      status.textContent = "This browser has no Ed25519 WebCrypto: decisions cannot be signed here.";
      status.classList.add("error");
      return;
    }
    const x = b64url(await crypto.subtle.exportKey("raw", pair.publicKey));
    stored = { privateKey: pair.privateKey, x, keyId: undefined };
    await idbPut(`${location.host}|${approver}`, stored);
  }
  const res = await fetch(`${base}/keys`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-csrf-token": csrf,
      accept: "application/json",
    },
    body: new URLSearchParams({ x: stored.x }).toString(),
    credentials: "same-origin",
  });
  const answer = await res.json();
  if (!res.ok) {
    status.textContent = `This browser's key is not registered (${answer.error.code}): ${answer.error.message}`;
    status.classList.add("error");
    return;
  }
  signingKey = { privateKey: stored.privateKey, keyId: answer.keyId };
  status.textContent = `Decisions are signed in this browser with key ${answer.keyId.slice(0, 12)}…`;
  status.dataset.keyId = answer.keyId;
}

// ---- decision forms
function editedParameters(form) {
  // Values too long to edit in the page are kept as they were.
  const out = JSON.parse(form.dataset.original);
  for (const el of form.querySelectorAll("[data-param]")) {
    const name = el.dataset.param;
    const t = el.dataset.type;
    if (t === "integer" || t === "number") out[name] = Number(el.value);
    else if (t === "boolean") out[name] = el.value === "true";
    else if (t === "json") {
      try {
        out[name] = JSON.parse(el.value);
      } catch {
        throw new Error(`${name} is not valid JSON`);
      }
    } else out[name] = el.value;
  }
  return out;
}

function showDiff(form) {
  const box = form.querySelector(".diff");
  if (!box) return;
  box.replaceChildren();
  let after;
  try {
    after = editedParameters(form);
  } catch (e) {
    box.textContent = e.message;
    return;
  }
  const before = JSON.parse(form.dataset.original);
  const list = document.createElement("ul");
  for (const name of Object.keys(after)) {
    if (!form.querySelector(`[data-param="${CSS.escape(name)}"]`)) continue;
    const was = JSON.stringify(before[name]);
    const now = JSON.stringify(after[name]);
    if (was === now) continue;
    const li = document.createElement("li");
    li.textContent = `${name}: ${was} → ${now}`;
    list.append(li);
  }
  box.append(list.childElementCount === 0 ? "No parameter changed." : list);
}

async function submitDecision(form, ev) {
  ev.preventDefault();
  const status = form.querySelector(".status");
  const outcome = form.querySelector("input[name=outcome]:checked")?.value;
  if (!outcome) return;
  const justification = form.elements.justification.value;
  const statement = {
    v: STATEMENT_VERSION,
    decision_id: form.dataset.decisionId,
    action: outcome,
    approver_id: form.dataset.approverId,
    justification,
    time: new Date().toISOString(),
  };
  if (outcome === "modify") {
    let params;
    try {
      params = editedParameters(form);
    } catch (e) {
      status.textContent = e.message;
      return;
    }
    form.elements.parameters.value = JSON.stringify(params);
    statement.parameters_hash = `sha256:${await sha256Hex(canonical(params))}`;
  } else form.elements.parameters.value = "";
  const keyStatus = document.getElementById("key-status");
  if (keyStatus?.dataset.signing === "required") {
    if (!signingKey) {
      status.textContent = "No registered signing key in this browser: the decision cannot be signed.";
      return;
    }
    const bytes = new TextEncoder().encode(canonical(statement));
    const sig = await crypto.subtle.sign({ name: "Ed25519" }, signingKey.privateKey, bytes);
    form.elements.sig.value = b64url(sig);
    form.elements.key_id.value = signingKey.keyId;
    form.elements.time.value = statement.time;
  }
  status.textContent = "Sending…";
  form.submit();
}

// A quarantine lift: the record the form describes, signed with this browser's key. A trust
// lift (apae:quarantine_lift) names the truster, subject and episode; a principal lift
// (warden:principal_quarantine_lift) the principal, the quarantine's id and the approver —
// each bound to one quarantine, so it cannot be replayed on a later one.
function liftRecord(form) {
  const d = form.dataset;
  const common = {
    approver_key_id: signingKey.keyId,
    issued_at: new Date().toISOString(),
    reason: form.elements.reason.value,
  };
  if (form.classList.contains("lift-principal"))
    return {
      scope: "warden:principal_quarantine_lift",
      principal: d.principal,
      quarantine_id: d.quarantineId,
      approver_id: d.approverId,
      ...common,
    };
  return {
    scope: "apae:quarantine_lift",
    truster: d.truster,
    subject: d.subject,
    quarantine_count: Number(d.count),
    ...common,
  };
}

async function submitLift(form, ev) {
  ev.preventDefault();
  const status = form.querySelector(".status");
  if (!signingKey) {
    status.textContent = "No registered signing key in this browser: the lift cannot be signed.";
    return;
  }
  const lift = liftRecord(form);
  const bytes = new TextEncoder().encode(canonical(lift));
  const sig = await crypto.subtle.sign({ name: "Ed25519" }, signingKey.privateKey, bytes);
  form.elements.lift.value = JSON.stringify(lift);
  form.elements.signature.value = b64url(sig);
  status.textContent = "Sending…";
  form.submit();
}

function wire(root) {
  for (const form of root.querySelectorAll("form.lift, form.lift-principal")) {
    if (form.dataset.wired) continue;
    form.dataset.wired = "1";
    form.addEventListener("submit", (ev) => {
      submitLift(form, ev).catch((e) => {
        form.querySelector(".status").textContent = `Could not sign: ${e.message}`;
      });
    });
  }
  for (const form of root.querySelectorAll("form.decide")) {
    if (form.dataset.wired) continue;
    form.dataset.wired = "1";
    form.addEventListener("submit", (ev) => {
      submitDecision(form, ev).catch((e) => {
        form.querySelector(".status").textContent = `Could not sign: ${e.message}`;
      });
    });
    form.addEventListener("input", () => showDiff(form));
    form.addEventListener("change", () => showDiff(form));
  }
}

// ---- countdowns and the live queue
function countdowns() {
  const now = Date.now();
  for (const item of document.querySelectorAll(".approval[data-expires]")) {
    const left = Math.round((Date.parse(item.dataset.expires) - now) / 1000);
    const el = item.querySelector(".remaining");
    if (!el) continue;
    el.textContent =
      left <= 0 ? "(timed out)" : `(${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left)`;
  }
}

async function reloadQueue() {
  const res = await fetch(`${base}/approvals/queue`, { credentials: "same-origin" });
  if (!res.ok) return;
  const tpl = document.createElement("template");
  tpl.innerHTML = await res.text(); // built by the server with every agent string escaped
  const fresh = tpl.content.getElementById("queue");
  const queue = document.getElementById("queue");
  if (!fresh || !queue) return;
  const keep = new Set([...fresh.children].map((li) => li.id));
  for (const li of [...queue.children]) if (!keep.has(li.id)) li.remove();
  for (const li of [...fresh.children]) if (!document.getElementById(li.id)) queue.append(li);
  document.getElementById("queue-empty").hidden = queue.childElementCount > 0;
  const live = document.getElementById("live-status");
  if (live) live.textContent = `${queue.childElementCount} pending`;
  wire(queue);
  countdowns();
}

function liveQueue() {
  const events = new EventSource(`${base}/approvals/events`);
  events.addEventListener("queue", () => {
    reloadQueue().catch(() => undefined);
  });
  events.addEventListener("ended", () => {
    events.close();
    const live = document.getElementById("live-status");
    if (live) live.textContent = "Your session ended: sign in again.";
  });
}

function start() {
  wire(document);
  countdowns();
  setInterval(countdowns, 1000);
  const keyStatus = document.getElementById("key-status");
  if (keyStatus) {
    prepareKey(keyStatus).catch((e) => {
      keyStatus.textContent = `Signing key unavailable: ${e.message}`;
    });
  }
  if (document.getElementById("queue")) liveQueue();
}

start();
