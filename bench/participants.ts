/**
 * `npm run bench -- participants [pglite|postgres]`: how many participant events (a join or a leave of
 * one person, as a gateway's `group-participants.update` brings them) the launches' intake records per
 * second (docs/launches.md; issue target 1,000/s). In process, on the real database (PGlite in a fresh
 * DATA_DIR, or a fresh PostgreSQL database from BENCH_PG_URL / DATABASE_URL): a launch with 10 groups made
 * through the simulator, then BENCH_PARTICIPANT_EVENTS events (default 5,000: 90 % joins, 10 % leaves of
 * earlier joiners) recorded by `recordParticipants` — the function the provider's events reach — with
 * BENCH_PARTICIPANT_CONCURRENCY (default 16) at once, as concurrent webhook requests would (a gateway
 * sending 1,000 events a second, each answered in 10–20 ms, has 10–20 requests in flight). Afterwards
 * the launch's counters must equal the events.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freshPostgresDatabase } from "./common";

const EVENTS = Number(process.env.BENCH_PARTICIPANT_EVENTS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_PARTICIPANT_CONCURRENCY ?? 16);
const GROUPS = 10;

export async function benchParticipants(kind: "pglite" | "postgres") {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gcs-bench-participants-"));
  let dropDatabase: (() => Promise<void>) | undefined;
  if (kind === "postgres") {
    dropDatabase = (await freshPostgresDatabase("gcs_bench_participants")).drop;
  } else {
    delete process.env.DATABASE_URL;
  }
  Object.assign(process.env, { DATA_DIR: dataDir, MESSAGING_PROVIDER: "simulator", SIMULATOR_PAIRING_MS: "0" });
  try {
    // Loaded after the environment is set: the modules read it when they load.
    const { getServices } = await import("../server/services");
    const { createTenant } = await import("../server/auth/create-tenant");
    const { createChannel } = await import("../server/channels/create-channel");
    const { createLaunch } = await import("../server/launches/create-launch");
    const { createLaunchInput } = await import("../server/launches/launch/schema");
    const { infoLaunch } = await import("../server/launches/info-launch");
    const { recordParticipants } = await import("../server/groups/members/record-participants");
    const { mapLimit } = await import("../server/map-limit");

    const { db, provider } = await getServices();
    const { tenantId } = await createTenant(db, { name: "Bench", email: `b-${randomUUID()}@example.test`, password: "senha-segura-123" });
    const channel = await createChannel(db, provider, tenantId, "Bench", new Date());
    const input = createLaunchInput.parse({
      name: "Bench participants",
      id_channel: [channel.id],
      group_template: { name: "Bench #{n}", admins_only: false, admins: ["5511900000001"] },
      capacity: 1024,
      margin: 0,
      auto_create: false,
      reserve: 0,
      initial_groups: GROUPS,
    });
    const { launch } = await createLaunch(db, provider, tenantId, input, new Date());
    const before = await infoLaunch(db, tenantId, launch.id);
    const groupIds = before.groups.map((g) => g.id_group);

    // 90 % joins of new people, 10 % leaves of people who joined earlier.
    const events: { groupId: string; action: "join" | "leave"; participant: string }[] = [];
    const joined: { groupId: string; participant: string }[] = [];
    for (let i = 0; i < EVENTS; i++) {
      // The oldest joiner leaves: long recorded by then (events run CONCURRENCY at once, and a leave
      // handled before its join would be a person we never saw join).
      if (i % 10 === 9 && joined.length > 0) {
        const j = joined.splice(0, 1)[0];
        events.push({ ...j, action: "leave" });
      } else {
        const j = { groupId: groupIds[i % groupIds.length], participant: `5511${String(800000000 + i)}` };
        joined.push(j);
        events.push({ ...j, action: "join" });
      }
    }
    const started = performance.now();
    const latencies: number[] = [];
    await mapLimit(events, CONCURRENCY, async (e) => {
      const t = performance.now();
      await recordParticipants(db, provider, { channelId: channel.id, groupId: e.groupId, action: e.action, participants: [e.participant], at: new Date() });
      latencies.push(performance.now() - t);
    });
    const seconds = (performance.now() - started) / 1000;
    const after = await infoLaunch(db, tenantId, launch.id);
    const joins = events.filter((e) => e.action === "join").length;
    const leaves = events.length - joins;
    const totals = after.totals;
    const beforeMembers = before.totals.members;
    latencies.sort((a, b) => a - b);
    const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] * 10) / 10;
    const figures = {
      db: kind,
      events: events.length,
      concurrency: CONCURRENCY,
      events_per_second: Math.round(events.length / seconds),
      event_p50_ms: q(0.5),
      event_p99_ms: q(0.99),
      joins_recorded: totals.joins,
      leaves_recorded: totals.leaves,
      members_expected: beforeMembers + joins - leaves,
      members_recorded: totals.members,
    };
    console.log(JSON.stringify(figures));
    if (totals.joins !== joins || totals.leaves !== leaves || totals.members !== figures.members_expected) {
      throw new Error(`the counters do not match the events: ${JSON.stringify(figures)}`);
    }
    return figures;
  } finally {
    await dropDatabase?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
