/**
 * Crash tests: the real server (.next/serve.cjs) killed with SIGKILL mid-dispatch and restarted on the same
 * data; at the end the simulator's durable log holds exactly one message per group and info-campaign agrees
 * with it.
 *
 * 1. One number: a campaign to 300 groups at zero pacing, killed three times.
 * 2. Two numbers in every group (CONTRACT §7), one banned mid-campaign: 200 groups, each reached by both
 *    numbers, spread over them. While a loop through the number to be banned is in flight (already in the
 *    simulator's log, not yet answered: that loop is slowed to 2 s), the simulator bans the number, and the
 *    server is killed right after. After
 *    the restart its groups fail over to the other number: every group still gets exactly one message, none
 *    through the banned number after its ban (the service's `health.since`; the log gives id_channel and the
 *    time), the sends it had in flight before the ban are found at the provider rather than sent again, and
 *    info-campaign's `channels` equal the log per channel.
 *
 * The simulator answers each loop `LATENCY_MS` per message *after* storing it (a gateway that
 * accepted and answers late), so a kill lands between the provider's acceptance and our record: every
 * kill leaves deliveries `sending` that are already in the simulator's log. After the restart they must
 * be found there by reconcileInFlight (provider.findSent → sent), not sent again: the server's
 * `[dispatch] … reconciled … N sent at the provider` lines must add up to exactly the number left
 * accepted-but-unrecorded, and that number must be above zero (the simulator deduplicates by delivery
 * key, so its log alone could not tell a resend from a reconciliation: a resend shows as the server's
 * `[simulator] repeated send` warning, of which there must be none).
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
import {
  banNumber,
  bannedSince,
  expectAllSent,
  expectBanKept,
  expectOncePerGroup,
  finished,
  infoCampaign,
  leftBehind,
  reconciledFromLog,
  sentReaches,
  simulatorLog,
  twoNumbersOnSameGroups,
  waitForLeases,
  withCrashRig,
  zeroPacing,
} from "./crash-common";
import { renderForGroup } from "../server/dispatch/variations";
import { assert, type E2ETest } from "./harness";
import { stopServer, type Api } from "./server-process";

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
  let watch: Awaited<ReturnType<typeof inFlightWatcher>> | undefined;
  await withCrashRig({ name: "crash", groups: GROUPS, log }, async (rig) => {
    const { api, target } = rig;
    const channel = await api.post("/api/external/create-channel", { name: "Crash" });
    const idChannel = channel.id_channel as string;
    assert(channel.status === "connected", `the channel should pair at once, got ${String(channel.status)}`);
    const listed = await api.get(`/api/external/list-groups/${idChannel}`);
    const groupIds = (listed.groups as { id_group: string }[]).map((g) => g.id_group);
    assert(groupIds.length === GROUPS, `expected ${GROUPS} groups, got ${groupIds.length}`);
    const segment = await api.post("/api/external/create-segment", { name: "Crash 300", id_channel: [idChannel], groups: groupIds });
    await api.patch("/api/external/edit-settings", zeroPacing(5));
    await api.post("/api/simulator/latency", { ms: LATENCY_MS });
    const created = await api.post("/api/external/create-campaign/message", {
      name: "Crash campaign",
      id_segment: segment.id_segment,
      message: "Mensagem do teste de queda",
    });
    const idCampaign = created.id_campaign as string;
    log(`campaign ${idCampaign} created for ${GROUPS} groups`);

    const stats = { inFlight: 0, inFlightLogged: 0, perKill: [] as number[] };
    watch = target.databaseUrl ? await inFlightWatcher(target.databaseUrl, idCampaign) : undefined;
    for (const [i, [low, high]] of killWindows.entries()) {
      const seen = await sentReaches(api, idCampaign, low * GROUPS, `kill ${i + 1}`);
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
      await rig.kill();
      assert(seen.status === "sending", `kill ${i + 1} did not land mid-dispatch: ${JSON.stringify(seen)}`);
      log(`kill ${i + 1}: SIGKILL pid ${rig.server().pid} (${aim}; window ${low * 100}–${high * 100}%)`);

      // While it is down: what the dead worker left behind.
      const t0 = Date.now();
      const left = await leftBehind(target, idCampaign);
      assert(left.sent < GROUPS, `kill ${i + 1} came after the last group was recorded`);
      log(
        `  left behind at ${left.sent}/${GROUPS} sent (${((100 * left.sent) / GROUPS).toFixed(0)}%${left.sent > high * GROUPS ? ", past the window" : ""}): ` +
          `${left.inFlight} deliveries in flight (${left.inFlightLogged} of them already in the simulator's log); ` +
          `simulator log ${left.logged}`,
      );
      stats.inFlight += left.inFlight;
      stats.inFlightLogged += left.inFlightLogged;
      stats.perKill.push(left.inFlightLogged);
      log(`  ${waitForLeases ? "leases left to expire on their own" : "leases of the dead worker expired"} (${Date.now() - t0} ms); restarting`);
      await rig.start();
    }

    const last = await finished(api, idCampaign, Date.now() + completionTimeoutMs);
    log(`finished: ${JSON.stringify(last)} (${((Date.now() - started) / 1000).toFixed(1)} s since the start of the test)`);
    log(`over the three kills: ${stats.inFlight} deliveries left in flight, ${stats.inFlightLogged} of them already accepted by the provider`);
    const reconciled = reconciledFromLog(rig.logFile, idCampaign);
    log(
      `accepted but unrecorded per kill: ${stats.perKill.join(", ")}; found sent at the provider after the restarts (reconcileInFlight): ${reconciled.sent} (back to pending: ${reconciled.pending})`,
    );
    assert(stats.inFlightLogged > 0, "no kill landed between the provider's acceptance and our record: nothing was reconciled");
    assert(
      reconciled.sent === stats.inFlightLogged,
      `${stats.inFlightLogged} deliveries were accepted but unrecorded at the kills; reconcileInFlight found ${reconciled.sent} of them sent (the others were sent again)`,
    );

    await expectOncePerGroup(api, idCampaign, groupIds, [rig.logFile], log);
    assert(last.status === "completed", `expected status completed, got ${last.status}`);
    const g = last.groups;
    assert(g.total === GROUPS && g.sent === GROUPS && g.pending === 0 && g.failed === 0, `info-campaign counters do not match the log: ${JSON.stringify(g)}`);

    await stopServer(rig.server());
    await expectAllSent(target, idCampaign, GROUPS, log);
  }).finally(() => watch?.close());
}

// ───────────────────────────── two numbers, one banned ─────────────────────────────

const BAN_GROUPS = 200;
/** 8 a loop (4 through each number) at 10 ms a message but for the loop aimed at (AIM_LATENCY_MS). */
const BAN_PER_LOOP = 8;
const BAN_LATENCY_MS = 10;
/** For the loop the ban and the kill aim at: 2 s between its insert and its answer, whatever the machine's load. */
const AIM_LATENCY_MS = 250;
/** The ban once this share is sent. */
const BAN_AT = 0.3;

