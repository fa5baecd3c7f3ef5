import { and, eq, ne } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { campaigns, deliveries } from "../../db/schema";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { getServices } from "../../server/services";
import { newTenant, until, type Api, zeroPacing } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { baseDatabaseUrl } from "../postgres-databases";

// Fault: the service's database sessions are terminated (pg_terminate_backend) again and again while a
// 300-group campaign runs at zero pacing through the embedded runner. The `postgres` driver opens a new
// connection for the next query; whatever statement was in flight fails. The campaign must still end
// with exactly one message per group and counters equal to the simulator's log.
const onPostgres = Boolean(baseDatabaseUrl());
if (!onPostgres) console.log("[faults] db-connection: skipped on PGlite (pg_terminate_backend needs PostgreSQL: set DATABASE_URL)");

const groupsPerChannel = 20;
const channelsNeeded = 15; // 300 groups

let server: TestServer;
let runner: InProcessRunner;
let api: Api;
let admin: postgres.Sql;

beforeAll(async () => {
  if (!onPostgres) return;
  process.env.SIMULATOR_GROUPS_PER_CHANNEL = String(groupsPerChannel);
  server = await startTestServer();
  runner = new InProcessRunner(await getServices(), { maxSleepMs: 50 }).start();
  api = await newTenant(server.url, { channelLimit: 50 });
  expect((await api("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
  // A connection of the test's own: pg_backend_pid() leaves it out of the kill.
  admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  if (!onPostgres) return;
  await runner.stop();
  await server.close();
  await admin.end({ timeout: 5 });
});

/** Terminates every session on this test file's database but the caller's; returns how many. */
async function killServiceSessions() {
  const rows = await admin`select pg_terminate_backend(pid) as killed from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid()`;
  return rows.filter((r) => r.killed).length;
}

describe("fault: the database connection killed mid-campaign", () => {
  it.skipIf(!onPostgres)(
    "the service reconnects, the campaign completes, exactly one message per group, counters = the platform's log",
    async () => {
      const groups: string[] = [];
      const channelIds: string[] = [];
      for (let i = 0; i < channelsNeeded; i++) {
        const { json: ch } = await api("POST", "/api/external/create-channel", { name: `Canal ${i}` });
        const list = await api("GET", `/api/external/list-groups/${ch.id_channel}`);
        groups.push(...list.json.groups.map((g: { id_group: string }) => g.id_group));
        channelIds.push(ch.id_channel);
      }
      expect(groups).toHaveLength(300);
      const { json: seg } = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: channelIds, groups });
      expect(seg.total_groups).toBe(300);
      // A few ms per message, so the campaign lasts long enough for several kills to land mid-dispatch.
      expect((await api("POST", "/api/simulator/latency", { ms: 4 })).status).toBe(200);

      const created = await api("POST", "/api/external/create-campaign/message", { name: "Queda", id_segment: seg.id_segment, message: "Olá!" });
      expect(created.status).toBe(201);
      const id = created.json.id_campaign as string;
      // A request whose own query was on a killed session answers 500; the next one goes through.
      const info = async () => {
        for (;;) {
          const r = await api("GET", `/api/external/info-campaign/${id}`);
          if (r.status === 200) return r;
        }
      };

      // Kill every 200 ms while it sends, at most 8 times (the first once sending has started).
      await until(info, (r) => r.json.groups.sent > 0, 20_000);
      let kills = 0;
      let killed = 0;
      const sentAtKill: number[] = [];
      for (;;) {
        const r = await info();
        if (["completed", "failed", "canceled"].includes(r.json.status)) break;
        sentAtKill.push(r.json.groups.sent);
        killed += await killServiceSessions();
        kills++;
        if (kills >= 8) break;
        await new Promise((res) => setTimeout(res, 200));
      }
      console.log(`[faults] db-connection: ${kills} kills, ${killed} sessions terminated, sent at each kill: ${sentAtKill.join(",")}`);
      expect(kills).toBeGreaterThanOrEqual(3);
      expect(sentAtKill.some((n) => n < 300)).toBe(true);

      const killsEnded = Date.now();
      const done = await until(info, (r) => ["completed", "failed", "canceled"].includes(r.json.status), 40_000);
      console.log(`[faults] db-connection: completed ${Date.now() - killsEnded} ms after the last kill`);
      expect(done.json).toMatchObject({ status: "completed", groups: { total: 300, sent: 300, pending: 0, failed: 0 } });

      const log = (await api("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages as { id_group: string }[];
      const perGroup = new Map<string, number>();
      for (const m of log) perGroup.set(m.id_group, (perGroup.get(m.id_group) ?? 0) + 1);
      expect(log).toHaveLength(300);
      expect([...perGroup.values()].every((n) => n === 1)).toBe(true);
      expect([...perGroup.keys()].sort()).toEqual([...groups].sort());
      expect(done.json.groups.sent).toBe(log.length);
      // The counters per channel, moved by the retried sent marks, equal the log per channel (each channel reaches its 20).
      const logged = log as { id_group: string; id_channel: string }[];
      expect(done.json.channels).toEqual(
        channelIds.map((c: string) => ({ id_channel: c, sent: logged.filter((m) => m.id_channel === c).length, pending: 0, failed: 0 })),
      );

      // Nothing half-done: no delivery left in flight, no lease held, no session idle inside a transaction.
      const db = await getDb();
      expect(
        await db
          .select()
          .from(deliveries)
          .where(and(eq(deliveries.campaignId, id), ne(deliveries.state, "sent"))),
      ).toEqual([]);
      const [c] = await db.select().from(campaigns).where(eq(campaigns.id, id));
      expect(c.leaseUntil).toBeNull();
      const idleInTx = await admin`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'`;
      expect(idleInTx[0].n).toBe(0);

      // The runner survived: a new campaign after the faults goes out as usual.
      const small = await api("POST", "/api/external/create-segment", { name: "Depois", id_channel: channelIds.slice(0, 1), groups: groups.slice(0, 10) });
      const again = await api("POST", "/api/external/create-campaign/message", { name: "Depois", id_segment: small.json.id_segment, message: "De novo" });
      const after = await until(
        () => api("GET", `/api/external/info-campaign/${again.json.id_campaign}`),
        (r) => r.json.status === "completed",
        15_000,
      );
      expect(after.json.groups.sent).toBe(10);
    },
    60_000,
  );
});
