/**
 * What the crash tests (simulator, Evolution API) and the two-process test share: info-campaign's counters, the
 * server's reconcile log lines, a restartable server on a database of its own, what a killed worker left behind,
 * the exactly-once checks on the simulator's log, two numbers reaching the same groups (one of them banned
 * mid-campaign), a webhook receiver, and the SIGKILL of the process holding a campaign.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { assert } from "./harness";
import {
  apiClient,
  createDatabase,
  createTenant,
  freePort,
  killServer,
  portIsFree,
  root,
  startServer,
  stopServer,
  tail,
  tempDataDir,
  withDatabase,
  type Api,
  type ServerOptions,
  type ServerProcess,
} from "./server-process";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Groups {
  total: number;
  sent: number;
  pending: number;
  failed: number;
}

/** info-campaign's `channels`: per channel, its segment groups sent, pending (or in flight) and failed. */
export interface ChannelShare {
  id_channel: string;
  sent: number;
  pending: number;
  failed: number;
}

/**
 * What reconcileInFlight decided for one campaign over every lifetime of the server (its log lines
 * `[dispatch] campaign <id> reconciled n in-flight: s sent at the provider, p back to pending, …`).
 */
export function reconciledFromLog(logFile: string, campaignId: string) {
  const text = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
  const total = { inFlight: 0, sent: 0, pending: 0, lookAgain: 0, unknown: 0 };
  const re = new RegExp(
    `\\[dispatch\\] campaign ${campaignId} reconciled (\\d+) in-flight: (\\d+) sent at the provider, (\\d+) back to pending, (\\d+) to look up again, (\\d+) outcome unknown`,
    "g",
  );
  for (const m of text.matchAll(re)) {
    total.inFlight += Number(m[1]);
    total.sent += Number(m[2]);
    total.pending += Number(m[3]);
    total.lookAgain += Number(m[4]);
    total.unknown += Number(m[5]);
  }
  return total;
}

// ───────────────────────────── a server to kill and restart ─────────────────────────────

/**
 * A killed worker leaves the campaign's lease and its in-flight deliveries' leases (up to 8 s each) in the
 * database; a restarted server only resumes once they expire. While the server is down the crash tests move
 * them into the past (what the wait would do); CRASH_WAIT_FOR_LEASES=1 waits them out instead.
 */
export const waitForLeases = process.env.CRASH_WAIT_FOR_LEASES === "1";

export interface CrashRig {
  target: { dataDir: string; databaseUrl?: string };
  /** Every lifetime of the server, appended. */
  logFile: string;
  api: Api;
  server(): ServerProcess;
  /** Starts it (again) on the same data, on the same port unless something else took it meanwhile. */
  start(): Promise<void>;
  /** SIGKILL; `await` returns once it is gone. */
  kill(): Promise<void>;
}

/**
 * Runs `test` with a tenant (made with the admin CLI) and its server, the simulator giving each channel
 * `groups` groups: on PGlite in a temporary DATA_DIR when DATABASE_URL is unset; with DATABASE_URL, on a fresh
 * database created beside the given one on the same PostgreSQL server, dropped at the end. The server's log
 * is e2e/artifacts/<name>-server.log; its last lines are printed when the test fails.
 */