/**
 * Waits (at most `timeoutMs`) until a loop with sends through `channelId` is in flight and already in the
 * provider's log: the log, read first, holds more of them than info-campaign counts sent a moment later.
 */
async function inFlightThrough(api: Api, campaignId: string, channelId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const logged = (await simulatorLog(api, campaignId, channelId)).length;
    const sent = (await infoCampaign(api, campaignId)).channels.find((c) => c.id_channel === channelId)?.sent ?? 0;
    if (logged > sent) return true;
  }
  return false;
}

async function crashBanTest(log: (line: string) => void) {
  const started = Date.now();
  await withCrashRig({ name: "crash-ban", groups: BAN_GROUPS, log }, async (rig) => {
    const { api, target } = rig;
    const t0 = Date.now();
    const { a, b, groupIds, segmentId } = await twoNumbersOnSameGroups(api, BAN_GROUPS);
    log(`numbers ${a.id} (A) and ${b.id} (B) both in ${BAN_GROUPS} groups (joined in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    await api.patch("/api/external/edit-settings", zeroPacing(BAN_PER_LOOP));
    await api.post("/api/simulator/latency", { ms: BAN_LATENCY_MS });
    const idCampaign = (await api.post("/api/external/create-campaign/message", { name: "Crash ban", id_segment: segmentId, message: "Dois números" }))
      .id_campaign as string;
    log(`campaign ${idCampaign} created for ${BAN_GROUPS} groups over A and B`);

    // Slow loops from here (the one in flight still answers at the former pace): the next loop's sends through
    // B stay accepted and unanswered long enough for the ban and the kill to land on them.
    await sentReaches(api, idCampaign, BAN_AT * BAN_GROUPS, "the ban");
    await api.post("/api/simulator/latency", { ms: AIM_LATENCY_MS });
    const seen = await sentReaches(api, idCampaign, (await infoCampaign(api, idCampaign)).groups.sent + 1, "the ban");
    const caught = await inFlightThrough(api, idCampaign, b.id, 5000);
    const answeredAt = await banNumber(api, b.id);
    await rig.kill();
    assert(seen.status === "sending", `the ban did not land mid-dispatch: ${JSON.stringify(seen)}`);
    log(`B banned (${caught ? "a loop through B in flight, already in the provider's log" : "aim missed"}), then SIGKILL pid ${rig.server().pid}`);
    const left = await leftBehind(target, idCampaign);
    log(
      `  left behind at ${left.sent}/${BAN_GROUPS} sent: ${left.inFlight} deliveries in flight, ${left.inFlightLogged} of them already in the ` +
        `simulator's log (${left.loggedByChannel.get(b.id) ?? 0} through B); simulator log ${left.logged}; restarting`,
    );
    assert(left.sent < BAN_GROUPS, "the kill came after the last group was recorded");
    await rig.start();
    await api.post("/api/simulator/latency", { ms: BAN_LATENCY_MS });
    const bannedAt = await bannedSince(api, b.id, answeredAt);

    const last = await finished(api, idCampaign, Date.now() + completionTimeoutMs);
    log(`finished: ${JSON.stringify(last)} (${((Date.now() - started) / 1000).toFixed(1)} s since the start of the test)`);
    const reconciled = reconciledFromLog(rig.logFile, idCampaign);
    log(`found sent at the provider after the restart (reconcileInFlight): ${reconciled.sent} (back to pending: ${reconciled.pending})`);
    assert(left.inFlightLogged > 0, "the kill did not land between the provider's acceptance and our record: nothing was reconciled");
    assert(
      (left.loggedByChannel.get(b.id) ?? 0) > 0,
      "no send through B was accepted but unrecorded at the kill: the banned number's sends in flight were not put to the test",
    );
    assert(
      reconciled.sent === left.inFlightLogged,
      `${left.inFlightLogged} deliveries were accepted but unrecorded at the kill; reconcileInFlight found ${reconciled.sent} of them sent (the others were sent again)`,
    );
    assert(last.status === "completed", `expected status completed, got ${last.status}`);
    const g = last.groups;
    assert(
      g.total === BAN_GROUPS && g.sent === BAN_GROUPS && g.pending === 0 && g.failed === 0,
      `info-campaign counters do not match the log: ${JSON.stringify(g)}`,
    );
    const messages = await expectOncePerGroup(api, idCampaign, groupIds, [rig.logFile], log);
    expectBanKept(messages, last.channels, b.id, bannedAt, log);

    await stopServer(rig.server());
    await expectAllSent(target, idCampaign, BAN_GROUPS, log);
  });
}

