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
 * Two numbers, one banned (CONTRACT §7): one tenant, 200 groups each reached by two of its numbers, zero
 * pacing. A fifth sent, the simulator bans number B (through the second server), then the process holding the
 * campaign is killed as above. The survivor takes the campaign over and fails B's groups over to A: every
 * group gets exactly one message, no repeated delivery key, none through B after its ban (the service's
 * `health.since`; the log gives id_channel and the time), info-campaign's `channels` equal the log per
 * channel, every webhook arrives once and B's `channel_status` with `health.state` banned exactly once.
 *
 * PostgreSQL only (DATABASE_URL): PGlite is one process per data directory. The throughput of one
 * process against two is measured by `npm run bench -- two-processes`, not asserted here.
 */
import path from "node:path";
import {
  banNumber,
  bannedSince,
  expectAllSent,
  expectBanKept,
  expectOncePerGroup,
  finished,
  infoCampaign,
  killCampaignHolder,
  sentReaches,
  twoNumbersOnSameGroups,
  webhookReceiver,
  zeroPacing,
} from "./crash-common";
import { assert, eventually, type E2EContext, type E2ETest } from "./harness";
import { apiClient, createDatabase, createTenant, freePort, startServer, stopServer, tail, tempDataDir, type Api, type ServerProcess } from "./server-process";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BIG = 2000;
const PACED = 8;
const PACED_MIN_S = 1;
const TAKEOVER_LIMIT_MS = 10_000;

/**
 * Two production servers on the same database (and DATA_DIR), the simulator giving each channel `groups`
 * groups. One after the other: the first creates the secrets in the shared DATA_DIR, the second reads them.
 */