export async function withCrashRig(opts: { name: string; groups: number; log: (line: string) => void }, test: (rig: CrashRig) => Promise<void>) {
  const { name, log } = opts;
  const temp = tempDataDir(`gcs-${name}-`);
  const logFile = path.join(root, "e2e", "artifacts", `${name}-server.log`);
  mkdirSync(path.dirname(logFile), { recursive: true });
  rmSync(logFile, { force: true });
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let server: ServerProcess | undefined;
  try {
    if (process.env.DATABASE_URL) {
      database = await createDatabase(process.env.DATABASE_URL, `gcs_${name.replace(/\W/g, "_")}`);
      log(`PostgreSQL: fresh database ${database.name}`);
    } else {
      log(`PGlite in ${temp.dir}`);
    }
    const target = { dataDir: temp.dir, databaseUrl: database?.url };
    const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const tenant = await createTenant({ ...target, name: `Teste ${name}`, email: `${name}-${unique}@example.com`, password: "senha-segura-crash-123" });
    log(`tenant ${tenant.tenant_id} created with the admin CLI`);
    const serverOpts: ServerOptions = {
      port: await freePort(),
      ...target,
      logFile,
      log,
      env: { SIMULATOR_GROUPS_PER_CHANNEL: String(opts.groups), RATE_LIMIT_API_KEY_PER_MINUTE: "1000000" },
    };
    const start = async () => {
      try {
        server = await startServer(serverOpts);
      } catch (err) {
        if (await portIsFree(serverOpts.port)) throw err;
        serverOpts.port = await freePort();
        log(`port taken; restarting on ${serverOpts.port}`);
        server = await startServer(serverOpts);
      }
    };
    await start();
    await test({
      target,
      logFile,
      api: apiClient(() => server!.url, tenant.api_key),
      server: () => server!,
      start,
      kill: () => killServer(server!),
    });
  } catch (err) {
    console.error(`[${name}] last server log lines (${logFile}):\n${tail(logFile, 25)}`);
    throw err;
  } finally {
    if (server) await stopServer(server).catch(() => {});
    if (database) await database.drop().catch((err: Error) => console.error(`[${name}] could not drop ${database!.name}: ${err.message}`));
    temp.remove();
  }
}

/** What a killed worker left of a campaign, read while the server is down: its sent counter, deliveries in flight (per channel), the log. */
export interface LeftBehind {
  sent: number;
  inFlight: number;
  /** In flight and already in the simulator's log: accepted by the provider, not recorded by us. */
  inFlightLogged: number;
  /** id_channel → in flight and in the log, through that channel. */
  loggedByChannel: Map<string, number>;
  /** The campaign's messages in the simulator's log. */
  logged: number;
}

/** Reads what the dead worker left (LeftBehind) and, unless waitForLeases, expires its leases. */
export async function leftBehind(target: CrashRig["target"], campaignId: string): Promise<LeftBehind> {
  return withDatabase(target, async (q) => {
    const inFlight = await q(
      `select d.channel_id, count(*)::int as n,
              count(*) filter (where exists (select 1 from simulator_messages m
                                             where m.delivery_key = d.campaign_id || ':' || d.id_group))::int as in_log
         from deliveries d where d.campaign_id = $1 and d.state = 'sending' group by d.channel_id`,
      [campaignId],
    );
    const [sentRow] = await q(`select sent from campaigns where id = $1`, [campaignId]);
    const [logRow] = await q(`select count(*)::int as n from simulator_messages where id_campaign = $1`, [campaignId]);
    if (!waitForLeases) {
      await q(`update campaigns set lease_until = now() - interval '1 second' where id = $1 and lease_until is not null`, [campaignId]);
      await q(`update deliveries set lease_until = now() - interval '1 second' where campaign_id = $1 and state = 'sending'`, [campaignId]);
    }
    return {
      sent: Number(sentRow.sent),
      inFlight: inFlight.reduce((n, r) => n + Number(r.n), 0),
      inFlightLogged: inFlight.reduce((n, r) => n + Number(r.in_log), 0),
      loggedByChannel: new Map(inFlight.map((r) => [String(r.channel_id), Number(r.in_log)])),
      logged: Number(logRow.n),
    };
  });
}

// ───────────────────────────── exactly once ─────────────────────────────

/** A message of the simulator's log, as GET /api/simulator/messages answers it. */
export interface Logged {
  id_channel: string;
  id_group: string;
  id_campaign: string;
  delivery_key: string;
  sent_at: string;
  text: string;
}

export const simulatorLog = async (api: Api, campaignId: string, channelId?: string) =>
  (await api.get(`/api/simulator/messages?id_campaign=${campaignId}${channelId ? `&id_channel=${channelId}` : ""}`)).messages as Logged[];

