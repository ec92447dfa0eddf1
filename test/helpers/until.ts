/**
 * Polls `fn` until it returns a value (not undefined), up to `ms` of wall time; a bound on a
 * wait, never an assertion on how long something took.
 */
export async function until<T>(fn: () => Promise<T | undefined> | T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
