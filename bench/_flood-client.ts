// Child process for bench/flood.ts: the hostile principal. Runs `concurrency` loops per
// request kind for `seconds`, each sending its request again as soon as the last answer
// arrived (a closed-loop flood, as fast as the server answers), and prints the count of
// answers by status. argv: one JSON object {seconds, kinds: [{url, headers, body, concurrency}]};
// `"id":0` in a body is replaced by a fresh JSON-RPC id per request.
interface Kind {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  concurrency: number;
}

const spec = JSON.parse(process.argv[2] ?? "{}") as { seconds: number; kinds: Kind[] };
const end = Date.now() + spec.seconds * 1000;
const counts: Record<string, Record<string, number>> = {};
let nextId = 1000;

async function loop(k: Kind): Promise<void> {
  const mine: Record<string, number> = counts[k.name] ?? {};
  counts[k.name] = mine;
  while (Date.now() < end) {
    let key: string;
    try {
      const body = k.body.replace('"id":0', `"id":${nextId++}`);
      const r = await fetch(k.url, {
        method: "POST",
        headers: k.headers,
        body,
        signal: AbortSignal.timeout(30_000),
      });
      await r.arrayBuffer();
      key = String(r.status);
    } catch {
      key = "error";
    }
    mine[key] = (mine[key] ?? 0) + 1;
  }
}

await Promise.all(spec.kinds.flatMap((k) => Array.from({ length: k.concurrency }, () => loop(k))));
process.stdout.write(`${JSON.stringify(counts)}\n`);