export async function infoCampaign(api: Api, campaignId: string) {
  const r = await api.get(`/api/external/info-campaign/${campaignId}`);
  return { status: r.status as string, groups: r.groups as Groups, channels: r.channels as ChannelShare[] };
}

/** Zero pacing (no pause between loops nor before the campaign), `perLoop` groups a loop: edit-settings' body. */
export const zeroPacing = (perLoop: number) => ({
  dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: perLoop, min_campaign_interval: 0, max_campaign_interval: 0 },
});

/** info-campaign once `sent` reached `atLeast` (polled every 5 ms, at most 90 s); the campaign must still be going. */
export async function sentReaches(api: Api, campaignId: string, atLeast: number, what: string) {
  const deadline = Date.now() + 90_000;
  let seen = await infoCampaign(api, campaignId);
  while (seen.groups.sent < atLeast) {
    assert(Date.now() < deadline, `${what}: sent stayed at ${seen.groups.sent} (status ${seen.status}) for 90 s`);
    assert(seen.status !== "completed" && seen.status !== "failed", `${what}: the campaign was ${seen.status} already`);
    await sleep(5);
    seen = await infoCampaign(api, campaignId);
  }
  return seen;
}

/** info-campaign once the campaign is completed, failed or canceled (polled every 200 ms until `deadline`). */
export async function finished(api: Api, campaignId: string, deadline: number) {
  for (;;) {
    const last = await infoCampaign(api, campaignId);
    if (last.status === "completed" || last.status === "failed" || last.status === "canceled") return last;
    assert(Date.now() < deadline, `${campaignId} not finished in time: ${JSON.stringify(last)}`);
    await sleep(200);
  }
}

/**
 * Exactly one message per group of `groupIds` in the simulator's log, under distinct delivery keys, none of
 * another campaign; and no server (their `logFiles`) sent a key the simulator had already accepted. The
 * simulator keeps one message per delivery key (as a careful gateway would), so a resend does not show in its
 * log: it shows as its warning in the server's. Returns the log.
 */
export async function expectOncePerGroup(api: Api, campaignId: string, groupIds: string[], logFiles: string[], log: (line: string) => void) {
  const messages = await simulatorLog(api, campaignId);
  const groupsSeen = new Set(messages.map((m) => m.id_group));
  const keys = new Set(messages.map((m) => m.delivery_key));
  log(`${campaignId}: ${messages.length} messages in the simulator's log, ${groupsSeen.size} distinct groups, ${keys.size} distinct delivery keys`);
  assert(messages.length === groupIds.length, `${campaignId}: expected exactly ${groupIds.length} messages in the simulator's log, got ${messages.length}`);
  assert(groupsSeen.size === groupIds.length, `${campaignId}: expected ${groupIds.length} distinct groups, got ${groupsSeen.size}`);
  assert(keys.size === groupIds.length, `${campaignId}: expected every delivery_key unique, got ${keys.size} distinct of ${messages.length}`);
  assert(
    groupIds.every((g) => groupsSeen.has(g)),
    `${campaignId}: some group of the segment got no message`,
  );
  assert(
    messages.every((m) => m.id_campaign === campaignId),
    `${campaignId}: a message of another campaign in the log`,
  );
  const repeated = logFiles.flatMap((f) => (existsSync(f) ? readFileSync(f, "utf8").split("\n") : [])).filter((l) => l.includes("[simulator] repeated send"));
  log(`repeated delivery keys logged by the server${logFiles.length > 1 ? "s" : ""}: ${repeated.length}`);
  assert(
    repeated.length === 0,
    `${repeated.length} sends repeated a delivery key the simulator had already accepted (a real platform delivers both):\n${repeated.slice(0, 5).join("\n")}`,
  );
  return messages;
}

