/**
 * Two production servers (.next/serve.cjs, each with the embedded runners) on one PostgreSQL database,
 * on two ports, driven through REST:
 *  - tenant A: a 2,000-group campaign at zero pacing; tenant B: a campaign paced at 1–2 s, one message
 *    per loop. At the end the simulator's log holds exactly one message per group, no server logged a
 *    repeated delivery key (the simulator's dedupe would hide a double send from its log), B's gaps are
 *    never shorter than its min_dispatch_rate (two runners must not double its speed), and every
 *    webhook (webhook-id) reached the receiver once.
 *  - mid-campaign, the process holding A's campaign is killed with SIGKILL; the other takes it over and
 *    sends again within 10 s (the campaign lease: 8 s, renewed while a step runs).
 * Which process holds A's campaign: one server is stopped (SIGSTOP) for a second; if A's `sent` still
 * moves, the other one holds it and is killed (while the first is still stopped, so that it cannot
 * take the campaign meanwhile), else the stopped one is; the kill waits for a moment when A's lease is
 * taken (mid-step), and the test checks that the dead process held it.
 *
 * PostgreSQL only (DATABASE_URL): PGlite is one process per data directory. The throughput of one
 * process against two is measured by `npm run bench -- two-processes`, not asserted here.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Groups } from "./crash-common";
import { assert, type E2EContext, type E2ETest } from "./harness";
import {
  apiClient,
  createDatabase,
  createTenant,
  freePort,
  killServer,
  startServer,
  stopServer,
  tail,
  tempDataDir,
  withDatabase,
  type Api,
  type ServerProcess,
} from "./server-process";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BIG = 2000;
const PACED = 8;
const PACED_MIN_S = 1;
const TAKEOVER_LIMIT_MS = 10_000;

/** A webhook receiver on 127.0.0.1: counts each webhook-id and keeps each campaign_status body. */
async function webhookReceiver() {
  const seen = new Map<string, number>();
  const statuses: { id_campaign?: string; status?: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const id = String(req.headers["webhook-id"]);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { type?: string; data?: { id_campaign?: string; status?: string } };
        if (body.type === "campaign_status" && body.data) statuses.push(body.data);
      } catch {
        // not JSON: counted all the same
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    seen,
    statuses,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function tenantWith(api: Api, groups: number, rates: Record<string, number>, hook: string) {
  const channel = await api.post("/api/external/create-channel", { name: "Canal" });
  assert(channel.status === "connected", `the channel should pair at once, got ${String(channel.status)}`);
  const listed = await api.get(`/api/external/list-groups/${channel.id_channel as string}`);
  const ids = (listed.groups as { id_group: string }[]).slice(0, groups).map((g) => g.id_group);
  assert(ids.length === groups, `expected ${groups} groups, got ${ids.length}`);
  const segment = await api.post("/api/external/create-segment", { name: `Seg ${groups}`, id_channel: [channel.id_channel], groups: ids });
  await api.patch("/api/external/edit-settings", { dispatch_rates: { min_campaign_interval: 0, max_campaign_interval: 0, ...rates } });
  await api.patch("/api/external/edit-webhooks", { campaign_status_url: hook, campaign_progress_url: hook });
  return { segment: segment.id_segment as string, groups: ids };
}

async function twoProcesses(ctx: E2EContext) {
  const { log } = ctx;
  if (!process.env.DATABASE_URL) {
    log("skipped: PGlite is one process per data directory; set DATABASE_URL to a PostgreSQL database to run two servers on it");
    return;
  }
  const data = tempDataDir("gcs-two-");
  const database = await createDatabase(process.env.DATABASE_URL, "gcs_two");
  const receiver = await webhookReceiver();
  const { default: postgres } = await import("postgres");
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  const servers: ServerProcess[] = [];
  const logFiles = ["a", "b"].map((n) => path.join(ctx.artifactsDir, `two-processes-server-${n}.log`));
  try {
    log(`PostgreSQL: fresh database ${database.name}; webhook receiver ${receiver.url}`);
    const target = { dataDir: data.dir, databaseUrl: database.url };
    const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const a = await createTenant({ ...target, name: "Two A", email: `two-a-${unique}@example.com`, password: "senha-segura-two-123" });
    const b = await createTenant({ ...target, name: "Two B", email: `two-b-${unique}@example.com`, password: "senha-segura-two-123" });
    // One after the other: the first creates the secrets in the shared DATA_DIR, the second reads them.
    for (const logFile of logFiles) {
      servers.push(
        await startServer({
          port: await freePort(),
          ...target,
          logFile,
          log,
          env: {
            SIMULATOR_GROUPS_PER_CHANNEL: String(BIG),
            SEGMENT_GROUP_LIMIT: "50000",
            RATE_LIMIT_API_KEY_PER_MINUTE: "1000000",
            WEBHOOK_ALLOW_PRIVATE: "1",
          },
        }),
      );
    }
    // A through the first server, B through the second: both serve the same database.
    const apiA = apiClient(() => servers[0].url, a.api_key);
    const apiB = apiClient(() => servers[1].url, b.api_key);
    // A: zero pacing, 100 per loop, 5 ms per message at the simulator (a loop ~0.5 s, most of it held:
    // long enough to kill mid-step and see the takeover). B: 1–2 s between loops of one message.
    const setA = await tenantWith(apiA, BIG, { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 100 }, receiver.url);
    await apiA.post("/api/simulator/latency", { ms: 5 });
    const setB = await tenantWith(apiB, PACED, { min_dispatch_rate: PACED_MIN_S, max_dispatch_rate: 2, dispatches_per_loop: 1 }, receiver.url);
    await apiB.post("/api/simulator/latency", { ms: 0 });

    const t0 = Date.now();
    const big = (await apiA.post("/api/external/create-campaign/message", { name: "Big", id_segment: setA.segment, message: "Para todos" }))
      .id_campaign as string;
    const paced = (await apiB.post("/api/external/create-campaign/message", { name: "Paced", id_segment: setB.segment, message: "Devagar" }))
      .id_campaign as string;
    log(`campaigns: ${big} (${BIG} groups, tenant A), ${paced} (${PACED} groups paced ${PACED_MIN_S}–2 s, tenant B)`);

    const survivorApi = (i: number) => apiClient(() => servers[i].url, a.api_key);
    const infoA = async (api: Api) => {
      const r = await api.get(`/api/external/info-campaign/${big}`);
      return { status: r.status as string, groups: r.groups as Groups };
    };

    // Wait until A is well under way (a quarter sent).
    for (let seen = await infoA(apiA); seen.groups.sent < BIG / 4; seen = await infoA(apiA)) {
      assert(Date.now() - t0 < 90_000, `A's campaign stalled before the kill: ${JSON.stringify(seen)}`);
      await sleep(100);
    }
    // Which process holds A's campaign: stop the first for a second and watch `sent`. Then kill the
    // holder while it is mid-step (A's lease taken and not yet let go), the other still stopped if it
    // is the one running, so that it cannot take the campaign meanwhile.
    const other = survivorApi(1);
    const leased = async () => {
      const [row] = await sql<{ held: boolean }[]>`select lease_until > now() as held from campaigns where id = ${big}`;
      return row.held === true;
    };
    const before = (await infoA(other)).groups.sent;
    process.kill(-servers[0].pid, "SIGSTOP");
    let victim = 0;
    let heldAtKill = false;
    try {
      await sleep(1000);
      const after = (await infoA(other)).groups.sent;
      victim = after > before ? 1 : 0;
      log(`server ${servers[0].pid} stopped for 1 s: A's sent went ${before} → ${after}, so server ${victim === 0 ? "one" : "two"} holds it`);
      for (let i = 0; i < 200 && !(await leased()); i++) await sleep(5);
      await killServer(servers[victim]);
      heldAtKill = await leased();
    } finally {
      // (Gone already when it was the one killed.)
      if (servers[0].child.exitCode === null && servers[0].child.signalCode === null) process.kill(-servers[0].pid, "SIGCONT");
    }
    const killedAt = Date.now();
    const survivor = 1 - victim;
    const api = survivorApi(survivor);
    const atKill = await infoA(api);
    log(`SIGKILL server pid ${servers[victim].pid} at ${atKill.groups.sent}/${BIG} sent (${atKill.status}), A's campaign leased by it: ${heldAtKill}`);
    assert(atKill.status === "sending" && atKill.groups.sent < BIG, `the kill did not land mid-campaign: ${JSON.stringify(atKill)}`);
    assert(heldAtKill, "the killed server was between two steps of A's campaign: no takeover to see");

    // Takeover: the next send of A's campaign, through the survivor.
    let resumedAfter = -1;
    while (Date.now() - killedAt < 70_000) {
      const now = await infoA(api);
      if (now.groups.sent > atKill.groups.sent) {
        resumedAfter = Date.now() - killedAt;
        break;
      }
      await sleep(50);
    }
    log(`takeover: A's campaign sent again ${resumedAfter < 0 ? "never (70 s)" : `${resumedAfter} ms`} after the kill`);
    assert(
      resumedAfter >= 0 && resumedAfter < TAKEOVER_LIMIT_MS,
      `the survivor took A's campaign over after ${resumedAfter} ms (limit ${TAKEOVER_LIMIT_MS} ms)`,
    );

    // Both finish on the survivor.
    const bApi = apiClient(() => servers[survivor].url, b.api_key);
    for (const [client, id] of [
      [api, big],
      [bApi, paced],
    ] as const) {
      for (;;) {
        const r = await client.get(`/api/external/info-campaign/${id}`);
        if (r.status === "completed" || r.status === "failed" || r.status === "canceled") {
          log(`${id}: ${String(r.status)} ${JSON.stringify(r.groups)} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
          assert(r.status === "completed", `${id} ended ${String(r.status)}`);
          break;
        }
        assert(Date.now() - t0 < 160_000, `${id} not finished: ${JSON.stringify(r)}`);
        await sleep(200);
      }
    }

    // Exactly one message per group.
    for (const [client, id, groups] of [
      [api, big, setA.groups],
      [bApi, paced, setB.groups],
    ] as const) {
      const messages = (await client.get(`/api/simulator/messages?id_campaign=${id}`)).messages as { id_group: string; sent_at: string }[];
      const distinct = new Set(messages.map((m) => m.id_group));
      log(`${id}: ${messages.length} messages in the simulator's log, ${distinct.size} distinct groups`);
      assert(messages.length === groups.length && distinct.size === groups.length, `${id}: expected ${groups.length} messages, one per group`);
      assert(
        groups.every((g) => distinct.has(g)),
        `${id}: a group got no message`,
      );
      if (id === paced) {
        const at = messages.map((m) => Date.parse(m.sent_at)).sort((x, y) => x - y);
        const gaps = at.slice(1).map((t, i) => t - at[i]);
        log(`${id}: gaps ${gaps.join(", ")} ms (min_dispatch_rate ${PACED_MIN_S * 1000} ms)`);
        assert(
          gaps.every((g) => g >= PACED_MIN_S * 1000),
          `${id}: a gap shorter than min_dispatch_rate: ${gaps.join(", ")}`,
        );
      }
    }
    const repeated = logFiles.flatMap((f) => tail(f, 100_000).split("\n")).filter((l) => l.includes("[simulator] repeated send"));
    log(`repeated delivery keys logged by the two servers: ${repeated.length}`);
    assert(repeated.length === 0, `a delivery key was sent twice:\n${repeated.slice(0, 5).join("\n")}`);

    // Webhooks: each event once (the survivor delivers what is left; a delivery the dead process had in
    // flight waits for its lease and would arrive twice only if it had already been received).
    const done = () => receiver.statuses.filter((s) => s.status === "completed").map((s) => s.id_campaign);
    const webhookDeadline = Date.now() + 20_000;
    while (!(done().includes(big) && done().includes(paced)) && Date.now() < webhookDeadline) await sleep(200);
    await sleep(2000);
    const duplicates = [...receiver.seen].filter(([, n]) => n > 1);
    log(`webhooks: ${receiver.seen.size} distinct webhook-ids received, ${duplicates.length} received more than once`);
    assert(done().includes(big) && done().includes(paced), `campaign_status completed not received for both: ${JSON.stringify(done())}`);
    assert(duplicates.length === 0, `webhook-ids received more than once: ${JSON.stringify(duplicates.slice(0, 5))}`);

    await withDatabase(target, async (q) => {
      const rows = await q(`select campaign_id, state, count(*)::int as n from deliveries where campaign_id in ($1, $2) group by 1, 2 order by 1, 2`, [
        big,
        paced,
      ]);
      assert(
        rows.every((r) => r.state === "sent"),
        `every delivery should be sent: ${JSON.stringify(rows)}`,
      );
    });
  } catch (err) {
    for (const f of logFiles) console.error(`[two-processes] last lines of ${f}:\n${tail(f, 15)}`);
    throw err;
  } finally {
    await sql.end({ timeout: 5 });
    for (const s of servers) await stopServer(s).catch(() => {});
    await receiver.close();
    await database.drop().catch((err: Error) => console.error(`[two-processes] could not drop ${database.name}: ${err.message}`));
    data.remove();
  }
}

export const tests: E2ETest[] = [
  {
    name: "two servers on one PostgreSQL: one message per group, pacing kept, webhooks once, takeover of a killed one's campaign < 10 s",
    run: (ctx) => twoProcesses(ctx),
  },
];
