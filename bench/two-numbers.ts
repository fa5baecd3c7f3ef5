/**
 * `npm run bench -- two-numbers [pglite|postgres]`: a campaign over groups reached by two numbers against the same
 * campaign over one number (issue 33: "no slower"; CONTRACT §7). In process, on the real database (PGlite in a fresh
 * DATA_DIR, or a fresh PostgreSQL database from BENCH_PG_URL / DATABASE_URL), simulator at 0 ms, zero pacing,
 * dispatches_per_loop 100, number health on (a daily cap every send is counted against, far above the run):
 *
 *  - one number: a segment of BENCH_TWO_NUMBERS_GROUPS (default 2,000) groups of number A;
 *  - two numbers: the same groups, number B joined and promoted in each (both admins), a segment over A and B:
 *    the fan-out spreads the groups over both;
 *  - after one campaign of each not counted (warm-up), BENCH_TWO_NUMBERS_RUNS (default 3) campaigns of each, alternating (one, two, one, two, …) so the machine's load
 *    falls on both alike; sends/s of each (create request to `completed`), their medians and the ratio two / one;
 *  - exactly once: every run's simulator log holds one message per group, none twice;
 *  - statements per message of each run (the statement counter, db/client.ts) and this process's CPU ms per message
 *    (on PGlite the database runs in this process too): figures a loaded machine moves far less than sends/s.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { root } from "../e2e/server-process";
import { freshPostgresDatabase, printTable, quantile, round, statementLog } from "./common";

const GROUPS = Number(process.env.BENCH_TWO_NUMBERS_GROUPS ?? 2000);
const RUNS = Number(process.env.BENCH_TWO_NUMBERS_RUNS ?? 3);

export async function benchTwoNumbers(kind: "pglite" | "postgres") {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gcs-bench-two-numbers-"));
  let dropDatabase: (() => Promise<void>) | undefined;
  if (kind === "postgres") {
    dropDatabase = (await freshPostgresDatabase("gcs_bench_two_numbers")).drop;
  } else {
    delete process.env.DATABASE_URL;
  }
  process.env.BENCH_STATEMENTS ??= "1";
  const statements = statementLog(`two-numbers-${kind}`);
  Object.assign(process.env, {
    DATA_DIR: dataDir,
    MESSAGING_PROVIDER: "simulator",
    SIMULATOR_PAIRING_MS: "0",
    SIMULATOR_GROUPS_PER_CHANNEL: String(GROUPS),
    ...statements.env,
  });
  try {
    // Loaded after the environment is set: the modules read it when they load.
    const { getServices } = await import("../server/services");
    const { createTenant } = await import("../server/auth/create-tenant");
    const { createCallerFactory } = await import("../server/trpc");
    const { appRouter } = await import("../server/root");
    const { InProcessRunner } = await import("../inngest/in-process/dispatch-runner");
    const { simulatedOwnNumber } = await import("../server/messaging/simulator");
    type Simulator = import("../server/messaging/simulator").SimulatorProvider;

    const services = await getServices();
    const { db } = services;
    const provider = services.provider as Simulator;
    const { tenantId } = await createTenant(db, { name: "Bench", email: `b-${randomUUID()}@example.test`, password: "senha-segura-123" });
    const caller = { kind: "apiKey" as const, tenantId, apiKeyId: "bench", apiKeyPrefix: "gcs_bench" };
    const api = () => createCallerFactory(appRouter)({ db, provider, caller, now: new Date(), clientIp: "127.0.0.1" });
    await api().settings.edit({
      dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 100, min_campaign_interval: 0, max_campaign_interval: 0 },
      // Health on: every send is counted against a cap (far above the bench's sends), as a tenant with budgets runs.
      number_health: { daily_message_cap: 100_000, warmup_days: 0, min_send_gap_seconds: 0 },
    });
    const a = await api().channels.create({ name: "Número A" });
    const b = await api().channels.create({ name: "Número B" });
    const groups = (await api().channels.groups({ id_channel: a.id_channel })).groups.map((g) => g.id_group);
    // B joins each of A's groups and is promoted: both numbers reach every group (launch teams' practice, §7).
    const phoneB = simulatedOwnNumber(b.id_channel);
    for (const g of groups) {
      const joined = await provider.joinParticipants(a.id_channel, g, [phoneB]);
      if (joined.kind !== "joined") throw new Error(`B could not join ${g}: ${joined.kind}`);
      await provider.promoteMembers(a.id_channel, g, [phoneB]);
    }
    const one = await api().segments.create({ name: "Um número", id_channel: [a.id_channel], groups });
    const two = await api().segments.create({ name: "Dois números", id_channel: [a.id_channel, b.id_channel], groups });

    const runner = new InProcessRunner(services, { maxSleepMs: 50 }).start();
    const runs: {
      numbers: 1 | 2;
      sends_per_second: number;
      create_ms: number;
      after_create_sends_per_second: number;
      statements_per_message: number | null;
      cpu_ms_per_message: number;
      per_channel: Record<string, number>;
    }[] = [];
    try {
      // One campaign of each first, not counted (the first campaigns of a process ran at a quarter of the later ones' pace).
      for (let i = -2; i < RUNS * 2; i++) {
        const numbers = (i + 2) % 2 === 0 ? 1 : 2;
        // The counts reach their file once a second: let the last run's (and the setup's) land before the mark.
        await new Promise((r) => setTimeout(r, 1500));
        statements.mark();
        const cpu0 = process.cpuUsage();
        const started = performance.now();
        const campaign = await api().campaigns.createMessage({
          name: `Bench ${i}`,
          id_segment: (numbers === 1 ? one : two).id_segment,
          message: `Aula hoje às 20h (${i})`,
          mention_all: false,
        });
        const createMs = performance.now() - started;
        let status = "pending";
        while (status !== "completed" && status !== "failed") {
          await new Promise((r) => setTimeout(r, 20));
          status = (await api().campaigns.info({ id_campaign: campaign.id_campaign })).status;
        }
        const seconds = (performance.now() - started) / 1000;
        const sendSeconds = seconds - createMs / 1000;
        const cpu = process.cpuUsage(cpu0);
        if (status !== "completed") throw new Error(`campaign ${i} ended ${status}`);
        const counted = await statements.since();
        // Exactly once: one message per group in the platform's log, none twice.
        const log = await provider.messages({ channelIds: [a.id_channel, b.id_channel], campaignId: campaign.id_campaign });
        const perGroup = new Map<string, number>();
        const perChannel: Record<string, number> = {};
        for (const m of log) {
          perGroup.set(m.groupId, (perGroup.get(m.groupId) ?? 0) + 1);
          const who = m.channelId === a.id_channel ? "A" : "B";
          perChannel[who] = (perChannel[who] ?? 0) + 1;
        }
        const twice = [...perGroup].filter(([, n]) => n > 1).length;
        if (perGroup.size !== groups.length || twice > 0)
          throw new Error(`exactly once broken (${numbers} numbers): ${perGroup.size} of ${groups.length} groups reached, ${twice} twice`);
        if (i < 0) continue;
        runs.push({
          numbers,
          sends_per_second: Math.round(groups.length / seconds),
          create_ms: round(createMs, 0),
          after_create_sends_per_second: Math.round(groups.length / sendSeconds),
          statements_per_message: counted ? round(counted.total / groups.length, 2) : null,
          cpu_ms_per_message: round((cpu.user + cpu.system) / 1000 / groups.length, 3),
          per_channel: perChannel,
        });
        console.log(
          `[bench] run ${i + 1}: ${numbers} number(s), ${runs.at(-1)!.sends_per_second} sends/s (create ${runs.at(-1)!.create_ms} ms, then ${runs.at(-1)!.after_create_sends_per_second}/s), ${JSON.stringify(perChannel)}, ${counted ? `${runs.at(-1)!.statements_per_message} statements/message` : ""}, ${runs.at(-1)!.cpu_ms_per_message} CPU ms/message`,
        );
        // BENCH_TWO_NUMBERS_TOP=1: each run's statements by text, the most frequent printed, all of them in a file to compare.
        if (counted && process.env.BENCH_TWO_NUMBERS_TOP)
          writeFileSync(path.join(root, ".test-data", `bench-two-numbers-${kind}-run${i + 1}-${numbers}.json`), JSON.stringify(counted.all, null, 1));
        if (counted && process.env.BENCH_TWO_NUMBERS_TOP) printTable([["count", "statement"], ...counted.top.map(([text, n]) => [n, text.slice(0, 150)])]);
      }
    } finally {
      await runner.stop();
    }
    // The simulator's read receipts come 100 ms after the sends: let them land before the database is dropped.
    await new Promise((r) => setTimeout(r, 1500));
    const of = (n: 1 | 2) => runs.filter((r) => r.numbers === n);
    const med = (values: number[]) => quantile(values, 0.5);
    const oneSends = med(of(1).map((r) => r.sends_per_second));
    const twoSends = med(of(2).map((r) => r.sends_per_second));
    const figures = {
      bench: "two-numbers",
      db: kind,
      groups: groups.length,
      runs: RUNS,
      load_avg: round(os.loadavg()[0], 2),
      one_number_sends_per_second: oneSends,
      two_numbers_sends_per_second: twoSends,
      ratio_two_over_one: round(twoSends / oneSends, 2),
      one_number_create_ms: med(of(1).map((r) => r.create_ms)),
      two_numbers_create_ms: med(of(2).map((r) => r.create_ms)),
      one_number_after_create_sends_per_second: med(of(1).map((r) => r.after_create_sends_per_second)),
      two_numbers_after_create_sends_per_second: med(of(2).map((r) => r.after_create_sends_per_second)),
      one_number_statements_per_message: med(of(1).map((r) => r.statements_per_message ?? Number.NaN)),
      two_numbers_statements_per_message: med(of(2).map((r) => r.statements_per_message ?? Number.NaN)),
      one_number_cpu_ms_per_message: med(of(1).map((r) => r.cpu_ms_per_message)),
      two_numbers_cpu_ms_per_message: med(of(2).map((r) => r.cpu_ms_per_message)),
      exactly_once: true,
      each_run: runs,
    };
    console.log(
      `[bench] ${kind}, ${groups.length} groups, median of ${RUNS}: one number ${oneSends} sends/s, two numbers ${twoSends} sends/s ` +
        `(ratio ${figures.ratio_two_over_one}, target >= 1); create ${figures.one_number_create_ms} vs ${figures.two_numbers_create_ms} ms, ` +
        `sends/s after it ${figures.one_number_after_create_sends_per_second} vs ${figures.two_numbers_after_create_sends_per_second}; statements/message ${figures.one_number_statements_per_message} vs ` +
        `${figures.two_numbers_statements_per_message}; this process's CPU ms/message ${figures.one_number_cpu_ms_per_message} vs ` +
        `${figures.two_numbers_cpu_ms_per_message}; exactly once in every run`,
    );
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    await dropDatabase?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
