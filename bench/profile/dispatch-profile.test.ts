/**
 * Where a dispatch loop's time goes, in process: the bench's campaign (10,000 groups, 100 per loop, zero
 * pacing, 0 ms simulator) run by the in-process runner, with every SQL statement drizzle runs timed by
 * its text. Not part of `npm test`: `npx vitest run --config bench/profile/vitest.config.ts`
 * (DATABASE_URL=… for PostgreSQL). Prints statements per loop and milliseconds per loop, by statement.
 */
import { PgPreparedQuery } from "drizzle-orm/pg-core";
import { expect, it } from "vitest";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { getServices } from "../../server/services";
import { newTenant } from "../../test/helpers";
import { startTestServer } from "../../test/http-server";
import { sql } from "drizzle-orm";
import { getDb } from "../../db/client";
import { claimDeliveries, deliveryOutlook } from "../../server/dispatch/claim-deliveries";

/** PROFILE_EXPLAIN=1: EXPLAIN ANALYZE of the claim and the outlook on a fresh 10k campaign (nothing runs it). */
async function explain(api: Awaited<ReturnType<typeof newTenant>>, segment: string) {
  const created = await api("POST", "/api/external/create-campaign/message", { name: "Perfil", id_segment: segment, message: "Olá!" });
  const id = created.json.id_campaign as string;
  const db = await getDb();
  const until = new Date(Date.now() + 60_000);
  await db.execute(sql`update campaigns set lease_until = ${until.toISOString()}::timestamptz where id = ${id}`);
  const origExecute = db.execute.bind(db);
  for (const [name, run] of [
    ["claim", () => claimDeliveries(db, id, 100, new Date(), { until })],
    ["outlook", () => deliveryOutlook(db, id, new Date())],
  ] as const) {
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await run();
      console.log(`${name} ${i}: ${(performance.now() - t0).toFixed(2)} ms`);
    }
  }
  void origExecute;
  const q = String(process.env.PROFILE_EXPLAIN);
  if (q.length > 5) {
    const res = (await db.execute(sql.raw(`explain (analyze, buffers) ${q.replaceAll("$ID", id).replaceAll("$UNTIL", until.toISOString())}`))) as unknown as {
      rows?: unknown[];
    } & unknown[];
    const rows = (res.rows ?? res) as Record<string, string>[];
    console.log(rows.map((r) => Object.values(r)[0]).join("\n"));
  }
}

const GROUPS = Number(process.env.PROFILE_GROUPS ?? 10_000);
const PER_LOOP = 100;

type Stat = { n: number; ms: number };
const stats = new Map<string, Stat>();
let counting = false;

function instrument(proto: { execute: (...a: unknown[]) => Promise<unknown>; queryString?: string }) {
  const original = proto.execute;
  proto.execute = async function (this: { queryString: string }, ...args: unknown[]) {
    if (!counting) return original.apply(this, args);
    const t0 = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      const key = this.queryString.replace(/\s+/g, " ").slice(0, 150);
      const s = stats.get(key) ?? { n: 0, ms: 0 };
      s.n++;
      s.ms += performance.now() - t0;
      stats.set(key, s);
    }
  };
}

it("profiles one campaign's dispatch", async () => {
  const mod = process.env.DATABASE_URL ? await import("drizzle-orm/postgres-js/session") : await import("drizzle-orm/pglite/session");
  const Prepared = (("PostgresJsPreparedQuery" in mod ? mod.PostgresJsPreparedQuery : (mod as { PglitePreparedQuery: unknown }).PglitePreparedQuery) ??
    PgPreparedQuery) as unknown as { prototype: { execute: (...a: unknown[]) => Promise<unknown> } };
  instrument(Prepared.prototype);
  const server = await startTestServer();
  const api = await newTenant(server.url);
  await api("PATCH", "/api/external/edit-settings", {
    dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: PER_LOOP, min_campaign_interval: 0, max_campaign_interval: 0 },
  });
  const { json: ch } = await api("POST", "/api/external/create-channel", { name: "Canal" });
  const groups = (await api("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups.slice(0, GROUPS).map((g: { id_group: string }) => g.id_group);
  expect(groups.length).toBe(GROUPS);
  const { json: seg } = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [ch.id_channel], groups });
  await api("POST", "/api/simulator/latency", { ms: 0 });
  if (process.env.PROFILE_EXPLAIN) return explain(api, seg.id_segment);
  const runner = new InProcessRunner(await getServices()).start();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  counting = true;
  const created = await api("POST", "/api/external/create-campaign/message", { name: "Perfil", id_segment: seg.id_segment, message: "Olá!" });
  expect(created.status).toBe(201);
  const id = created.json.id_campaign;
  let info: { status: string; groups: { sent: number } } = { status: "pending", groups: { sent: 0 } };
  // The polls' statements are counted too (about 3 per poll, 10 polls a second): they are listed apart.
  while (!["completed", "failed", "canceled"].includes(info.status)) {
    await new Promise((r) => setTimeout(r, 100));
    info = (await api("GET", `/api/external/info-campaign/${id}`)).json;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  counting = false;
  await runner.stop?.();
  const loops = GROUPS / PER_LOOP;
  const rows = [...stats.entries()].sort((a, b) => b[1].ms - a[1].ms);
  const totalMs = rows.reduce((s, [, v]) => s + v.ms, 0);
  const totalN = rows.reduce((s, [, v]) => s + v.n, 0);
  const out = [
    `${process.env.DATABASE_URL ? "postgres" : "pglite"}: ${info.groups.sent} sent in ${seconds.toFixed(2)} s = ${(info.groups.sent / seconds).toFixed(0)} sends/s; ${((seconds * 1000) / loops).toFixed(2)} ms per loop`,
    `this process's CPU per loop ${((cpu.user + cpu.system) / 1000 / loops).toFixed(2)} ms (PGlite: the database's work included)`,
    `statements per loop ${(totalN / loops).toFixed(1)}, SQL ms per loop ${(totalMs / loops).toFixed(2)}`,
    ...rows.map(
      ([k, v]) =>
        `${(v.n / loops).toFixed(2).padStart(6)}/loop ${(v.ms / loops).toFixed(3).padStart(7)} ms/loop ${(v.ms / v.n).toFixed(3).padStart(7)} ms each  ${k}`,
    ),
  ];
  console.log(out.join("\n"));
  await server.close();
}, 600_000);
