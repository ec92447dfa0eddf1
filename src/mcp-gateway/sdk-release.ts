// The MCP SDK's Streamable HTTP transport (1.32.2, the latest release) in JSON response mode
// answers a request but never removes its stream's entry from the transport's
// `_streamMapping` (in SSE mode `cleanup()` does), so every answered POST — its request,
// headers and body stream — stays referenced for the life of the session: ~10 KB per call,
// without bound under a flood (the flood bench's gateway grew ~2 MB/s). Until the SDK
// releases them, the gateway drops, after each answer, the JSON-mode entries no pending
// request refers to (an entry and its request ids are registered together, synchronously,
// so one without a pending id has been answered). Private fields: if the SDK changes their
// shape this does nothing, and test/mcp-gateway/sdk-release.test.ts fails.
interface WebTransport {
  _streamMapping?: Map<string, { resolveJson?: unknown }>;
  _requestToStreamMapping?: Map<unknown, string>;
}

/** Drops the answered JSON-mode stream entries of an SDK transport (Node or web-standard). */
export function releaseAnswered(transport: unknown): void {
  const t = transport as WebTransport & { _webStandardTransport?: WebTransport };
  const web = t._webStandardTransport ?? t;
  const streams = web._streamMapping;
  const pending = web._requestToStreamMapping;
  if (!(streams instanceof Map) || !(pending instanceof Map)) return;
  const waiting = new Set(pending.values());
  for (const [id, s] of streams) if (s.resolveJson !== undefined && !waiting.has(id)) streams.delete(id);
}

/** The count of stream entries an SDK transport holds (for tests and gauges). */
export function heldStreams(transport: unknown): number | undefined {
  const t = transport as WebTransport & { _webStandardTransport?: WebTransport };
  const streams = (t._webStandardTransport ?? t)._streamMapping;
  return streams instanceof Map ? streams.size : undefined;
}
