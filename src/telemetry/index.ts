// Public face of the telemetry layer (OATS E6): journal entries as OCSF 1.3.0 events and
// CEF lines, the `ocsf` / `cef` export formats, the streaming sink, and OTLP trace export.
export { cefOf, toCef } from "./cef.js";
export {
  type OnnxEmbedderOptions,
  type OpenAIEmbedderOptions,
  onnxEmbedder,
  openAIEmbedder,
  parseEmbeddingsResponse,
} from "./embedders.js";
export { cefFormat, type ExportFormat, ocsfFormat, TELEMETRY_FORMATS } from "./export-formats.js";
export {
  apiActivity,
  decisionEvent,
  executionEvent,
  OCSF_VERSION,
  type OcsfEvent,
  PRODUCT,
  toOcsf,
} from "./ocsf.js";
export { type OtlpHandle, type OtlpOptions, startOtlp } from "./otlp.js";
export { checkDestination, lineOf, type SinkFormat, type SinkOptions, TelemetrySink } from "./sink.js";