// ───────────────────────────── a text with variations ─────────────────────────────

const VARIATION_GROUPS = 120;
const VARIATION_TEXT = "{A|B|C} {{grupo}}: oferta de {{data}}";

/**
 * A campaign whose text has variations (docs/decisions.md#message-variations), killed once mid-dispatch: every group
 * still has exactly one message, and its text is the one its delivery key chooses, with its own name (what
 * reconciliation rebuilt after the restart is what the dead worker had sent).
 */
async function crashVariationTest(log: (line: string) => void) {
  await withCrashRig({ name: "crash-variations", groups: VARIATION_GROUPS, log }, async (rig) => {
    const { api, target } = rig;
    const idChannel = (await api.post("/api/external/create-channel", { name: "Variações" })).id_channel as string;
    const groups = (await api.get(`/api/external/list-groups/${idChannel}`)).groups as { id_group: string; name: string }[];
    const groupIds = groups.map((g) => g.id_group);
    const segment = await api.post("/api/external/create-segment", { name: "Variações", id_channel: [idChannel], groups: groupIds });
    await api.patch("/api/external/edit-settings", zeroPacing(5));
    await api.post("/api/simulator/latency", { ms: LATENCY_MS });
    const idCampaign = (
      await api.post("/api/external/create-campaign/message", { name: "Crash variações", id_segment: segment.id_segment, message: VARIATION_TEXT })
    ).id_campaign as string;
    log(`campaign ${idCampaign} created for ${VARIATION_GROUPS} groups with "${VARIATION_TEXT}"`);

    const seen = await sentReaches(api, idCampaign, 0.4 * VARIATION_GROUPS, "the kill");
    await sleep(60 + Math.floor(Math.random() * 100));
    await rig.kill();
    assert(seen.status === "sending", `the kill did not land mid-dispatch: ${JSON.stringify(seen)}`);
    const left = await leftBehind(target, idCampaign);
    log(`SIGKILL at ${left.sent}/${VARIATION_GROUPS} sent: ${left.inFlight} in flight (${left.inFlightLogged} already in the simulator's log); restarting`);
    await rig.start();

    const last = await finished(api, idCampaign, Date.now() + completionTimeoutMs);
    log(`finished: ${JSON.stringify(last)}`);
    assert(last.status === "completed", `expected status completed, got ${last.status}`);
    const messages = await expectOncePerGroup(api, idCampaign, groupIds, [rig.logFile], log);
    const names = new Map(groups.map((g) => [g.id_group, g.name]));
    const wrong = messages.filter(
      (m) => m.text !== renderForGroup(VARIATION_TEXT, m.delivery_key, { groupName: names.get(m.id_group)!, at: new Date(m.sent_at) }),
    );
    assert(wrong.length === 0, `${wrong.length} groups got another text than their delivery key's variant with their name, e.g. ${JSON.stringify(wrong[0])}`);
    const variants = new Set(messages.map((m) => m.text[0]));
    assert(variants.size === 3, `expected the three variants used, got ${[...variants].join(", ")}`);
    log(`every group its own text (${[...variants].sort().join("/")} variants, its name, the send's date)`);

    await stopServer(rig.server());
    await expectAllSent(target, idCampaign, VARIATION_GROUPS, log);
  });
}

export const tests: E2ETest[] = [
  {
    name: "SIGKILL the server three times mid-dispatch: one message per group, counters match",
    run: ({ log }) => crashTest(log),
  },
  {
    name: "two numbers in every group, one banned mid-campaign, then SIGKILL: one message per group, none through the banned number after its ban",
    run: ({ log }) => crashBanTest(log),
  },
  {
    name: "a text with variations, SIGKILL mid-dispatch: one message per group, each the variant of its delivery key with its own name",
    run: ({ log }) => crashVariationTest(log),
  },
];
