/**
 * `npm run bench -- moderation [pglite|postgres]`: members' messages judged by moderation (docs/moderation.md; issue 35
 * target: 1,000 inbound messages a minute, p99 under 20 ms each, a campaign sending meanwhile at ≥ 90 % of its sends/s
 * alone). In process, on the real database (PGlite in a fresh DATA_DIR, or a fresh PostgreSQL database), with the
 * dispatch engine and the group-action engine running as in the server:
 *
 *  1. a launch in `enforce` (links, banned words, a flood limit) holding 10 groups made through the simulator, 200
 *     members in them; a BENCH_MOD_GROUPS-group segment (default 3,000) of the channel's other groups; zero pacing;
 *  2. the campaign alone, BENCH_MOD_RUNS times (default 3) before the messages and as many after: sends/s from its start
 *     to its end (median of all);
 *  3. BENCH_MOD_MESSAGES messages (default 1,000) over BENCH_MOD_SECONDS (default 60), one every 60 ms whatever is in
 *     flight — 90 % clean, 5 % links, 3 % banned words, 2 % a flooder — each delivered as the platform delivers it (the
 *     provider's recorded emit, what the simulator's control and Evolution's webhook call: the service's inbound
 *     handler records and judges, deletions queued to the engine), latency from the instant it was due; meanwhile the
 *     same campaign back to back (median sends/s, from its start to its end as the campaign records them).
 *
 * BENCH_STATEMENTS=1 first counts the statements a message costs (100 clean, then 100 offences, before the engines start).
 * BENCH_DB_TRACE=1 traces the connection's turns during the messages (bench/connection-trace.ts): what the slow messages
 * waited behind, the engines' longest statements; BENCH_DB_FIFO=1 orders the turns as PGlite alone does. On PostgreSQL
 * the turns are the driver's statements (waiting for a connection, pipelined, running), and the server's side is sampled
 * too (bench/postgres-waits.ts: what its backends wait on). The event loop's delay is measured in every run, and each
 * message's lateness when it fell due.
 * Prints the figures with their targets, then one JSON line. Not a test: a missed target is reported, never a failure.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ProviderEvent } from "../server/messaging/provider";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { freshPostgresDatabase, printTable, statementLog } from "./common";
import { connectionTrace } from "./connection-trace";
import { postgresWaits } from "./postgres-waits";

const GROUPS = Number(process.env.BENCH_MOD_GROUPS ?? 3000);
const RUNS = Number(process.env.BENCH_MOD_RUNS ?? 3);
const MESSAGES = Number(process.env.BENCH_MOD_MESSAGES ?? 1000);
const SECONDS = Number(process.env.BENCH_MOD_SECONDS ?? 60);
const LAUNCH_GROUPS = 10;
const MEMBERS = 200;

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function quantile(values: number[], q: number) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}
const median = (values: number[]) => quantile(values, 0.5);

export async function benchModeration(kind: "pglite" | "postgres") {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gcs-bench-moderation-"));
  let dropDatabase: (() => Promise<void>) | undefined;
  if (kind === "postgres") dropDatabase = (await freshPostgresDatabase("gcs_bench_moderation")).drop;
  else delete process.env.DATABASE_URL;
  // PostgreSQL, traced: the server's side too (its lock waits, its own time per statement), set before the pool connects.
  const serverSide = kind === "postgres" && process.env.BENCH_DB_TRACE === "1" ? await postgresWaits(process.env.DATABASE_URL ?? "") : undefined;
  const statements = statementLog(`moderation-${kind}`);
  Object.assign(process.env, {
    ...statements.env,
    DATA_DIR: dataDir,
    MESSAGING_PROVIDER: "simulator",
    SIMULATOR_PAIRING_MS: "0",
    SIMULATOR_GROUPS_PER_CHANNEL: String(GROUPS + 20),
  });
  try {
    // Loaded after the environment is set: the modules read it when they load.
    const { eq } = await import("drizzle-orm");
    const { campaigns, groupMessages, launchGroups: lg, moderationEvents } = await import("../db/schema");
    const { getServices } = await import("../server/services");
    const { createTenant } = await import("../server/auth/create-tenant");
    const { createChannel } = await import("../server/channels/create-channel");
    const { createLaunch } = await import("../server/launches/create-launch");
    const { createLaunchInput } = await import("../server/launches/launch/schema");
    const { editLaunch } = await import("../server/launches/edit-launch");
    const { createSegment } = await import("../server/segments/create-segment");
    const { createCampaign } = await import("../server/campaigns/create-campaign");
    const { editSettings } = await import("../server/settings/edit-settings");
    const { wakeDispatch } = await import("../server/dispatch/wake");
    const { InProcessRunner } = await import("../inngest/in-process/dispatch-runner");
    const { GroupActionRunner } = await import("../inngest/in-process/group-action-runner");
    const { SimulatorProvider } = await import("../server/messaging/simulator");

    const services = await getServices();
    const { db, provider } = services;
    if (!(provider instanceof SimulatorProvider)) throw new Error("the bench runs on the simulator");
    const trace = connectionTrace(db);
    const { tenantId } = await createTenant(db, { name: "Bench", email: `b-${randomUUID()}@example.test`, password: "senha-segura-123" });
    const channel = await createChannel(db, provider, tenantId, "Bench", new Date());
    await editSettings(
      db,
      tenantId,
      {
        dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 100, min_campaign_interval: 0, max_campaign_interval: 0 },
      },
      new Date(),
    );

    // The moderated launch: 10 groups of its own, 200 members.
    const input = createLaunchInput.parse({
      name: "Bench moderation",
      id_channel: [channel.id],
      group_template: { name: "Bench #{n}", admins_only: false, admins: [] },
      capacity: 1024,
      margin: 0,
      auto_create: false,
      reserve: 0,
      initial_groups: LAUNCH_GROUPS,
    });
    const { launch } = await createLaunch(db, provider, tenantId, input, new Date());
    await editLaunch(
      db,
      tenantId,
      launch.id,
      {
        moderation: {
          mode: process.env.BENCH_MOD_MODE === "shadow" ? "shadow" : "enforce",
          block_links: true,
          allowed_domains: ["exemplo.com.br"],
          banned_words: ["grátis", "renda extra", "pix"],
          max_messages_per_minute: 20,
          strikes_to_remove: 10,
          country_codes: null,
        },
      },
      new Date(),
    );
    const launchGroups = (await provider.groupsOf(channel.id)).map((g) => g.id_group);
    const held = (await db.select({ groupId: lg.groupId }).from(lg).where(eq(lg.launchId, launch.id))).map((r) => r.groupId);
    const members = Array.from({ length: MEMBERS }, (_, i) => `5511${String(970000000 + i)}`);
    for (const [i, g] of held.entries())
      await provider.joinParticipants(
        channel.id,
        g,
        members.filter((_, j) => j % LAUNCH_GROUPS === i),
      );

    // BENCH_STATEMENTS=1: the statements a message costs, counted before the engines start (nothing else runs), the
    // messages paced as in the stream so the launch's cached lookup is read as often: clean ones, then offences.
    const statementsPer = async (label: string, n: number, text: (i: number) => string) => {
      await sleep(1500); // the counts are written once a second: the set-up's must be in before the mark
      statements.mark();
      for (let i = 0; i < n; i++) {
        const from = members[(i * 7) % MEMBERS];
        const group = held[members.indexOf(from) % LAUNCH_GROUPS];
        const started = performance.now();
        await (provider as unknown as { events: { emitRecorded(e: ProviderEvent): Promise<void> } }).events.emitRecorded({
          type: "group_message",
          channelId: channel.id,
          groupId: group,
          messageId: `COUNT-${label}-${i}`,
          sender: from,
          text: text(i),
          at: new Date(),
        });
        await sleep(Math.max(0, 60 - (performance.now() - started)));
      }
      const counted = await statements.since();
      if (!counted) return null;
      console.log(`[statements] ${label}: ${counted.total} statements for ${n} messages: ${round(counted.total / n, 2)} per message`);
      printTable([["per message", "statement"], ...counted.all.map(([t, c]) => [round(c / n, 2), t.slice(0, 160)])]);
      return round(counted.total / n, 2);
    };
    const statementsClean = await statementsPer("clean", 100, (i) => `Bom dia! Dúvida ${i} https://aulas.exemplo.com.br/${i}`);
    const statementsOffence = await statementsPer("offence", 100, (i) => `olha isso https://renda-c${i}.xyz/oferta`);

    const dispatch = new InProcessRunner(services, { maxSleepMs: 50 }).start();
    const actions = new GroupActionRunner(services, { intervalMs: 200 }).start();

    // The campaign's segment: the channel's derived groups, not the launch's.
    const segmentGroups = launchGroups.filter((g) => !held.includes(g)).slice(0, GROUPS);
    const segment = await createSegment(db, provider, tenantId, { name: "Bench", id_channel: [channel.id], groups: segmentGroups }, new Date());

    const runCampaign = async (name: string) => {
      const started = Date.now();
      const id = `campaign_${randomUUID()}`;
      await createCampaign(
        db,
        tenantId,
        { id, name, segmentId: segment.id, messageType: "text", content: { message: "Bench" }, mentionAll: false },
        new Date(),
      );
      wakeDispatch();
      for (;;) {
        const [row] = await db
          .select({ status: campaigns.status, sent: campaigns.sent, startedAt: campaigns.startedAt, finishedAt: campaigns.finishedAt })
          .from(campaigns)
          .where(eq(campaigns.id, id));
        if (row.status === "completed" || row.status === "failed") {
          const from = row.startedAt?.getTime() ?? started;
          return round(row.sent / (((row.finishedAt?.getTime() ?? Date.now()) - from) / 1000));
        }
        await sleep(20);
      }
    };

    await runCampaign("warm-up");
    const alone: number[] = [];
    for (let i = 0; i < RUNS; i++) alone.push(await runCampaign(`alone ${i}`));
    console.log(`[bench] ${kind}: campaign alone, sends/s: ${alone.join(", ")}`);

    // The message stream, paced (open loop), with the campaign back to back meanwhile.
    const texts = (i: number): { from: string; text: string } => {
      const from = members[i % MEMBERS];
      const r = i % 100;
      if (r < 5) return { from, text: `olha isso https://renda-${i}.xyz/oferta` };
      if (r < 8) return { from, text: `Curso GRÁTIS ${i}` };
      if (r < 10) return { from: members[0], text: `flood ${i}` };
      return { from, text: `Bom dia, pessoal! Dúvida sobre a aula ${i}, veja https://aulas.exemplo.com.br/${i}` };
    };
    const intervalMs = (SECONDS * 1000) / MESSAGES;
    // The platform's delivery, as the simulator's control and Evolution's webhook make it: the provider's recorded emit.
    const bus = provider as unknown as { events: { emitRecorded(e: ProviderEvent): Promise<void> } };
    const latencies: number[] = [];
    const latencyOf = new Map<number, number>();
    const lateness = new Map<number, number>();
    let failures = 0;
    // How late the Node thread ran what was due (PGlite runs on it: a long statement holds every timer).
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    trace.start();
    serverSide?.start();
    const streamStart = performance.now();
    const inFlight: Promise<void>[] = [];
    let streaming = true;
    const stream = (async () => {
      for (let i = 0; i < MESSAGES; i++) {
        const due = streamStart + i * intervalMs;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        const { from, text } = texts(i);
        const group = held[members.indexOf(from) % LAUNCH_GROUPS];
        lateness.set(i, performance.now() - due);
        const event = { type: "group_message" as const, channelId: channel.id, groupId: group, messageId: `BENCH${i}`, sender: from, text, at: new Date() };
        inFlight.push(
          trace
            .within(i, () => bus.events.emitRecorded(event))
            .then(() => {
              latencies.push(performance.now() - due);
              latencyOf.set(i, performance.now() - due);
            })
            .catch(() => {
              failures++;
            }),
        );
      }
      await Promise.all(inFlight);
      streaming = false;
    })();
    const together: number[] = [];
    while (streaming && process.env.BENCH_MOD_NO_CAMPAIGN !== "1") {
      const sps = await runCampaign(`with messages ${together.length}`);
      // Only campaigns that ran wholly within the stream count.
      if (streaming) together.push(sps);
    }
    await stream;
    const streamSeconds = (performance.now() - streamStart) / 1000;
    trace.stop();
    const waits = await serverSide?.stop();
    loopDelay.disable();
    const traced = trace.report(latencyOf, 20, lateness);
    // Alone again after the stream: the first runs come right after the set-up (a colder process), so both sides count.
    await sleep(3000);
    for (let i = 0; i < RUNS; i++) alone.push(await runCampaign(`alone after ${i}`));
    console.log(`[bench] ${kind}: campaign alone (before, then after the messages), sends/s: ${alone.join(", ")}`);
    console.log(`[bench] ${kind}: campaign with messages, sends/s: ${together.join(", ")}`);
    const judged = (await db.select({ id: groupMessages.id }).from(groupMessages)).length;
    const decisions = (await db.select({ id: moderationEvents.id }).from(moderationEvents).where(eq(moderationEvents.launchId, launch.id))).length;
    await actions.stop();
    await dispatch.stop();

    const figures = {
      db: kind,
      messages: MESSAGES,
      messages_per_minute: round((MESSAGES / streamSeconds) * 60, 0),
      message_p50_ms: round(quantile(latencies, 0.5)),
      message_p99_ms: round(quantile(latencies, 0.99)),
      message_max_ms: round(Math.max(...latencies)),
      message_failures: failures,
      messages_judged: judged,
      decisions,
      campaign_groups: segmentGroups.length,
      sends_per_second_alone: median(alone),
      sends_per_second_with_messages: median(together),
      campaigns_with_messages: together.length,
      sends_ratio: round(median(together) / median(alone), 3),
      event_loop_delay_p99_ms: round(loopDelay.percentile(99) / 1e6),
      event_loop_delay_max_ms: round(loopDelay.max / 1e6),
      ...(trace.fifo ? { connection_order: "fifo" } : {}),
      ...traced,
      ...waits,
      ...(statementsClean === null ? {} : { statements_clean_message: statementsClean, statements_offence: statementsOffence }),
    };
    const targets: Record<string, string> = { message_p99_ms: "< 20", sends_ratio: ">= 0.9" };
    for (const [k, v] of Object.entries(figures)) console.log(`[bench] ${kind}: ${k} = ${v}${targets[k] ? ` (target ${targets[k]})` : ""}`);
    console.log(`[bench] load average (1 min): ${round(os.loadavg()[0], 2)}: figures drop sharply when other work shares the CPUs`);
    console.log(JSON.stringify({ bench: "moderation", ...figures }));
    return figures;
  } finally {
    await dropDatabase?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
