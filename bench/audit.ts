/**
 * `npm run bench -- audit [pglite|postgres]`: what the audit log costs (docs/team.md#audit-log; issue 36's targets).
 * In process, on the real database (PGlite in a fresh DATA_DIR, or a fresh PostgreSQL database from BENCH_PG_URL /
 * DATABASE_URL):
 *
 *  - a mutation with and without its audit entry: BENCH_AUDIT_EDITS (default 9,000) edit-segment renames, a third
 *    without the entry, a third with it riding in the edit's own UPDATE as a CTE (`editSegment` given `auditWrite`),
 *    a third with it as a statement of its own in the edit's transaction (what the other audited changes do),
 *    interleaved in blocks of three in rotating order, after 200 not counted; their p50/p99, each p99's difference
 *    from the edits without (target < 0.5 ms) with a bootstrap 95 % interval, the same difference between two halves
 *    of the edits without (the statistic's noise floor), this process's CPU per edit, and the separate statement timed
 *    inside the transaction. Then the same edit through the tRPC caller (the router always writes it);
 *  - the send loop: a campaign over BENCH_AUDIT_GROUPS (default 1,000) groups, zero pacing, sent to the end by the
 *    in-process dispatch runner; its sends/s and the audit entries it left (the service writes one for the start and
 *    one for the end, in the transitions' own statements: none per message, so nothing is added to a loop).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { freshPostgresDatabase } from "./common";

// 3,000 of each: a p99 is the 30th worst, steadier than the 10th of 1,000 on a shared machine.
const EDITS = Number(process.env.BENCH_AUDIT_EDITS ?? 9000);
const WARMUP_BLOCKS = 67;
const GROUPS = Number(process.env.BENCH_AUDIT_GROUPS ?? 1000);

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] * 1000) / 1000;
};

const diff = (a: number[], b: number[], q: number) => Math.round((quantile(a, q) - quantile(b, q)) * 1000) / 1000;

/** A 95 % interval of a difference of two quantiles: both samples redrawn with replacement (seeded, reproducible). */
function bootstrap(a: number[], b: number[], q: number, rounds = 400): [number, number] {
  // mulberry32: 32-bit integer arithmetic (a product of doubles past 2^53 would lose the low bits and cycle).
  let seed = 42;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const redraw = (xs: number[]) => xs.map(() => xs[Math.floor(random() * xs.length)]);
  const diffs = Array.from({ length: rounds }, () => quantile(redraw(a), q) - quantile(redraw(b), q)).sort((x, y) => x - y);
  const at = (p: number) => Math.round(diffs[Math.floor(p * (rounds - 1))] * 1000) / 1000;
  return [at(0.025), at(0.975)];
}

