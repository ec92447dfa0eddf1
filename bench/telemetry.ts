// Telemetry costs, one process, one run: the Gate's decision (100 YAML rules, stub journal,
// 10 in flight) with OpenTelemetry spans off (no SDK: one no-op span per decision) and on
// (SDK with an in-memory exporter: an action span and its stage spans per decision), with
// lexical drift scoring on, and drift scoring alone (lexical embedder, one action against
// the run's original request). The "off" rows run first: once an SDK is registered the
// API's proxy tracer keeps it for the process.

import { performance } from "node:perf_hooks";
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { createSessionStore, lexicalEmbedder } from "../src/context/index.js";
import { GateRequest } from "../src/contracts/index.js";
import { generateKeyPair } from "../src/crypto/index.js";
import { DriftTracker, Gate, type GateJournal, type GateOptions } from "../src/gate/index.js";
import type { JournalEntry } from "../src/journal/index.js";
import { gatePolicy, rawCall } from "./_decide-inproc.js";
import { measureAsync, type Stats, summarize, table } from "./_stats.js";

const policy = gatePolicy();
const signer = generateKeyPair("ed25519");
const ORIGINAL = "Fetch the item pages from the example API and summarise the items";

function gate(extra: Partial<GateOptions> = {}): Gate {
  let seq = 0;
  const stub: GateJournal = {
    append: async (e) => ({ seq: seq++, type: e.type }) as unknown as JournalEntry,
    appendBuilt: async (e) => ({ seq: seq++, type: e.type }) as unknown as JournalEntry,
  };
  return new Gate({
    policy,
    journal: stub,
    signer,
    principals: { "agent-1": { id: "agent-1", roles: ["agent"] } },
    sessions: createSessionStore({ budgets: {} }),
    ...extra,
  });
}

const call = (i: number, drift: boolean) =>
  drift ? { ...rawCall(i), originalRequest: ORIGINAL } : rawCall(i);

async function drive(name: string, g: Gate, n: number, drift = false): Promise<Stats> {
  for (let i = 0; i < 2000; i++) await g.evaluate(call(i, drift));
  const lat = new Float64Array(n);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        const out = await g.evaluate(call(2000 + i, drift));
        if (out.decision !== "allow")
          throw new Error(`bench: expected allow, got ${out.reasonCodes.join(",")}`);
        lat[i] = (performance.now() - s) * 1000;
      }
    }),
  );
  return summarize(name, lat, performance.now() - t0, cpu0);
}

const N = 10_000;
const rows: Stats[] = [];
const off = await drive("decision, OTel off (no SDK)", gate(), N);
rows.push(off);
const tracker = new DriftTracker({
  embedder: lexicalEmbedder,
  thresholds: { default: {} },
  cumulative: { default: {} },
});
rows.push(await drive("decision, OTel off, lexical drift on", gate({ drift: tracker }), N, true));
const scorer = new DriftTracker({ embedder: lexicalEmbedder });
const req = GateRequest.parse(rawCall(1));
rows.push(
  await measureAsync("drift scoring alone (lexical, one action)", 5000, () => scorer.score(req, ORIGINAL)),
);

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
trace.setGlobalTracerProvider(provider);
const on = await drive("decision, OTel on (SDK, in-memory exporter)", gate(), N);
rows.push(on);
const spans = exporter.getFinishedSpans().length;
await provider.shutdown();

process.stdout.write(table(rows, off));
process.stdout.write(
  `\nspans exported with OTel on: ${spans} for ${N + 2000} decisions (${(spans / (N + 2000)).toFixed(1)} per decision)\n`,
);
