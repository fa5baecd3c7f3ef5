/**
 * Crash test: a campaign to 300 groups at zero pacing while the real server (.next/serve.cjs) is
 * killed with SIGKILL three times mid-dispatch and restarted on the same data. At the end the
 * simulator's durable log holds exactly one message per group and info-campaign agrees with it.
 *
 * The simulator answers each loop `LATENCY_MS` per message *after* storing it (a gateway that
 * accepted and answers late), so a kill lands between the provider's acceptance and our record: every
 * kill leaves deliveries `sending` that are already in the simulator's log. After the restart they must
 * be found there by reconcileInFlight (provider.findSent → sent), not sent again: the server's
 * `[dispatch] … reconciled … N sent at the provider` lines must add up to exactly the number left
 * accepted-but-unrecorded, and that number must be above zero (the simulator deduplicates by delivery
 * key, so its log alone could not tell a resend from a reconciliation).
 *
 * Runs inside the e2e runner (`npm test`, or `npx tsx scripts/e2e.ts crash`) but starts its own
 * servers: PGlite in a temporary DATA_DIR when DATABASE_URL is unset; with DATABASE_URL, a fresh
 * database created beside the given one on the same PostgreSQL server, dropped at the end.
 *
 * A killed worker leaves the campaign's lease and its in-flight deliveries' leases (up to 8 s each) in
 * the database; a restarted server only resumes once they expire. To keep the test short, while the
 * server is down the test moves those leases into the past (what the wait would do) and the
 * restarted server runs the real recovery path (lease takeover, reconcile with provider.findSent).
 * CRASH_WAIT_FOR_LEASES=1 waits them out instead.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { reconciledFromLog, type Groups } from "./crash-common";
import { assert, type E2ETest } from "./harness";
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
  type ServerOptions,
  type ServerProcess,
} from "./server-process";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ───────────────────────────── the crash test ─────────────────────────────

const GROUPS = 300;
/** Per message, between the simulator's insert and its answer: a loop of 5 answers 200 ms after it is stored. */
const LATENCY_MS = 40;
/** Kill when `sent` first reaches the low end of each window (the high end is what we aim under). */
const killWindows: [number, number][] = [
  [0.2, 0.4],
  [0.5, 0.7],
  [0.8, 0.9],
];
const waitForLeases = process.env.CRASH_WAIT_FOR_LEASES === "1";
const completionTimeoutMs = waitForLeases ? 300_000 : 120_000;

/** PostgreSQL only: waits until a loop of the campaign is in flight (its groups `sending`), as wanted. */
async function inFlightWatcher(databaseUrl: string, campaignId: string) {
  const { default: postgres } = await import("postgres");
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  return {
    async inFlight(want: "logged" | "unlogged", maxSent: number, timeoutMs: number) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const [row] = await sql<{ logged: number; unlogged: number; sent: number }[]>`
          select count(*) filter (where in_log)::int as logged, count(*) filter (where not in_log)::int as unlogged,
                 (select sent from campaigns where id = ${campaignId}) as sent
            from (select exists (select 1 from simulator_messages m where m.delivery_key = d.campaign_id || ':' || d.id_group) as in_log
                    from deliveries d where d.campaign_id = ${campaignId} and d.state = 'sending') s`;
        if (row[want] > 0) return true;
        if (row.sent >= maxSent) return false;
      }
      return false;
    },
    close: () => sql.end({ timeout: 5 }),
  };
}