export async function benchAudit(kind: "pglite" | "postgres") {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gcs-bench-audit-"));
  let dropDatabase: (() => Promise<void>) | undefined;
  if (kind === "postgres") {
    dropDatabase = (await freshPostgresDatabase("gcs_bench_audit")).drop;
  } else {
    delete process.env.DATABASE_URL;
  }
  Object.assign(process.env, { DATA_DIR: dataDir, MESSAGING_PROVIDER: "simulator", SIMULATOR_PAIRING_MS: "0", SIMULATOR_GROUPS_PER_CHANNEL: String(GROUPS) });
  try {
    // Loaded after the environment is set: the modules read it when they load.
    const { getServices } = await import("../server/services");
    const { createTenant } = await import("../server/auth/create-tenant");
    const { createCallerFactory } = await import("../server/trpc");
    const { appRouter } = await import("../server/root");
    const { editSegment } = await import("../server/segments/edit-segment");
    const { auditWrite } = await import("../server/audit/audited");
    type AuditWrite = import("../server/audit/audited").AuditWrite;
    const { InProcessRunner } = await import("../inngest/in-process/dispatch-runner");
    const { auditLog } = await import("../db/schema");
    const { eq, and } = await import("drizzle-orm");

    const services = await getServices();
    const { db, provider } = services;
    const { tenantId } = await createTenant(db, { name: "Bench", email: `b-${randomUUID()}@example.test`, password: "senha-segura-123" });
    const caller = { kind: "apiKey" as const, tenantId, apiKeyId: "bench", apiKeyPrefix: "gcs_bench" };
    const api = () => createCallerFactory(appRouter)({ db, provider, caller, now: new Date(), clientIp: "127.0.0.1" });
    await api().settings.edit({
      dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 100, min_campaign_interval: 0, max_campaign_interval: 0 },
    });
    const channel = await api().channels.create({ name: "Bench" });
    const listed = await api().channels.groups({ id_channel: channel.id_channel });
    const groups = listed.groups.map((g) => g.id_group);
    const segment = await api().segments.create({ name: "Bench", id_channel: [channel.id_channel], groups });

    // A mutation without its audit entry, with it riding in the edit's statement (a CTE: what editSegment does given
    // `auditWrite`), and with it as a statement of its own (pipelined with the COMMIT on PostgreSQL, awaited on
    // PGlite: what every other audited change does). Interleaved in blocks of three whose order runs through all six
    // permutations, so the machine's load and a position's bias fall on each alike.
    const ctx = { caller, clientIp: "127.0.0.1", now: new Date(), tenantId };
    const arms = ["without", "cte", "separate"] as const;
    const wall = { without: [] as number[], cte: [] as number[], separate: [] as number[] };
    // This process's CPU time per edit (PGlite's work included, PostgreSQL's server not): what the wall time's p99
    // shows on an idle machine, much less moved by the other processes of a shared one.
    const cpu = { without: [] as number[], cte: [] as number[], separate: [] as number[] };
    // The separate statement timed inside the transaction: on PostgreSQL only its building and sending (its answer
    // comes with the COMMIT's, withCommit in db/client.ts).
    const ownWrite: number[] = [];
    const write = auditWrite(ctx, "segment.edit");
    const separateWrite: AuditWrite = async (tx, target) => {
      const started = performance.now();
      await write(tx, target);
      ownWrite.push(performance.now() - started);
    };
    const audits = { without: undefined, cte: write, separate: separateWrite };
    const permutations = [
      [0, 1, 2],
      [1, 2, 0],
      [2, 0, 1],
      [0, 2, 1],
      [2, 1, 0],
      [1, 0, 2],
    ];
    const blocks = WARMUP_BLOCKS + Math.ceil(EDITS / 3);
    for (let b = 0; b < blocks; b++) {
      for (const a of permutations[b % 6]) {
        const arm = arms[a];
        const cpuAt = process.cpuUsage();
        const started = performance.now();
        await editSegment(db, provider, tenantId, segment.id_segment, { name: `Bench ${b} ${a}` }, new Date(), audits[arm]);
        const ms = performance.now() - started;
        const cpuUsed = process.cpuUsage(cpuAt);
        if (b >= WARMUP_BLOCKS) {
          wall[arm].push(ms);
          cpu[arm].push((cpuUsed.user + cpuUsed.system) / 1000);
        }
      }
    }
    // The noise floor of a difference of two p99s: the edits without the entry split in two halves (alternate blocks),
    // the same edit, so any difference between their p99s is the sampling's.
    const halfA = wall.without.filter((_, i) => i % 2 === 0);
    const halfB = wall.without.filter((_, i) => i % 2 === 1);
    const throughCaller: number[] = [];
    for (let i = 0; i < Math.min(EDITS / 2, 1000); i++) {
      const started = performance.now();
      await api().segments.edit({ id_segment: segment.id_segment, name: `Caller ${i}` });
      throughCaller.push(performance.now() - started);
    }

    // The send loop: one campaign to the end; the service's entries it left.
    const runner = new InProcessRunner(services, { maxSleepMs: 50 }).start();
    const started = performance.now();
    const campaign = await api().campaigns.createMessage({ name: "Bench", id_segment: segment.id_segment, message: "Olá!", mention_all: false });
    let status = "pending";
    while (status !== "completed" && status !== "failed") {
      await new Promise((r) => setTimeout(r, 20));
      status = (await api().campaigns.info({ id_campaign: campaign.id_campaign })).status;
    }
    const seconds = (performance.now() - started) / 1000;
    await runner.stop();
    // The simulator's read receipts come 100 ms after the sends: let them land before the database is dropped.
    await new Promise((r) => setTimeout(r, 1500));
    const entries = await db
      .select({ action: auditLog.action })
      .from(auditLog)
      .where(and(eq(auditLog.tenantId, tenantId), eq(auditLog.target, campaign.id_campaign)));

    const figures = {
      db: kind,
      load_average_1m: Math.round(os.loadavg()[0] * 10) / 10,
      cores: os.cpus().length,
      edits_each: wall.without.length,
      edit_without_audit_p50_p99_ms: [quantile(wall.without, 0.5), quantile(wall.without, 0.99)],
      edit_with_cte_p50_p99_ms: [quantile(wall.cte, 0.5), quantile(wall.cte, 0.99)],
      edit_with_separate_p50_p99_ms: [quantile(wall.separate, 0.5), quantile(wall.separate, 0.99)],
      audit_adds_p50_ms: diff(wall.cte, wall.without, 0.5),
      audit_adds_p99_ms: diff(wall.cte, wall.without, 0.99),
      audit_adds_p99_ci95_ms: bootstrap(wall.cte, wall.without, 0.99),
      separate_adds_p50_ms: diff(wall.separate, wall.without, 0.5),
      separate_adds_p99_ms: diff(wall.separate, wall.without, 0.99),
      separate_adds_p99_ci95_ms: bootstrap(wall.separate, wall.without, 0.99),
      noise_floor_p99_ms: diff(halfA, halfB, 0.99),
      audit_adds_cpu_p50_ms: diff(cpu.cte, cpu.without, 0.5),
      audit_adds_cpu_p99_ms: diff(cpu.cte, cpu.without, 0.99),
      separate_adds_cpu_p50_ms: diff(cpu.separate, cpu.without, 0.5),
      separate_adds_cpu_p99_ms: diff(cpu.separate, cpu.without, 0.99),
      edit_cpu_without_p50_p99_ms: [quantile(cpu.without, 0.5), quantile(cpu.without, 0.99)],
      separate_statement_p50_ms: quantile(ownWrite.slice(WARMUP_BLOCKS), 0.5),
      separate_statement_p99_ms: quantile(ownWrite.slice(WARMUP_BLOCKS), 0.99),
      edit_through_trpc_p50_ms: quantile(throughCaller, 0.5),
      edit_through_trpc_p99_ms: quantile(throughCaller, 0.99),
      campaign_groups: groups.length,
      campaign_status: status,
      sends_per_second: Math.round(groups.length / seconds),
      campaign_audit_entries: entries.map((e) => e.action).sort(),
    };
    console.log(
      `[bench] audit write adds ${figures.audit_adds_p99_ms} ms at p99 (target < 0.5; 95 % interval ${figures.audit_adds_p99_ci95_ms.join(" to ")}), ` +
        `${figures.audit_adds_p50_ms} ms at p50, riding in the edit's statement; as a statement of its own ${figures.separate_adds_p99_ms} ms at p99 ` +
        `(${figures.separate_adds_p99_ci95_ms.join(" to ")}), ${figures.separate_adds_p50_ms} at p50; two halves of the same edit differ by ` +
        `${figures.noise_floor_p99_ms} ms at p99; this process's CPU: adds ${figures.audit_adds_cpu_p99_ms} / ${figures.separate_adds_cpu_p99_ms} ms at p99 ` +
        `(CTE / own statement); load average ${figures.load_average_1m} on ${figures.cores} cores`,
    );
    console.log(`[bench] send loop: ${figures.sends_per_second} sends/s; the campaign's audit entries: ${figures.campaign_audit_entries.join(", ")}`);
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    await dropDatabase?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
