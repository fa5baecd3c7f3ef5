import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { openDatabase, type Database } from "../../db/client";
import { baseDatabaseUrl } from "../postgres-databases";

// Fault: a new database session dies right after it is established, before its first statement answers
// (what pg_terminate_backend or a restarting server does to a connection the pool just opened). The
// `postgres` driver, left to its default, sends a query of its own at that moment (the array types,
// `fetch_types`) without awaiting it: the drop became an unhandled rejection, which ends a Node process.
// A proxy between the service and PostgreSQL closes each of the first connections at its first message
// after the startup packet. The caller's query may fail; nothing may reject unhandled, and the next
// query goes through on a new session.
const onPostgres = Boolean(baseDatabaseUrl());
if (!onPostgres) console.log("[faults] db-connect-drop: skipped on PGlite (needs PostgreSQL: set DATABASE_URL)");

/** A TCP proxy to PostgreSQL that drops the first `drops` connections at their first message after startup. */
function dropProxy(target: URL, drops: number) {
  let dropped = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    const drop = dropped < drops;
    let startupSeen = false;
    let pending = Buffer.alloc(0);
    client.on("data", (chunk) => {
      if (!drop) return void upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      if (!startupSeen) {
        // The startup packet: an int32 length (itself included), no type byte.
        if (pending.length < 4 || pending.length < pending.readInt32BE(0)) return;
        const len = pending.readInt32BE(0);
        upstream.write(pending.subarray(0, len));
        pending = pending.subarray(len);
        startupSeen = true;
      }
      if (pending.length > 0) {
        // A reset, not a clean close: what a terminated backend's socket often gives the client.
        dropped++;
        client.resetAndDestroy();
        upstream.destroy();
      }
    });
    upstream.on("data", (chunk) => client.write(chunk));
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  return {
    listen: () => new Promise<number>((res) => server.listen(0, "127.0.0.1", () => res((server.address() as net.AddressInfo).port))),
    dropped: () => dropped,
    close: () => new Promise<void>((res) => server.close(() => res())),
  };
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
let proxy: ReturnType<typeof dropProxy>;
let database: Database;

beforeAll(async () => {
  if (!onPostgres) return;
  process.on("unhandledRejection", onUnhandled);
  const target = new URL(process.env.DATABASE_URL!);
  proxy = dropProxy(target, 3);
  const port = await proxy.listen();
  const via = new URL(target);
  via.hostname = "127.0.0.1";
  via.port = String(port);
  database = await openDatabase({ url: via.toString(), migrate: false });
});
afterAll(async () => {
  if (!onPostgres) return;
  process.off("unhandledRejection", onUnhandled);
  await database.close();
  await proxy.close();
});

describe("fault: a database session dropped as it opens", () => {
  it.skipIf(!onPostgres)("no unhandled rejection; the caller's query fails or goes through, the next one goes through", async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      try {
        const rows = await database.db.execute(sql`select 41 + 1 as n`);
        outcomes.push(`ok ${(rows as unknown as { n: number }[])[0]?.n ?? JSON.stringify(rows)}`);
      } catch (err) {
        outcomes.push(`failed ${(err as { code?: string }).code ?? (err as Error).message}`);
      }
    }
    // Let any rejection nobody awaits surface (Node reports them after the microtask queue drains).
    await new Promise((res) => setTimeout(res, 200));
    console.log(`[faults] db-connect-drop: ${proxy.dropped()} sessions dropped; outcomes: ${outcomes.join(", ")}`);
    expect(proxy.dropped()).toBe(3);
    expect(unhandled.map(String)).toEqual([]);
    expect(outcomes.at(-1)).toBe("ok 42");
  });
});
