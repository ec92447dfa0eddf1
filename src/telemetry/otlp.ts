// OTLP trace export for the sidecar: registers an OpenTelemetry SDK tracer provider that
// batches the Gate's spans to an OTLP/HTTP collector. The SDK packages are optional
// (devDependencies here, optional peers for deployments) and loaded only when configured;
// without them a configured `telemetry.otlp` stops the start with a coded error.

import { trace } from "@opentelemetry/api";
import { ServerError } from "../contracts/index.js";

export interface OtlpOptions {
  /** OTLP/HTTP traces endpoint, e.g. `http://127.0.0.1:4318/v1/traces`. */
  endpoint: string;
  /** Extra request headers (an API key for a hosted collector: put it in the environment, not in git). */
  headers?: Record<string, string>;
  /** `service.name` of the spans (default `warden`). */
  serviceName?: string;
}

export interface OtlpHandle {
  /** Flushes and stops the exporter, and unregisters the provider. */
  shutdown(): Promise<void>;
}

interface SdkModules {
  sdk: {
    BasicTracerProvider: new (o: {
      resource?: unknown;
      spanProcessors: unknown[];
    }) => {
      shutdown(): Promise<void>;
    };
    BatchSpanProcessor: new (exporter: unknown) => unknown;
  };
  exporter: { OTLPTraceExporter: new (o: { url: string; headers?: Record<string, string> }) => unknown };
  resources: { resourceFromAttributes(a: Record<string, string>): unknown };
}

const PACKAGES = [
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/exporter-trace-otlp-http",
  "@opentelemetry/resources",
] as const;

async function loadSdk(): Promise<SdkModules> {
  try {
    const [sdk, exporter, resources] = await Promise.all(PACKAGES.map((p) => import(p)));
    return { sdk, exporter, resources } as SdkModules;
  } catch (err) {
    throw new ServerError(
      "ERR_SERVER_CONFIG_INVALID",
      `telemetry.otlp needs the OpenTelemetry SDK: npm install ${PACKAGES.join(" ")}`,
      { cause: err },
    );
  }
}

/** Registers the global tracer provider exporting to `endpoint`. */
export async function startOtlp(o: OtlpOptions): Promise<OtlpHandle> {
  const m = await loadSdk();
  const exporter = new m.exporter.OTLPTraceExporter({
    url: o.endpoint,
    ...(o.headers !== undefined ? { headers: o.headers } : {}),
  });
  const provider = new m.sdk.BasicTracerProvider({
    resource: m.resources.resourceFromAttributes({ "service.name": o.serviceName ?? "warden" }),
    spanProcessors: [new m.sdk.BatchSpanProcessor(exporter)],
  });
  if (
    !trace.setGlobalTracerProvider(provider as unknown as Parameters<typeof trace.setGlobalTracerProvider>[0])
  ) {
    await provider.shutdown();
    throw new ServerError(
      "ERR_SERVER_CONFIG_INVALID",
      "an OpenTelemetry tracer provider is already registered",
    );
  }
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
    },
  };
}
