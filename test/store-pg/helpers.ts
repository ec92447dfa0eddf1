// One PostgreSQL server per test file (test/helpers/postgres.ts), with a fresh database
// per use: `freshDatabase` creates it and returns its URL.
import { randomBytes } from "node:crypto";
import pg from "pg";

/** Creates an empty database on the server of `url` and returns its connection string. */
export async function freshDatabase(url: string): Promise<string> {
  const name = `w_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export function poolOf(url: string, max = 8): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on("error", () => undefined);
  return pool;
}