/** Every delivery of the campaign `sent` in the database (read directly; on PGlite with the server down). */
export async function expectAllSent(target: CrashRig["target"], campaignId: string, groups: number, log: (line: string) => void) {
  await withDatabase(target, async (q) => {
    const rows = await q(
      `select state, count(*)::int as n, count(*) filter (where attempts > 1)::int as retried, max(attempts)::int as max_attempts
         from deliveries where campaign_id = $1 group by state order by state`,
      [campaignId],
    );
    log(
      `deliveries: ${rows
        .map((r) => `${String(r.state)} ${String(r.n)} (${String(r.retried)} with more than one attempt, max ${String(r.max_attempts)})`)
        .join("; ")}`,
    );
    assert(rows.length === 1 && rows[0].state === "sent" && rows[0].n === groups, `every delivery should be sent: ${JSON.stringify(rows)}`);
  });
}

// ───────────────────────────── two numbers, one banned ─────────────────────────────

export interface TwoNumbers {
  a: { id: string; phone: string };
  b: { id: string; phone: string };
  /** A's first `groups` groups, each reached by both numbers. */
  groupIds: string[];
  segmentId: string;
}

/**
 * Two paired numbers in the same groups, as launch teams run them (CONTRACT §7): B joins each of A's first
 * `groups` groups (the simulator's participants control, by B's number from info-channel; in the simulator's
 * groups every member may post, so a member reaches the group); a segment of both channels over those groups.
 */
