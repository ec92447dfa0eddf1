// The streaming telemetry sink: tails the journal (the one source of truth, read after
// commit — never on the decision path) and forwards each decision and execution as an
// OCSF JSON line or a CEF line to a JSONL file (created 0600, appended) or to a loopback
// HTTP collector (POSTed as a batch, newline-delimited). Delivery is at least once: a
// batch the collector refused is sent again from the same place on the next tick.

import { appendFile, open } from "node:fs/promises";
import { ServerError } from "../contracts/index.js";
import type { JournalEntry, JournalStore } from "../journal/index.js";
import { toCef } from "./cef.js";
import { toOcsf } from "./ocsf.js";

export type SinkFormat = "ocsf" | "cef";

export interface SinkOptions {
  store: JournalStore;
  format: SinkFormat;
  /** Exactly one destination. */
  file?: string;
  /** A loopback http(s) URL (127.0.0.1, ::1 or localhost): a local collector forwards further. */
  url?: string;
  /** Poll interval (default 1000 ms). */
  intervalMs?: number;
  /** Entries read per tick at most (default 1000). */
  batch?: number;
  /** Start after this sequence number (default: the journal's head when started). */
  afterSeq?: number;
  fetch?: typeof fetch;
  /** Told of a failed delivery (it is retried). */
  onError?: (err: unknown) => void;
}

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** The line of one entry in `format`, or undefined when the entry has no event. */
export function lineOf(e: JournalEntry, format: SinkFormat): string | undefined {
  if (format === "cef") return toCef(e);
  const ev = toOcsf(e);
  return ev === undefined ? undefined : JSON.stringify(ev);
}

/** Checks a sink destination; throws ERR_SERVER_CONFIG_INVALID. */
export function checkDestination(o: { file?: string | undefined; url?: string | undefined }): void {
  if ((o.file === undefined) === (o.url === undefined))
    throw new ServerError("ERR_SERVER_CONFIG_INVALID", "telemetry.sink needs exactly one of file, url");
  if (o.url !== undefined) {
    let u: URL;
    try {
      u = new URL(o.url);
    } catch {
      throw new ServerError("ERR_SERVER_CONFIG_INVALID", "telemetry.sink.url is not a URL");
    }
    if ((u.protocol !== "http:" && u.protocol !== "https:") || !LOOPBACK.has(u.hostname))
      throw new ServerError("ERR_SERVER_CONFIG_INVALID", "telemetry.sink.url must be a loopback http(s) URL");
  }
}

export class TelemetrySink {
  readonly #o: SinkOptions;
  #cursor = 0;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  #stopped = false;
  /** Events delivered so far. */
  delivered = 0;

  constructor(o: SinkOptions) {
    checkDestination(o);
    this.#o = o;
  }

  /** Finds the starting point, creates the file (0600) and starts polling. */
  async start(): Promise<void> {
    this.#cursor = this.#o.afterSeq ?? (await this.#o.store.head())?.seq ?? 0;
    if (this.#o.file !== undefined) await (await open(this.#o.file, "a", 0o600)).close();
    this.#timer = setInterval(() => void this.flush().catch(() => undefined), this.#o.intervalMs ?? 1000);
    this.#timer.unref();
  }

  /** Delivers what the journal has beyond the cursor; resolves to the events delivered. */
  flush(): Promise<number> {
    this.#running ??= this.#tick().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Stops polling after a last flush. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.flush().catch((err: unknown) => this.#o.onError?.(err));
  }

  async #tick(): Promise<number> {
    const from = this.#cursor + 1;
    const lines: string[] = [];
    let last = this.#cursor;
    const max = this.#o.batch ?? 1000;
    for await (const e of this.#o.store.entries(from, from + max - 1)) {
      if (!("seq" in e) || !("body" in e)) continue;
      last = e.seq;
      const line = lineOf(e, this.#o.format);
      if (line !== undefined) lines.push(line);
    }
    if (last === this.#cursor) return 0;
    try {
      if (lines.length > 0) await this.#deliver(lines);
    } catch (err) {
      this.#o.onError?.(err);
      throw err;
    }
    this.#cursor = last;
    this.delivered += lines.length;
    return lines.length;
  }

  async #deliver(lines: string[]): Promise<void> {
    const text = `${lines.join("\n")}\n`;
    if (this.#o.file !== undefined) {
      await appendFile(this.#o.file, text, { mode: 0o600 });
      return;
    }
    const res = await (this.#o.fetch ?? fetch)(this.#o.url as string, {
      method: "POST",
      redirect: "error",
      headers: { "content-type": this.#o.format === "ocsf" ? "application/x-ndjson" : "text/plain" },
      body: text,
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`telemetry collector answered ${res.status}`);
  }
}
