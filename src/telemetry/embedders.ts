// Embedder adapters beyond the built-in lexical one (src/context holds the port and the
// lexical embedder, which need no I/O; these talk to the world, so they live here): an OpenAI-compatible embeddings
// endpoint (POST {baseUrl}/embeddings) and a local ONNX model through the optional peer
// dependency `@huggingface/transformers`, loaded lazily from a directory the operator
// provides (no model is ever downloaded). Every failure is a coded ContextError; the Gate
// turns a failed embedding into a denial (fail closed).

import { basename } from "node:path";
import type { Embedder } from "../context/index.js";
import { ContextError } from "../contracts/index.js";

export interface OpenAIEmbedderOptions {
  /** Base URL of the API, e.g. `http://127.0.0.1:8080/v1` (the adapter appends `/embeddings`). */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer …` when present (read it from the environment, never a file in git). */
  apiKey?: string;
  /** Per request (default 5000 ms). */
  timeoutMs?: number;
  /** Largest response accepted (default 8 MiB). */
  maxResponseBytes?: number;
  fetch?: typeof fetch;
}

const failed = (message: string, cause?: unknown) =>
  new ContextError("ERR_CONTEXT_EMBEDDER_FAILED", message, cause !== undefined ? { cause } : {});

/** Parses `{ data: [{ index, embedding: number[] }] }`, ordered by index, all of one length. */
export function parseEmbeddingsResponse(body: unknown, expected: number): Float32Array[] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length !== expected)
    throw failed(`embeddings response: expected ${expected} items`);
  const out = new Array<Float32Array | undefined>(expected);
  let dims = -1;
  for (const item of data as unknown[]) {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= expected)
      throw failed("embeddings response: bad index");
    if (out[index] !== undefined) throw failed("embeddings response: duplicate index");
    if (!Array.isArray(embedding) || embedding.length === 0 || embedding.length > 65_536)
      throw failed("embeddings response: bad embedding");
    if (dims !== -1 && embedding.length !== dims) throw failed("embeddings response: mixed dimensions");
    dims = embedding.length;
    const v = new Float32Array(dims);
    for (let i = 0; i < dims; i++) {
      const x = embedding[i];
      if (typeof x !== "number" || !Number.isFinite(x))
        throw failed("embeddings response: non-numeric value");
      v[i] = x;
    }
    out[index] = v;
  }
  return out as Float32Array[];
}

/** An embedder over an OpenAI-compatible `/embeddings` endpoint. */
export function openAIEmbedder(o: OpenAIEmbedderOptions): Embedder {
  let url: URL;
  try {
    url = new URL(`${o.baseUrl.replace(/\/+$/, "")}/embeddings`);
  } catch (err) {
    throw new ContextError("ERR_CONTEXT_CONFIG_INVALID", "embedder baseUrl is not a URL", { cause: err });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ContextError("ERR_CONTEXT_CONFIG_INVALID", "embedder baseUrl must be http(s)");
  const doFetch = o.fetch ?? fetch;
  const maxBytes = o.maxResponseBytes ?? 8 * 1024 * 1024;
  return {
    id: `openai:${o.model}`,
    async embed(texts) {
      if (texts.length === 0) return [];
      let res: Response;
      try {
        res = await doFetch(url, {
          method: "POST",
          redirect: "error",
          headers: {
            "content-type": "application/json",
            ...(o.apiKey !== undefined ? { authorization: `Bearer ${o.apiKey}` } : {}),
          },
          body: JSON.stringify({ model: o.model, input: texts, encoding_format: "float" }),
          signal: AbortSignal.timeout(o.timeoutMs ?? 5000),
        });
      } catch (err) {
        throw failed("embeddings endpoint unreachable", err);
      }
      if (!res.ok) throw failed(`embeddings endpoint answered ${res.status}`);
      const declared = Number(res.headers.get("content-length") ?? "0");
      if (declared > maxBytes) throw failed("embeddings response too large");
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        throw failed("embeddings response unreadable", err);
      }
      if (text.length > maxBytes) throw failed("embeddings response too large");
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (err) {
        throw failed("embeddings response is not JSON", err);
      }
      return parseEmbeddingsResponse(body, texts.length);
    },
  };
}

/** The part of `@huggingface/transformers` the ONNX adapter uses. */
interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  pipeline(
    task: "feature-extraction",
    model: string,
    options: { local_files_only: boolean },
  ): Promise<
    (texts: string[], o: { pooling: "mean"; normalize: boolean }) => Promise<{ tolist(): number[][] }>
  >;
}

export interface OnnxEmbedderOptions {
  /** Directory holding the model (config.json, tokenizer and onnx/model.onnx), provided by the operator. */
  modelDir: string;
  /** How to load the package (tests); default `import("@huggingface/transformers")`. */
  load?: () => Promise<unknown>;
}

const TRANSFORMERS = "@huggingface/transformers";

/**
 * An embedder over a local ONNX feature-extraction model (mean pooling, normalised).
 * The package is an optional peer dependency loaded on first use: when it is absent,
 * `embed` rejects with ERR_CONTEXT_EMBEDDER_UNAVAILABLE. Remote models are disabled.
 */
export function onnxEmbedder(o: OnnxEmbedderOptions): Embedder {
  const load = o.load ?? (() => import(TRANSFORMERS));
  let extractor: ReturnType<TransformersModule["pipeline"]> | undefined;
  const get = () => {
    extractor ??= (async () => {
      let mod: TransformersModule;
      try {
        mod = (await load()) as TransformersModule;
      } catch (err) {
        throw new ContextError(
          "ERR_CONTEXT_EMBEDDER_UNAVAILABLE",
          `the onnx embedder needs the optional package ${TRANSFORMERS} (npm install ${TRANSFORMERS})`,
          { cause: err },
        );
      }
      mod.env.allowRemoteModels = false;
      mod.env.allowLocalModels = true;
      mod.env.localModelPath = `${o.modelDir.replace(/[/\\][^/\\]*$/, "")}/`;
      try {
        return await mod.pipeline("feature-extraction", basename(o.modelDir), { local_files_only: true });
      } catch (err) {
        throw new ContextError(
          "ERR_CONTEXT_EMBEDDER_UNAVAILABLE",
          "the onnx model directory could not be loaded",
          {
            cause: err,
          },
        );
      }
    })();
    // A failed load is tried again on the next call (the operator may fix the directory).
    extractor.catch(() => {
      extractor = undefined;
    });
    return extractor;
  };
  return {
    id: `onnx:${basename(o.modelDir)}`,
    async embed(texts) {
      if (texts.length === 0) return [];
      const run = await get();
      let rows: number[][];
      try {
        rows = (await run([...texts], { pooling: "mean", normalize: true })).tolist();
      } catch (err) {
        throw failed("the onnx model failed", err);
      }
      return parseEmbeddingsResponse(
        { data: rows.map((embedding, index) => ({ index, embedding })) },
        texts.length,
      );
    },
  };
}
