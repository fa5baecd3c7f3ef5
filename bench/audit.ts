/**
 * `npm run bench -- audit [pglite|postgres]`: what the audit log costs (docs/team.md#audit-log; issue 36's targets).
 * In process, on the real database (PGlite in a fresh DATA_DIR, or a fresh PostgreSQL database from BENCH_PG_URL /
 * DATABASE_URL):
 *
 *  - a mutation with and without its audit entry: BENCH_AUDIT_EDITS (default 6,000) edit-segment renames, alternating
 *    one without the entry and one with it written in the edit's transaction (`editSegment` given `auditWrite` or
 *    not: the same statements otherwise), after 200 of each not counted; their p50/p99 and the p99's difference
 *    (target < 0.5 ms), and the entry's own statement timed inside the transaction (its p50/p99, apart from the
 *    rest's noise on a loaded machine). Then the same edit through the tRPC caller (the router always writes it);
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
const EDITS = Number(process.env.BENCH_AUDIT_EDITS ?? 6000);
const WARMUP = 200;
const GROUPS = Number(process.env.BENCH_AUDIT_GROUPS ?? 1000);

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] * 1000) / 1000;
};

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

    // A mutation with and without its audit entry, alternating so the machine's load falls on both alike.
    const ctx = { caller, clientIp: "127.0.0.1", now: new Date(), tenantId };
    const without: number[] = [];
    const withEntry: number[] = [];
    // This process's CPU time per edit (PGlite's work included, PostgreSQL's server not): what the wall time's p99
    // shows on an idle machine, much less moved by the other processes of a shared one.
    const cpuWithout: number[] = [];
    const cpuWith: number[] = [];
    // The entry's own statement, timed inside the transaction: what the write adds, apart from the rest's noise. On
    // PostgreSQL only its building and sending: its answer comes with the COMMIT's (withCommit, db/client.ts).
    const ownWrite: number[] = [];
    const write = auditWrite(ctx, "segment.edit");
    const timedWrite: typeof write = async (tx, target) => {
      const started = performance.now();
      await write(tx, target);
      ownWrite.push(performance.now() - started);
    };
    for (let i = 0; i < WARMUP + EDITS; i++) {
      const audited = i % 2 === 1;
      const cpu = process.cpuUsage();
      const started = performance.now();
      await editSegment(db, provider, tenantId, segment.id_segment, { name: `Bench ${i}` }, new Date(), audited ? timedWrite : undefined);
      const ms = performance.now() - started;
      const cpuUsed = process.cpuUsage(cpu);
      if (i >= WARMUP) {
        (audited ? withEntry : without).push(ms);
        (audited ? cpuWith : cpuWithout).push((cpuUsed.user + cpuUsed.system) / 1000);
      }
    }
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
      edits_each: without.length,
      edit_without_audit_p50_ms: quantile(without, 0.5),
      edit_without_audit_p99_ms: quantile(without, 0.99),
      edit_with_audit_p50_ms: quantile(withEntry, 0.5),
      edit_with_audit_p99_ms: quantile(withEntry, 0.99),
      audit_adds_p50_ms: Math.round((quantile(withEntry, 0.5) - quantile(without, 0.5)) * 1000) / 1000,
      audit_adds_p99_ms: Math.round((quantile(withEntry, 0.99) - quantile(without, 0.99)) * 1000) / 1000,
      audit_adds_cpu_p50_ms: Math.round((quantile(cpuWith, 0.5) - quantile(cpuWithout, 0.5)) * 1000) / 1000,
      audit_adds_cpu_p99_ms: Math.round((quantile(cpuWith, 0.99) - quantile(cpuWithout, 0.99)) * 1000) / 1000,
      edit_cpu_without_p50_p99_ms: [quantile(cpuWithout, 0.5), quantile(cpuWithout, 0.99)],
      edit_cpu_with_p50_p99_ms: [quantile(cpuWith, 0.5), quantile(cpuWith, 0.99)],
      audit_statement_p50_ms: quantile(ownWrite.slice(WARMUP / 2), 0.5),
      audit_statement_p99_ms: quantile(ownWrite.slice(WARMUP / 2), 0.99),
      edit_through_trpc_p50_ms: quantile(throughCaller, 0.5),
      edit_through_trpc_p99_ms: quantile(throughCaller, 0.99),
      campaign_groups: groups.length,
      campaign_status: status,
      sends_per_second: Math.round(groups.length / seconds),
      campaign_audit_entries: entries.map((e) => e.action).sort(),
    };
    console.log(
      `[bench] audit write adds ${figures.audit_adds_p99_ms} ms at p99 (target < 0.5), ${figures.audit_adds_p50_ms} ms at p50; ` +
        `its statement alone ${figures.audit_statement_p50_ms} / ${figures.audit_statement_p99_ms} ms (p50 / p99); ` +
        `this process's CPU: adds ${figures.audit_adds_cpu_p99_ms} ms at p99, ${figures.audit_adds_cpu_p50_ms} at p50; ` +
        `load average ${figures.load_average_1m} on ${figures.cores} cores`,
    );
    console.log(`[bench] send loop: ${figures.sends_per_second} sends/s; the campaign's audit entries: ${figures.campaign_audit_entries.join(", ")}`);
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    await dropDatabase?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