async function crashTest(log: (line: string) => void) {
  const started = Date.now();
  const temp = tempDataDir("gcs-crash-");
  const dataDir = temp.dir;
  const logFile = path.join(root, "e2e", "artifacts", "crash-server.log");
  mkdirSync(path.dirname(logFile), { recursive: true });
  rmSync(logFile, { force: true });
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let server: ServerProcess | undefined;
  let watch: Awaited<ReturnType<typeof inFlightWatcher>> | undefined;
  try {
    if (process.env.DATABASE_URL) {
      database = await createDatabase(process.env.DATABASE_URL, "gcs_crash");
      log(`PostgreSQL: fresh database ${database.name}`);
    } else {
      log(`PGlite in ${dataDir}`);
    }
    const target = { dataDir, databaseUrl: database?.url };
    const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const tenant = await createTenant({ ...target, name: "Crash test", email: `crash-${unique}@example.com`, password: "senha-segura-crash-123" });
    log(`tenant ${tenant.tenant_id} created with the admin CLI`);

    const port = await freePort();
    const serverOpts: ServerOptions = {
      port,
      ...target,
      logFile,
      log,
      env: { SIMULATOR_GROUPS_PER_CHANNEL: String(GROUPS), RATE_LIMIT_API_KEY_PER_MINUTE: "1000000" },
    };
    const start = async () => {
      try {
        return await startServer(serverOpts);
      } catch (err) {
        // The same port, unless something else took it while the server was down.
        if (await portIsFree(serverOpts.port)) throw err;
        serverOpts.port = await freePort();
        log(`port taken; restarting on ${serverOpts.port}`);
        return startServer(serverOpts);
      }
    };
    server = await start();
    const api = apiClient(() => server!.url, tenant.api_key);

    const channel = await api.post("/api/external/create-channel", { name: "Crash" });
    const idChannel = channel.id_channel as string;
    assert(channel.status === "connected", `the channel should pair at once, got ${String(channel.status)}`);
    const listed = await api.get(`/api/external/list-groups/${idChannel}`);
    const groupIds = (listed.groups as { id_group: string }[]).map((g) => g.id_group);
    assert(groupIds.length === GROUPS, `expected ${GROUPS} groups, got ${groupIds.length}`);
    const segment = await api.post("/api/external/create-segment", { name: "Crash 300", id_channel: [idChannel], groups: groupIds });
    await api.patch("/api/external/edit-settings", {
      dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 5, min_campaign_interval: 0, max_campaign_interval: 0 },
    });
    await api.post("/api/simulator/latency", { ms: LATENCY_MS });
    const created = await api.post("/api/external/create-campaign/message", {
      name: "Crash campaign",
      id_segment: segment.id_segment,
      message: "Mensagem do teste de queda",
    });
    const idCampaign = created.id_campaign as string;
    log(`campaign ${idCampaign} created for ${GROUPS} groups`);

    const info = async () => {
      const r = await api.get(`/api/external/info-campaign/${idCampaign}`);
      return { status: r.status as string, groups: r.groups as Groups };
    };

    const stats = { inFlight: 0, inFlightLogged: 0, perKill: [] as number[] };
    watch = database ? await inFlightWatcher(database.url, idCampaign) : undefined;
    for (const [i, [low, high]] of killWindows.entries()) {
      const deadline = Date.now() + 90_000;
      let seen = await info();
      while (seen.groups.sent < low * GROUPS) {
        assert(Date.now() < deadline, `kill ${i + 1}: sent stayed at ${seen.groups.sent} (status ${seen.status}) for 90 s`);
        assert(seen.status !== "completed" && seen.status !== "failed", `kill ${i + 1}: campaign ${seen.status} before the kill`);
        await sleep(5);
        seen = await info();
      }
      // `sent` moves when a loop is recorded, and the next loop claims its groups a few ms later: a
      // kill right then would land between loops. So aim at the next loop's 200 ms between the
      // simulator's insert and its answer: on PostgreSQL (readable beside the server) by watching for
      // a loop in flight that is already in the provider's log; otherwise 60–160 ms after `sent` moved.
      let aim = "";
      if (watch) {
        const caught = await watch.inFlight("logged", high * GROUPS, 3000);
        aim = caught ? "aimed at a loop in flight, already in the provider's log" : "aim missed";
      }
      if (!aim) {
        const jitter = 60 + Math.floor(Math.random() * 100);
        await sleep(jitter);
        aim = `${jitter} ms after sent reached ${seen.groups.sent}`;
      }
      await killServer(server);
      assert(seen.status === "sending", `kill ${i + 1} did not land mid-dispatch: ${JSON.stringify(seen)}`);
      log(`kill ${i + 1}: SIGKILL pid ${server.pid} (${aim}; window ${low * 100}–${high * 100}%)`);

      // While it is down: what the dead worker left behind.
      const t0 = Date.now();
      await withDatabase(target, async (q) => {
        const [inFlight] = await q(
          `select count(*)::int as n,
                  count(*) filter (where exists (select 1 from simulator_messages m
                                                 where m.delivery_key = d.campaign_id || ':' || d.id_group))::int as in_log
             from deliveries d where d.campaign_id = $1 and d.state = 'sending'`,
          [idCampaign],
        );
        const [sentRow] = await q(`select sent from campaigns where id = $1`, [idCampaign]);
        const [logRow] = await q(`select count(*)::int as n from simulator_messages where id_campaign = $1`, [idCampaign]);
        const sentNow = Number(sentRow.sent);
        assert(sentNow < GROUPS, `kill ${i + 1} came after the last group was recorded`);
        log(
          `  left behind at ${sentNow}/${GROUPS} sent (${((100 * sentNow) / GROUPS).toFixed(0)}%${sentNow > high * GROUPS ? ", past the window" : ""}): ` +
            `${String(inFlight.n)} deliveries in flight (${String(inFlight.in_log)} of them already in the simulator's log); ` +
            `simulator log ${String(logRow.n)}`,
        );
        stats.inFlight += Number(inFlight.n);
        stats.inFlightLogged += Number(inFlight.in_log);
        stats.perKill.push(Number(inFlight.in_log));
        if (!waitForLeases) {
          await q(`update campaigns set lease_until = now() - interval '1 second' where id = $1 and lease_until is not null`, [idCampaign]);
          await q(`update deliveries set lease_until = now() - interval '1 second' where campaign_id = $1 and state = 'sending'`, [idCampaign]);
        }
      });
      log(`  ${waitForLeases ? "leases left to expire on their own" : "leases of the dead worker expired"} (${Date.now() - t0} ms); restarting`);
      server = await start();
    }

    const deadline = Date.now() + completionTimeoutMs;
    let last = await info();
    while (last.status !== "completed" && last.status !== "failed" && last.status !== "canceled") {
      assert(Date.now() < deadline, `not finished after ${completionTimeoutMs / 1000} s: ${JSON.stringify(last)}`);
      await sleep(200);
      last = await info();
    }
    log(`finished: ${JSON.stringify(last)} (${((Date.now() - started) / 1000).toFixed(1)} s since the start of the test)`);
    log(`over the three kills: ${stats.inFlight} deliveries left in flight, ${stats.inFlightLogged} of them already accepted by the provider`);
    const reconciled = reconciledFromLog(logFile, idCampaign);
    log(
      `accepted but unrecorded per kill: ${stats.perKill.join(", ")}; found sent at the provider after the restarts (reconcileInFlight): ${reconciled.sent} (back to pending: ${reconciled.pending})`,
    );
    assert(stats.inFlightLogged > 0, "no kill landed between the provider's acceptance and our record: nothing was reconciled");
    assert(
      reconciled.sent === stats.inFlightLogged,
      `${stats.inFlightLogged} deliveries were accepted but unrecorded at the kills; reconcileInFlight found ${reconciled.sent} of them sent (the others were sent again)`,
    );

    const messages = (await api.get(`/api/simulator/messages?id_campaign=${idCampaign}`)).messages as {
      id_group: string;
      id_campaign: string;
      delivery_key: string;
    }[];
    const groupsSeen = new Set(messages.map((m) => m.id_group));
    const keys = new Set(messages.map((m) => m.delivery_key));
    log(`simulator log: ${messages.length} messages, ${groupsSeen.size} distinct groups, ${keys.size} distinct delivery keys`);
    assert(messages.length === GROUPS, `expected exactly ${GROUPS} messages in the simulator's log, got ${messages.length}`);
    assert(groupsSeen.size === GROUPS, `expected ${GROUPS} distinct groups, got ${groupsSeen.size}`);
    assert(keys.size === GROUPS, `expected every delivery_key unique, got ${keys.size} distinct of ${messages.length}`);
    // The simulator keeps one message per delivery key (as a careful gateway would), so a resend does not show in its
    // log: it shows as its warning in the server's.
    const repeated = readFileSync(logFile, "utf8")
      .split("\n")
      .filter((l) => l.includes("[simulator] repeated send"));
    assert(
      repeated.length === 0,
      `${repeated.length} sends repeated a delivery key the simulator had already accepted (a real platform delivers both): ${repeated[0]}`,
    );
    assert(
      groupIds.every((g) => groupsSeen.has(g)),
      "some group of the segment got no message",
    );
    assert(
      messages.every((m) => m.id_campaign === idCampaign),
      "a message of another campaign in the log",
    );
    assert(last.status === "completed", `expected status completed, got ${last.status}`);
    const g = last.groups;
    assert(g.total === GROUPS && g.sent === GROUPS && g.pending === 0 && g.failed === 0, `info-campaign counters do not match the log: ${JSON.stringify(g)}`);

    await stopServer(server);
    await withDatabase(target, async (q) => {
      const rows = await q(
        `select state, count(*)::int as n, count(*) filter (where attempts > 1)::int as retried, max(attempts)::int as max_attempts
           from deliveries where campaign_id = $1 group by state order by state`,
        [idCampaign],
      );
      log(
        `deliveries: ${rows
          .map((r) => `${String(r.state)} ${String(r.n)} (${String(r.retried)} with more than one attempt, max ${String(r.max_attempts)})`)
          .join("; ")}`,
      );
      assert(rows.length === 1 && rows[0].state === "sent" && rows[0].n === GROUPS, `every delivery should be sent: ${JSON.stringify(rows)}`);
    });
  } catch (err) {
    console.error(`[crash] last server log lines (${logFile}):\n${tail(logFile, 25)}`);
    throw err;
  } finally {
    await watch?.close();
    if (server) await stopServer(server).catch(() => {});
    if (database) await database.drop().catch((err: Error) => console.error(`[crash] could not drop ${database!.name}: ${err.message}`));
    temp.remove();
  }
}

export const tests: E2ETest[] = [
  {
    name: "SIGKILL the server three times mid-dispatch: one message per group, counters match",
    run: ({ log }) => crashTest(log),
  },
];