async function startTwo(target: { dataDir: string; databaseUrl: string }, logFiles: string[], groups: number, log: (line: string) => void) {
  const servers: ServerProcess[] = [];
  for (const logFile of logFiles) {
    servers.push(
      await startServer({
        port: await freePort(),
        ...target,
        logFile,
        log,
        env: {
          SIMULATOR_GROUPS_PER_CHANNEL: String(groups),
          SEGMENT_GROUP_LIMIT: "50000",
          RATE_LIMIT_API_KEY_PER_MINUTE: "1000000",
          WEBHOOK_ALLOW_PRIVATE: "1",
        },
      }),
    );
  }
  return servers;
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

interface TwoServers {
  target: { dataDir: string; databaseUrl: string };
  servers: ServerProcess[];
  logFiles: string[];
  receiver: Awaited<ReturnType<typeof webhookReceiver>>;
  /** One API key per tenant asked for. */
  keys: string[];
  /** A client of one tenant (its key) through server `i`. */
  api(i: number, key: string): Api;
  /** Whether some process holds the campaign's lease now. */
  leased(campaignId: string): Promise<boolean>;
}

/**
 * Runs `test` with two servers on a fresh PostgreSQL database (beside DATABASE_URL, dropped at the end), the
 * given tenants (made with the admin CLI) and a webhook receiver.
 */
async function withTwoServers(ctx: E2EContext, opts: { name: string; groups: number; tenants: string[] }, test: (rig: TwoServers) => Promise<void>) {
  const { log } = ctx;
  const { name } = opts;
  if (!process.env.DATABASE_URL) throw new Error("two-processes needs DATABASE_URL (a PostgreSQL database two servers share)");
  const data = tempDataDir(`gcs-${name}-`);
  const database = await createDatabase(process.env.DATABASE_URL, `gcs_${name.replace(/\W/g, "_")}`);
  const receiver = await webhookReceiver();
  const { default: postgres } = await import("postgres");
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  const servers: ServerProcess[] = [];
  const logFiles = ["a", "b"].map((n) => path.join(ctx.artifactsDir, `${name}-server-${n}.log`));
  try {
    log(`PostgreSQL: fresh database ${database.name}; webhook receiver ${receiver.url}`);
    const target = { dataDir: data.dir, databaseUrl: database.url };
    const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const keys: string[] = [];
    for (const [i, tenant] of opts.tenants.entries()) {
      keys.push((await createTenant({ ...target, name: tenant, email: `${name}-${i}-${unique}@example.com`, password: "senha-segura-two-123" })).api_key);
    }
    servers.push(...(await startTwo(target, logFiles, opts.groups, log)));
    await test({
      target,
      servers,
      logFiles,
      receiver,
      keys,
      api: (i, key) => apiClient(() => servers[i].url, key),
      async leased(campaignId) {
        const [row] = await sql<{ held: boolean }[]>`select lease_until > now() as held from campaigns where id = ${campaignId}`;
        return row.held === true;
      },
    });
  } catch (err) {
    for (const f of logFiles) console.error(`[${name}] last lines of ${f}:\n${tail(f, 15)}`);
    throw err;
  } finally {
    await sql.end({ timeout: 5 });
    for (const s of servers) await stopServer(s).catch(() => {});
    await receiver.close();
    await database.drop().catch((err: Error) => console.error(`[${name}] could not drop ${database.name}: ${err.message}`));
    data.remove();
  }
}

/**
 * Each webhook reached the receiver once (by webhook-id), once `campaign_status` completed arrived for every
 * campaign of `ids` (and 2 s more for stragglers): the survivor delivers what is left; a delivery the dead
 * process had in flight waits for its lease and would arrive twice only if it had already been received.
 */
async function expectWebhooksOnce(receiver: TwoServers["receiver"], ids: string[], log: (line: string) => void) {
  const deadline = Date.now() + 20_000;
  while (!ids.every((id) => receiver.completed().includes(id)) && Date.now() < deadline) await sleep(200);
  await sleep(2000);
  const duplicates = [...receiver.seen].filter(([, n]) => n > 1);
  log(`webhooks: ${receiver.seen.size} distinct webhook-ids received, ${duplicates.length} received more than once`);
  assert(
    ids.every((id) => receiver.completed().includes(id)),
    `campaign_status completed not received for all of ${ids.join(", ")}: ${JSON.stringify(receiver.completed())}`,
  );
  assert(duplicates.length === 0, `webhook-ids received more than once: ${JSON.stringify(duplicates.slice(0, 5))}`);
}

/**
 * The survivor's first send after the kill (at `killedAt`, `atKill` sent): within TAKEOVER_LIMIT_MS.
 */
async function expectTakeover(api: Api, campaignId: string, killedAt: number, atKill: number, log: (line: string) => void) {
  let resumedAfter = -1;
  while (Date.now() - killedAt < 70_000) {
    if ((await infoCampaign(api, campaignId)).groups.sent > atKill) {
      resumedAfter = Date.now() - killedAt;
      break;
    }
    await sleep(50);
  }
  log(`takeover: ${campaignId} sent again ${resumedAfter < 0 ? "never (70 s)" : `${resumedAfter} ms`} after the kill`);
  assert(
    resumedAfter >= 0 && resumedAfter < TAKEOVER_LIMIT_MS,
    `the survivor took ${campaignId} over after ${resumedAfter} ms (limit ${TAKEOVER_LIMIT_MS} ms)`,
  );
}

/**
 * Kills the process holding `campaignId` mid-step (killCampaignHolder, `sent` read through server two); checks
 * the kill landed mid-campaign of `groups` and the dead process held the campaign. Returns the survivor's index.
 */
async function killHolderOf(rig: TwoServers, key: string, campaignId: string, groups: number, log: (line: string) => void) {
  const { victim, heldAtKill } = await killCampaignHolder(
    rig.servers,
    async () => (await infoCampaign(rig.api(1, key), campaignId)).groups.sent,
    () => rig.leased(campaignId),
    log,
  );
  const killedAt = Date.now();
  const survivor = 1 - victim;
  const atKill = await infoCampaign(rig.api(survivor, key), campaignId);
  log(`SIGKILL server pid ${rig.servers[victim].pid} at ${atKill.groups.sent}/${groups} sent (${atKill.status}), ${campaignId} leased by it: ${heldAtKill}`);
  assert(atKill.status === "sending" && atKill.groups.sent < groups, `the kill did not land mid-campaign: ${JSON.stringify(atKill)}`);
  assert(heldAtKill, `the killed server was between two steps of ${campaignId}: no takeover to see`);
  await expectTakeover(rig.api(survivor, key), campaignId, killedAt, atKill.groups.sent, log);
  return survivor;
}

function twoProcesses(ctx: E2EContext) {
  const { log } = ctx;
  return withTwoServers(ctx, { name: "two-processes", groups: BIG, tenants: ["Two A", "Two B"] }, async (rig) => {
    const [keyA, keyB] = rig.keys;
    // A through the first server, B through the second: both serve the same database.
    const apiA = rig.api(0, keyA);
    const apiB = rig.api(1, keyB);
    // A: zero pacing, 100 per loop, 5 ms per message at the simulator (a loop ~0.5 s, most of it held:
    // long enough to kill mid-step and see the takeover). B: 1–2 s between loops of one message.
    const setA = await tenantWith(apiA, BIG, { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 100 }, rig.receiver.url);
    await apiA.post("/api/simulator/latency", { ms: 5 });
    const setB = await tenantWith(apiB, PACED, { min_dispatch_rate: PACED_MIN_S, max_dispatch_rate: 2, dispatches_per_loop: 1 }, rig.receiver.url);
    await apiB.post("/api/simulator/latency", { ms: 0 });

    const t0 = Date.now();
    const big = (await apiA.post("/api/external/create-campaign/message", { name: "Big", id_segment: setA.segment, message: "Para todos" }))
      .id_campaign as string;
    const paced = (await apiB.post("/api/external/create-campaign/message", { name: "Paced", id_segment: setB.segment, message: "Devagar" }))
      .id_campaign as string;
    log(`campaigns: ${big} (${BIG} groups, tenant A), ${paced} (${PACED} groups paced ${PACED_MIN_S}–2 s, tenant B)`);

    // Wait until A is well under way (a quarter sent). Which process holds A's campaign: stop the first for a
    // second and watch `sent`. Then kill the holder while it is mid-step (A's lease taken and not yet let go).
    await sentReaches(apiA, big, BIG / 4, "the kill");
    const survivor = await killHolderOf(rig, keyA, big, BIG, log);

    // Both finish on the survivor, exactly one message per group.
    const api = rig.api(survivor, keyA);
    const bApi = rig.api(survivor, keyB);
    for (const [client, id, groups] of [
      [api, big, setA.groups],
      [bApi, paced, setB.groups],
    ] as const) {
      const r = await finished(client, id, t0 + 160_000);
      log(`${id}: ${r.status} ${JSON.stringify(r.groups)} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      assert(r.status === "completed", `${id} ended ${r.status}`);
      const messages = await expectOncePerGroup(client, id, groups, rig.logFiles, log);
      if (id === paced) {
        const at = messages.map((m) => Date.parse(m.sent_at)).sort((x, y) => x - y);
        const gaps = at.slice(1).map((t, i) => t - at[i]);
        log(`${id}: gaps ${gaps.join(", ")} ms (min_dispatch_rate ${PACED_MIN_S * 1000} ms)`);
        assert(
          gaps.every((g) => g >= PACED_MIN_S * 1000),
          `${id}: a gap shorter than min_dispatch_rate: ${gaps.join(", ")}`,
        );
      }
      await expectAllSent(rig.target, id, groups.length, log);
    }
    await expectWebhooksOnce(rig.receiver, [big, paced], log);
  });
}

// ───────────────────────────── two numbers, one banned ─────────────────────────────

const BAN_GROUPS = 200;
/** 10 a loop (5 through each number) at 30 ms a message: a loop of ~0.3 s, long enough to kill mid-step. */
const BAN_PER_LOOP = 10;
const BAN_LATENCY_MS = 30;

function twoProcessesBan(ctx: E2EContext) {
  const { log } = ctx;
  return withTwoServers(ctx, { name: "two-processes-ban", groups: BAN_GROUPS, tenants: ["Two ban"] }, async (rig) => {
    const [key] = rig.keys;
    const first = rig.api(0, key);
    const joining = Date.now();
    const { a, b, groupIds, segmentId } = await twoNumbersOnSameGroups(first, BAN_GROUPS);
    log(`${a.id} (A) and ${b.id} (B) both in ${BAN_GROUPS} groups (joined in ${((Date.now() - joining) / 1000).toFixed(1)} s)`);
    await first.patch("/api/external/edit-settings", zeroPacing(BAN_PER_LOOP));
    await first.patch("/api/external/edit-webhooks", { campaign_status_url: rig.receiver.url, channel_status_url: rig.receiver.url });
    await first.post("/api/simulator/latency", { ms: BAN_LATENCY_MS });
    const t0 = Date.now();
    const id = (await first.post("/api/external/create-campaign/message", { name: "Two ban", id_segment: segmentId, message: "Dois números" }))
      .id_campaign as string;
    log(`campaign ${id}: ${BAN_GROUPS} groups, each reached by A and B`);

    // A fifth sent: B banned (through the second server), then the process holding the campaign killed.
    await sentReaches(first, id, BAN_GROUPS / 5, "the ban");
    const answeredAt = await banNumber(rig.api(1, key), b.id);
    log(`B banned at ${answeredAt.toISOString()}`);
    const survivor = await killHolderOf(rig, key, id, BAN_GROUPS, log);
    const api = rig.api(survivor, key);
    const bannedAt = await bannedSince(api, b.id, answeredAt);

    const last = await finished(api, id, t0 + 120_000);
    log(`${id}: ${last.status} ${JSON.stringify(last.groups)} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    assert(last.status === "completed", `${id} ended ${last.status}`);
    const g = last.groups;
    assert(
      g.total === BAN_GROUPS && g.sent === BAN_GROUPS && g.pending === 0 && g.failed === 0,
      `info-campaign counters do not match the log: ${JSON.stringify(g)}`,
    );
    const messages = await expectOncePerGroup(api, id, groupIds, rig.logFiles, log);
    expectBanKept(messages, last.channels, b.id, bannedAt, log);
    await expectAllSent(rig.target, id, BAN_GROUPS, log);

    await expectWebhooksOnce(rig.receiver, [id], log);
    const bannedStatuses = () => rig.receiver.channelStatuses(b.id).filter((e) => (e.health as { state?: string } | undefined)?.state === "banned");
    // The ban's event may sit in the outbox of the killed server's claim until its lease lapses: wait for it.
    await eventually(async () => assert(bannedStatuses().length > 0, "no channel_status of B with health banned yet"), 60_000).catch(() => {});
    const banned = bannedStatuses();
    log(`channel_status of B with health banned: ${banned.length} (${JSON.stringify(banned)})`);
    assert(banned.length === 1, `expected one channel_status of B with health banned, got ${banned.length}`);
    assert(banned[0].status === "disconnected", `the banned channel_status says ${String(banned[0].status)}`);
  });
}

/** PGlite is one process per data directory: two servers need PostgreSQL. */
const onPostgres = { database: "postgres", why: "PGlite is one process per data directory; two servers need a PostgreSQL database" } as const;

export const tests: E2ETest[] = [
  {
    only: onPostgres,
    name: "two servers on one PostgreSQL: one message per group, pacing kept, webhooks once, takeover of a killed one's campaign < 10 s",
    run: (ctx) => twoProcesses(ctx),
  },
  {
    only: onPostgres,
    name: "two servers, two numbers in every group, one banned, the campaign's holder killed: one message per group, none through the banned number after its ban, its channel_status once",
    run: (ctx) => twoProcessesBan(ctx),
  },
];
