/**
 * The crash test against Evolution API (the fake of test/fake-evolution.ts in its default mode: a
 * 2.3.7 gateway that ignores our message ids, stores a message only once WhatsApp accepted it, and
 * posts `send.message`): the production server runs with MESSAGING_PROVIDER=evolution against the
 * fake, which lives in this (the e2e runner's) process and so keeps its state while the server is
 * killed with SIGKILL three times mid-campaign and restarted on the same data.
 *
 * Each kill is aimed at a send in flight at the gateway: the next POST is made slow (`slowSends`:
 * accepted by WhatsApp `SLOW_SEND_MS` after it arrived) and the server dies while the gateway works on
 * it. The gateway then stores the message and its `send.message` finds nobody listening: accepted, and
 * unknown to us. After the restart reconcileInFlight looks those deliveries up
 * (EVOLUTION_RECONCILE_AFTER_SECONDS=2 after their claim, `POST /chat/findMessages` by group + content
 * fingerprint) and must find them sent rather than send them again. At the end: exactly one message
 * per group in the gateway's store and one send POST per group, every group `sent` in info-campaign
 * (none "outcome unknown"), and the number reconciled above zero and equal to the number left
 * accepted-but-unrecorded.
 *
 * Same databases as the simulator's crash test: PGlite in a temporary DATA_DIR, or with DATABASE_URL a
 * fresh database beside it, dropped at the end. Leases of the dead worker are moved into the past.
 */
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { startFakeEvolution, type FakeEvolution } from "../test/fake-evolution";
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

/** Regular groups on the fake's instance; a legacy-id group and a community's announcement group are listed on top. */
const REGULAR_GROUPS = 40;
/** Kill when `sent` first reaches these shares of the groups. */
const killAt = [0.25, 0.5, 0.75];
/** How long WhatsApp takes to accept the send a kill is aimed at (well under the 2 s before a look-up). */
const SLOW_SEND_MS = 1200;
const TEXT = "Mensagem do teste de queda (Evolution)";

