// The sidecar's `drift:` and `telemetry:` sections (docs/http-api.md, docs/telemetry.md):
// their schemas, the DriftTracker a `drift:` section stands for, and the telemetry the
// sidecar starts with its runtime (OTLP trace export, the OCSF/CEF streaming sink).

import { z } from "zod";
import { type Embedder, lexicalEmbedder } from "../context/index.js";
import { ServerError } from "../contracts/index.js";
import { DriftTracker } from "../gate/index.js";
import type { JournalStore } from "../journal/index.js";
import {
  checkDestination,
  type OtlpHandle,
  onnxEmbedder,
  openAIEmbedder,
  startOtlp,
  TelemetrySink,
} from "../telemetry/index.js";

const Unit = z.number().min(0).max(1);
const Levels = z.strictObject({ defer: Unit.optional(), step_up: Unit.optional(), deny: Unit.optional() });
const ByTier = z.strictObject({
  low: Levels.optional(),
  medium: Levels.optional(),
  high: Levels.optional(),
  critical: Levels.optional(),
  default: Levels.optional(),
});

export const DriftSectionSchema = z.strictObject({
  embedder: z
    .discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("lexical") }),
      z.strictObject({
        kind: z.literal("openai"),
        baseUrl: z.string().min(1).max(2048),
        model: z.string().min(1).max(256),
        /** Name of the environment variable holding the API key (never the key itself). */
        apiKeyEnv: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/)
          .optional(),
        timeoutMs: z.number().int().min(100).max(60_000).optional(),
      }),
      z.strictObject({ kind: z.literal("onnx"), modelDir: z.string().min(1).max(4096) }),
    ])
    .default({ kind: "lexical" }),
  /** Per-action thresholds by contract risk tier (absent: the calibrated defaults). */
  thresholds: ByTier.optional(),
  cumulative: ByTier.optional(),
  smoothing: z.number().gt(0).max(1).optional(),
  maxRuns: z.number().int().min(1).max(1_000_000).optional(),
});
export type DriftSection = z.infer<typeof DriftSectionSchema>;

export const TelemetrySectionSchema = z.strictObject({
  otlp: z
    .strictObject({
      endpoint: z.url(),
      headers: z.record(z.string().min(1).max(128), z.string().max(4096)).optional(),
      serviceName: z.string().min(1).max(128).optional(),
    })
    .optional(),
  sink: z
    .strictObject({
      format: z.enum(["ocsf", "cef"]).default("ocsf"),
      /** A JSONL (or CEF line) file, created 0600 and appended to. */
      file: z.string().min(1).max(4096).optional(),
      /** A loopback collector URL (127.0.0.1, ::1, localhost). */
      url: z.string().min(1).max(2048).optional(),
      intervalMs: z.number().int().min(50).max(600_000).default(1000),
    })
    .superRefine((s, ctx) => {
      try {
        checkDestination(s);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    })
    .optional(),
});
export type TelemetrySection = z.infer<typeof TelemetrySectionSchema>;

function embedderOf(e: DriftSection["embedder"], env: NodeJS.ProcessEnv): Embedder {
  switch (e.kind) {
    case "lexical":
      return lexicalEmbedder;
    case "onnx":
      return onnxEmbedder({ modelDir: e.modelDir });
    case "openai": {
      const key = e.apiKeyEnv !== undefined ? env[e.apiKeyEnv] : undefined;
      if (e.apiKeyEnv !== undefined && key === undefined)
        throw new ServerError(
          "ERR_SERVER_CONFIG_INVALID",
          `drift.embedder.apiKeyEnv: ${e.apiKeyEnv} is not set`,
        );
      return openAIEmbedder({
        baseUrl: e.baseUrl,
        model: e.model,
        ...(key !== undefined ? { apiKey: key } : {}),
        ...(e.timeoutMs !== undefined ? { timeoutMs: e.timeoutMs } : {}),
      });
    }
  }
}

/** The Gate's drift scorer for a `drift:` section. */
export function driftTrackerOf(d: DriftSection, env: NodeJS.ProcessEnv = process.env): DriftTracker {
  return new DriftTracker({
    embedder: embedderOf(d.embedder, env),
    ...(d.thresholds !== undefined ? { thresholds: d.thresholds } : {}),
    ...(d.cumulative !== undefined ? { cumulative: d.cumulative } : {}),
    ...(d.smoothing !== undefined ? { smoothing: d.smoothing } : {}),
    ...(d.maxRuns !== undefined ? { maxRuns: d.maxRuns } : {}),
  });
}

export interface RunningTelemetry {
  readonly sink: TelemetrySink | undefined;
  /** Stops the sink after a last delivery (call before the journal closes). */
  stopSink(): Promise<void>;
  /** Flushes and unregisters the OTLP exporter (call last). */
  stopTracing(): Promise<void>;
}

/** Starts what `telemetry:` configures; nothing when it is absent. */
export async function startTelemetry(
  t: TelemetrySection | undefined,
  store: JournalStore,
): Promise<RunningTelemetry> {
  let otlp: OtlpHandle | undefined;
  let sink: TelemetrySink | undefined;
  if (t?.otlp !== undefined) {
    otlp = await startOtlp({
      endpoint: t.otlp.endpoint,
      ...(t.otlp.headers !== undefined ? { headers: t.otlp.headers } : {}),
      ...(t.otlp.serviceName !== undefined ? { serviceName: t.otlp.serviceName } : {}),
    });
  }
  if (t?.sink !== undefined) {
    const s = t.sink;
    sink = new TelemetrySink({
      store,
      format: s.format,
      intervalMs: s.intervalMs,
      ...(s.file !== undefined ? { file: s.file } : {}),
      ...(s.url !== undefined ? { url: s.url } : {}),
    });
    try {
      await sink.start();
    } catch (err) {
      await otlp?.shutdown();
      throw err;
    }
  }
  return {
    sink,
    stopSink: async () => {
      await sink?.stop();
    },
    stopTracing: async () => {
      await otlp?.shutdown();
    },
  };
}