export async function twoNumbersOnSameGroups(api: Api, groups: number): Promise<TwoNumbers> {
  const paired = async (name: string) => {
    const channel = await api.post("/api/external/create-channel", { name });
    assert(channel.status === "connected", `the channel should pair at once, got ${String(channel.status)}`);
    const id = channel.id_channel as string;
    return { id, phone: (await api.get(`/api/external/info-channel/${id}`)).phone as string };
  };
  const a = await paired("Número A");
  const b = await paired("Número B");
  const listed = (await api.get(`/api/external/list-groups/${a.id}`)).groups as { id_group: string }[];
  const groupIds = listed.slice(0, groups).map((g) => g.id_group);
  assert(groupIds.length === groups, `expected ${groups} groups, got ${groupIds.length}`);
  // Eight at a time: a few hundred groups in a few seconds.
  const queue = [...groupIds];
  const worker = async () => {
    for (let g = queue.shift(); g !== undefined; g = queue.shift()) {
      await api.post(`/api/simulator/groups/${encodeURIComponent(g)}/participants`, { join: [b.phone] });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const reached = new Set(((await api.get(`/api/external/list-groups/${b.id}`)).groups as { id_group: string }[]).map((g) => g.id_group));
  assert(
    groupIds.every((g) => reached.has(g)),
    "B does not list every group it joined",
  );
  const segment = await api.post("/api/external/create-segment", { name: `Dois números ${groups}`, id_channel: [a.id, b.id], groups: groupIds });
  return { a, b, groupIds, segmentId: segment.id_segment as string };
}

/**
 * The platform bans the number (the simulator's state control, §7): the channel disconnects with that reason.
 * Returns when the control answered (the service has recorded the ban by then).
 */
export async function banNumber(api: Api, channelId: string) {
  const ban = await api.post(`/api/simulator/channels/${channelId}/state`, { health: "banned" });
  const answeredAt = new Date();
  assert(ban.connected === false && ban.health === "banned", `the simulator did not ban ${channelId}: ${JSON.stringify(ban)}`);
  return answeredAt;
}

/**
 * When the service recorded the ban of `channelId` (info-channel's health.since, no later than the control's
 * answer): a message the platform stored after that instant went out through a banned number.
 */
export async function bannedSince(api: Api, channelId: string, answeredAt: Date) {
  const channel = await api.get(`/api/external/info-channel/${channelId}`);
  const health = channel.health as { state: string; since: string | null };
  assert(channel.status === "disconnected" && health.state === "banned", `info-channel after the ban: ${JSON.stringify(channel)}`);
  const since = new Date(health.since ?? Number.NaN);
  assert(since <= answeredAt, `the ban recorded at ${health.since}, not by the control's answer (${answeredAt.toISOString()})`);
  return since;
}

/**
 * After a ban of `banned` at `bannedAt`: nothing through it after the ban, some before (the ban came
 * mid-campaign), the rest through the other numbers; info-campaign's `channels` equal the log per channel, none
 * pending or failed. Returns the count per channel.
 */
export function expectBanKept(messages: Logged[], channels: ChannelShare[], banned: string, bannedAt: Date, log: (line: string) => void) {
  const byChannel = new Map<string, number>();
  for (const m of messages) byChannel.set(m.id_channel, (byChannel.get(m.id_channel) ?? 0) + 1);
  const late = messages.filter((m) => m.id_channel === banned && Date.parse(m.sent_at) > bannedAt.getTime());
  log(
    `per channel in the log: ${[...byChannel].map(([id, n]) => `${id} ${n}`).join(", ")}; info-campaign channels ${JSON.stringify(channels)}; ` +
      `through the banned number after the ban (${bannedAt.toISOString()}): ${late.length}`,
  );
  assert(late.length === 0, `${late.length} messages went through the banned number after the ban, the first at ${late[0]?.sent_at}`);
  assert((byChannel.get(banned) ?? 0) > 0, "nothing went through the banned number before the ban: the ban did not come mid-campaign");
  assert(byChannel.size === 2, `expected messages through both numbers, got ${JSON.stringify([...byChannel])}`);
  const counted = new Map(channels.map((c) => [c.id_channel, c]));
  for (const [id, n] of byChannel) {
    const share = counted.get(id);
    assert(
      share !== undefined && share.sent === n && share.pending === 0 && share.failed === 0,
      `info-campaign channels for ${id} do not match the log (${n}): ${JSON.stringify(share)}`,
    );
  }
  assert(
    channels.reduce((sum, c) => sum + c.sent, 0) === messages.length,
    `info-campaign channels add up to ${channels.reduce((sum, c) => sum + c.sent, 0)}, the log holds ${messages.length}`,
  );
  return byChannel;
}

// ───────────────────────────── two processes ─────────────────────────────

/** A webhook receiver on 127.0.0.1: counts each webhook-id and keeps each event's type and data. */
export async function webhookReceiver() {
  const seen = new Map<string, number>();
  const events: { type?: string; data?: Record<string, unknown> }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const id = String(req.headers["webhook-id"]);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      try {
        events.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as (typeof events)[number]);
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
    /** The campaigns each `campaign_status` … `completed` named. */
    completed: () => events.filter((e) => e.type === "campaign_status" && e.data?.status === "completed").map((e) => e.data?.id_campaign),
    /** The `channel_status` events of one channel. */
    channelStatuses: (channelId: string) => events.filter((e) => e.type === "channel_status" && e.data?.id_channel === channelId).map((e) => e.data!),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * SIGKILLs the one of two servers that holds a campaign, while it is mid-step. Which one holds it: the first
 * is stopped (SIGSTOP) for a second while `sent()` is read through the second; if it still moves, the second
 * holds it and is killed (while the first is still stopped, so that it cannot take the campaign meanwhile),
 * else the stopped one is. The kill waits for a moment when the lease is taken (`leased()`). Returns the index
 * of the killed server and whether it held the lease at the kill.
 */
export async function killCampaignHolder(servers: ServerProcess[], sent: () => Promise<number>, leased: () => Promise<boolean>, log: (line: string) => void) {
  const before = await sent();
  process.kill(-servers[0].pid, "SIGSTOP");
  try {
    await sleep(1000);
    const after = await sent();
    const victim = after > before ? 1 : 0;
    log(`server ${servers[0].pid} stopped for 1 s: sent went ${before} → ${after}, so server ${victim === 0 ? "one" : "two"} holds the campaign`);
    for (let i = 0; i < 200 && !(await leased()); i++) await sleep(5);
    await killServer(servers[victim]);
    return { victim, heldAtKill: await leased() };
  } finally {
    // (Gone already when it was the one killed.)
    if (servers[0].child.exitCode === null && servers[0].child.signalCode === null) process.kill(-servers[0].pid, "SIGCONT");
  }
}