async function crashEvolutionTest(log: (line: string) => void) {
  const started = Date.now();
  const temp = tempDataDir("gcs-crash-evo-");
  const dataDir = temp.dir;
  const logFile = path.join(root, "e2e", "artifacts", "crash-evolution-server.log");
  mkdirSync(path.dirname(logFile), { recursive: true });
  rmSync(logFile, { force: true });
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  let server: ServerProcess | undefined;
  let fake: FakeEvolution | undefined;
  try {
    // Every send is accepted 100 ms after it arrived (the default mode's acceptance delay, longer).
    fake = await startFakeEvolution({ groupsPerInstance: REGULAR_GROUPS });
    fake.knobs.acceptDelayMs = 100;
    fake.knobs.slowSendMs = SLOW_SEND_MS;
    log(`fake Evolution API ${fake.version} on ${fake.url}`);
    if (process.env.DATABASE_URL) {
      database = await createDatabase(process.env.DATABASE_URL, "gcs_crash_evo");
      log(`PostgreSQL: fresh database ${database.name}`);
    } else {
      log(`PGlite in ${dataDir}`);
    }
    const target = { dataDir, databaseUrl: database?.url };
    const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const tenant = await createTenant({ ...target, name: "Crash Evolution", email: `crash-evo-${unique}@example.com`, password: "senha-segura-crash-123" });

    const port = await freePort();
    const evolutionEnv = (p: number) => ({
      MESSAGING_PROVIDER: "evolution",
      EVOLUTION_API_URL: fake!.url,
      EVOLUTION_API_KEY: fake!.apiKey,
      // The gateway posts its webhooks (send.message, connection.update) to this server.
      EVOLUTION_WEBHOOK_BASE_URL: `http://127.0.0.1:${p}`,
      EVOLUTION_RECONCILE_AFTER_SECONDS: "2",
      WEBHOOK_ALLOW_PRIVATE: "1",
      RATE_LIMIT_API_KEY_PER_MINUTE: "1000000",
    });
    const serverOpts: ServerOptions = { port, ...target, logFile, log, env: evolutionEnv(port) };
    const start = async () => {
      try {
        return await startServer(serverOpts);
      } catch (err) {
        // The instance's webhook URL names this port: another one would lose the gateway's events.
        if (await portIsFree(serverOpts.port)) throw err;
        throw new Error(`port ${serverOpts.port} was taken while the server was down: ${(err as Error).message}`);
      }
    };
    server = await start();
    const api = apiClient(() => server!.url, tenant.api_key);

    const channel = await api.post("/api/external/create-channel", { name: "Crash Evo" });
    const idChannel = channel.id_channel as string;
    await fake.pair(idChannel);
    for (let i = 0; ; i++) {
      const r = await api.request("PUT", `/api/external/edit-channel/${idChannel}`, { name: "Crash Evo" });
      if (r.json.status === "connected") break;
      assert(i < 100, `the channel did not become connected after pairing: ${JSON.stringify(r.json)}`);
      await sleep(100);
    }
    const listed = await api.get(`/api/external/list-groups/${idChannel}`);
    const groupIds = (listed.groups as { id_group: string }[]).map((g) => g.id_group);
    const GROUPS = groupIds.length;
    assert(GROUPS === REGULAR_GROUPS + 2, `expected ${REGULAR_GROUPS + 2} groups listed, got ${GROUPS}`);
    const segment = await api.post("/api/external/create-segment", { name: "Crash Evo", id_channel: [idChannel], groups: groupIds });
    await api.patch("/api/external/edit-settings", {
      dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 5, min_campaign_interval: 0, max_campaign_interval: 0 },
    });
    const created = await api.post("/api/external/create-campaign/message", { name: "Crash Evo", id_segment: segment.id_segment, message: TEXT });
    const idCampaign = created.id_campaign as string;
    log(`channel ${idChannel} paired on the fake; campaign ${idCampaign} created for ${GROUPS} groups`);

    const info = async () => {
      const r = await api.get(`/api/external/info-campaign/${idCampaign}`);
      return { status: r.status as string, groups: r.groups as Groups };
    };
    const perKill: { inFlight: number; accepted: number }[] = [];
    /** Groups whose delivery a kill left `sending` while the gateway had (or then stored) its message. */
    const acceptedGroups = new Set<string>();

    for (const [i, share] of killAt.entries()) {
      const deadline = Date.now() + 60_000;
      let seen = await info();
      while (seen.groups.sent < share * GROUPS) {
        assert(Date.now() < deadline, `kill ${i + 1}: sent stayed at ${seen.groups.sent} (status ${seen.status}) for 60 s`);
        assert(seen.status !== "completed" && seen.status !== "failed", `kill ${i + 1}: campaign ${seen.status} before the kill`);
        await sleep(20);
        seen = await info();
      }
      // Aim: the next POST takes SLOW_SEND_MS at the gateway; kill while it works on it.
      fake.knobs.slowSends = 1;
      const aimDeadline = Date.now() + 10_000;
      while (fake.knobs.slowSends > 0) {
        assert(Date.now() < aimDeadline, `kill ${i + 1}: no send reached the gateway within 10 s`);
        await sleep(5);
      }
      const jitter = Math.floor(Math.random() * 300);
      await sleep(jitter);
      await killServer(server);
      assert(seen.status === "sending", `kill ${i + 1} did not land mid-dispatch: ${JSON.stringify(seen)}`);
      // The gateway finishes what it was doing: the slow send is accepted and stored; its send.message finds no server.
      await fake.idle();
      const atGateway = new Set(fake.messages.filter((m) => m.instance === idChannel).map((m) => m.number));
      await withDatabase(target, async (q) => {
        const rows = await q(`select id_group from deliveries where campaign_id = $1 and state = 'sending'`, [idCampaign]);
        const [sentRow] = await q(`select sent from campaigns where id = $1`, [idCampaign]);
        const acceptedNow = rows.filter((r) => atGateway.has(String(r.id_group))).map((r) => String(r.id_group));
        for (const group of acceptedNow) acceptedGroups.add(group);
        const accepted = acceptedNow.length;
        perKill.push({ inFlight: rows.length, accepted });
        log(
          `kill ${i + 1}: SIGKILL pid ${server!.pid} ${jitter} ms into a slow send, at ${String(sentRow.sent)}/${GROUPS} sent: ` +
            `${rows.length} deliveries in flight, ${accepted} of them accepted by the gateway (stored, its send.message lost); gateway store ${atGateway.size}`,
        );
        await q(`update campaigns set lease_until = now() - interval '1 second' where id = $1 and lease_until is not null`, [idCampaign]);
        await q(`update deliveries set lease_until = now() - interval '1 second' where campaign_id = $1 and state = 'sending'`, [idCampaign]);
      });
      server = await start();
    }

    const deadline = Date.now() + 90_000;
    let last = await info();
    while (last.status !== "completed" && last.status !== "failed" && last.status !== "canceled") {
      assert(Date.now() < deadline, `not finished after 90 s: ${JSON.stringify(last)}`);
      await sleep(200);
      last = await info();
    }
    await fake.idle();
    log(`finished: ${JSON.stringify(last)} (${((Date.now() - started) / 1000).toFixed(1)} s since the start of the test)`);

    const mine = fake.messages.filter((m) => m.instance === idChannel);
    const perGroup = new Map<string, number>();
    for (const m of mine) perGroup.set(m.number, (perGroup.get(m.number) ?? 0) + 1);
    const posts = fake.sendRequests.filter((r) => groupIds.includes(r.number));
    const accepted = acceptedGroups.size;
    const reconciled = reconciledFromLog(logFile, idCampaign);
    log(
      `gateway: ${mine.length} messages stored for ${perGroup.size} groups, ${posts.length} send POSTs; ` +
        `accepted but unrecorded per kill: ${perKill.map((k) => k.accepted).join(", ")} (in flight: ${perKill.map((k) => k.inFlight).join(", ")}); ` +
        `reconcileInFlight: ${reconciled.sent} sent at the provider, ${reconciled.pending} back to pending, ${reconciled.lookAgain} looked up again, ${reconciled.unknown} outcome unknown`,
    );
    const twice = [...perGroup.entries()].filter(([, n]) => n > 1);
    assert(twice.length === 0, `groups with more than one message at the gateway: ${JSON.stringify(twice)}`);
    assert(
      mine.length === GROUPS && groupIds.every((g) => perGroup.get(g) === 1),
      `expected exactly one message per group, got ${mine.length} for ${perGroup.size} groups`,
    );
    assert(
      mine.every((m) => m.body.text === TEXT),
      "a message with another text at the gateway",
    );
    assert(posts.length === GROUPS, `expected one send POST per group (nothing sent again), got ${posts.length} for ${GROUPS} groups`);
    assert(accepted > 0, "no kill left a send accepted by the gateway and unrecorded: nothing to reconcile");
    // A delivery the gateway accepted is recorded either by reconcileInFlight or, when the restart is slow, by the
    // gateway's own retried send.message webhook before reconciliation runs; it is then no longer in flight.
    const recordedByWebhook = perKill.reduce((n, k) => n + k.inFlight, 0) - reconciled.inFlight;
    assert(
      reconciled.sent + recordedByWebhook === accepted,
      `${accepted} deliveries were accepted at the gateway but unrecorded at the kills; reconcileInFlight found ${reconciled.sent} sent ` +
        `and ${recordedByWebhook} were recorded before it (by the gateway's retried webhook)`,
    );
    assert(reconciled.unknown === 0, `${reconciled.unknown} deliveries ended "outcome unknown"`);
    assert(last.status === "completed", `expected status completed, got ${last.status}`);
    const g = last.groups;
    assert(
      g.total === GROUPS && g.sent === GROUPS && g.pending === 0 && g.failed === 0,
      `info-campaign counters do not match the gateway: ${JSON.stringify(g)}`,
    );

    await stopServer(server);
    await withDatabase(target, async (q) => {
      const rows = await q(
        `select state, coalesce(error, '') as error, count(*)::int as n from deliveries where campaign_id = $1 group by state, error order by state`,
        [idCampaign],
      );
      log(`deliveries: ${rows.map((r) => `${String(r.state)}${r.error ? ` (${String(r.error)})` : ""} ${String(r.n)}`).join("; ")}`);
      assert(rows.length === 1 && rows[0].state === "sent" && rows[0].n === GROUPS, `every delivery should be sent: ${JSON.stringify(rows)}`);
      const ids = await q(`select provider_message_id as id from deliveries where campaign_id = $1`, [idCampaign]);
      const stored = new Set(mine.map((m) => m.id));
      assert(
        ids.every((r) => stored.has(String(r.id))),
        "a delivery's message id is not one the gateway stored",
      );
    });
  } catch (err) {
    console.error(`[crash-evolution] last server log lines (${logFile}):\n${tail(logFile, 25)}`);
    throw err;
  } finally {
    if (server) await stopServer(server).catch(() => {});
    await fake?.close();
    if (database) await database.drop().catch((err: Error) => console.error(`[crash-evolution] could not drop ${database!.name}: ${err.message}`));
    temp.remove();
  }
}

export const tests: E2ETest[] = [
  {
    name: "Evolution API: SIGKILL the server three times with sends in flight at the gateway: one message per group, reconciled not resent",
    run: ({ log }) => crashEvolutionTest(log),
  },
];
