import { randomUUID } from "node:crypto";
import { InngestTestEngine } from "@inngest/test";
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { getDb } from "../../db/client";
import { idempotencyKeys, simulatorMessages } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { getServices } from "../../server/services";
import { inngestEnv, restoreInngestEnvAfterEach } from "../../test/helpers";
import { functions } from "../served";
import { JobTimer } from "../in-process/job-timer";
import { startJob } from "../start";
import { inngestFunctionOf } from "../functions/periodic-job";
import { maintenanceJob } from "./maintenance";

const day = 86_400_000;
// The job runs "in 2001": only the rows dated 2000 are old to it; rows written now are in its future.
const jobNow = new Date("2001-01-01T00:00:00Z");

describe("maintenance (Inngest cron function)", () => {
  let t: InngestTestEngine;
  beforeEach(() => {
    t = new InngestTestEngine({ function: inngestFunctionOf(maintenanceJob, { clock: () => jobNow }) });
  });

  it("is served, hourly", () => {
    const maintenance = functions.find((f) => f.id() === "maintenance");
    expect(maintenance).toBeDefined();
    expect(JSON.stringify(maintenance?.opts ?? {})).toContain("0 * * * *");
  });

  it("runs the retention job and answers the counts per table, logging one line", async () => {
    const db = await getDb();
    const { tenantId } = await createTenant(db, { name: "Cron", email: `c-${randomUUID()}@example.test`, password: "senha-segura-123" });
    const channelId = `channel_${randomUUID()}`;
    await db.insert(simulatorMessages).values([
      { deliveryKey: `${channelId}:old`, messageId: "SIM1", channelId, groupId: "1@g.us", messageType: "text", sentAt: new Date(jobNow.getTime() - 8 * day) },
      { deliveryKey: `${channelId}:young`, messageId: "SIM2", channelId, groupId: "1@g.us", messageType: "text", sentAt: new Date(jobNow.getTime() - day) },
    ]);
    const at = new Date(jobNow.getTime() - 2 * day);
    await db
      .insert(idempotencyKeys)
      .values({ tenantId, key: "old", fingerprint: "f", state: "done", responseStatus: 200, responseBody: "{}", lockedUntil: at, createdAt: at });
    const log = vi.spyOn(console, "log");
    try {
      const { result } = await t.execute();
      expect(result).toMatchObject({ simulatorMessages: 1, idempotencyKeys: 1 });
      expect(log.mock.calls.filter(([line]) => String(line).startsWith("[maintenance] retention:"))).toHaveLength(1);
    } finally {
      log.mockRestore();
    }
    const left = await db.select({ key: simulatorMessages.deliveryKey }).from(simulatorMessages).where(eq(simulatorMessages.channelId, channelId));
    expect(left.map((m) => m.key)).toEqual([`${channelId}:young`]);
    expect(await db.select().from(idempotencyKeys).where(eq(idempotencyKeys.tenantId, tenantId))).toHaveLength(0);
  });
});

describe("the embedded maintenance runner", () => {
  restoreInngestEnvAfterEach();
  afterEach(() => vi.useRealTimers());

  it("runs first shortly after start, then every interval, and stops", async () => {
    const runs: Date[] = [];
    const runner = new JobTimer({ ...maintenanceJob, run: async ({ now }) => void runs.push(now) }, await getServices(), {
      firstRunMs: 30,
      intervalMs: 60,
    }).start();
    await vi.waitFor(() => expect(runs.length).toBeGreaterThanOrEqual(3), { timeout: 5000, interval: 10 });
    await runner.stop();
    const stoppedAt = runs.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(runs.length).toBe(stoppedAt);
  });

  it("defaults to a minute after start, then hourly", async () => {
    vi.useFakeTimers();
    const runs: number[] = [];
    const runner = new JobTimer({ ...maintenanceJob, run: async () => void runs.push(Date.now()) }, await getServices()).start();
    await vi.advanceTimersByTimeAsync(59_000);
    expect(runs).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(3_600_000 - 1);
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toHaveLength(2);
    await runner.stop();
  });

  it("is this process's job without Inngest, Inngest's cron's with it", async () => {
    for (const k of inngestEnv) delete process.env[k];
    const embedded = startJob(maintenanceJob, await getServices());
    expect(embedded.kind).toBe("in-process");
    // Stopped before its first run (a minute away).
    await embedded.stop();
    process.env.INNGEST_EVENT_KEY = "test-event-key";
    const viaInngest = startJob(maintenanceJob, await getServices());
    expect(viaInngest.kind).toBe("inngest");
    await viaInngest.stop();
  });
});
