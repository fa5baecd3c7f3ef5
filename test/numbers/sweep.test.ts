import { InngestTestEngine } from "@inngest/test";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { campaigns, channels } from "../../db/schema";
import { inngestFunctionOf } from "../../inngest/functions/periodic-job";
import { functions } from "../../inngest/served";
import { JobTimer } from "../../inngest/in-process/job-timer";
import { numberHealthSweepJob } from "../../inngest/jobs/number-health-sweep";
import { markCapped, recordRateLimited } from "../../server/numbers/health";
import { sweepNumberHealth } from "../../server/numbers/sweep-health";
import { getServices } from "../../server/services";
import { createCampaign } from "../campaigns";
import { newTenant, waitFor, type Api } from "../helpers";
import { withServerAndReceiver, withWebhookRunner } from "../webhooks/fixtures";
import { webhookHeadersOf } from "../webhooks/receiver";

// The number health sweep (docs/numbers.md#the-health-sweep): ended cool-downs and caps back to ok/warming, warm-up
// days over, each with its channel_status; the tenant's campaigns paused for their channels made due.
const fx = withServerAndReceiver();
withWebhookRunner("100,200,300,300,300,300,300,300");

const day = 86_400_000;
beforeEach(() => {
  process.env.NUMBER_COOLING_BASE_MS = "400";
});
afterEach(() => {
  delete process.env.NUMBER_COOLING_BASE_MS;
});

const channel = async (t: Api) => (await t("POST", "/api/external/create-channel", { name: "Canal" })).json.id_channel as string;
const info = async (t: Api, id: string) => (await t("GET", `/api/external/info-channel/${id}`)).json;

describe("the health sweep", () => {
  it("a cooling number is back to ok once its cool-down ends (embedded runner), with its channel_status; its paused campaigns are due again", async () => {
    const { db } = await getServices();
    const t = await newTenant(fx.server.url);
    const path = `/sweep-${t.tenantId}`;
    await t("PATCH", "/api/external/edit-webhooks", { channel_status_url: `${fx.receiver.url}${path}` });
    const secret = (await t("GET", "/api/external/list-webhooks")).json.webhooks.signing_secret as string;
    const a = await channel(t);
    const groups = (await t("GET", `/api/external/list-groups/${a}`)).json.groups.slice(0, 2).map((g: { id_group: string }) => g.id_group);
    const segment = (await t("POST", "/api/external/create-segment", { name: "S", id_channel: [a], groups })).json.id_segment;
    // A campaign paused for its number's limits, looking again in an hour (no dispatch engine runs in this file).
    const { id_campaign } = await createCampaign(t, segment);
    await db
      .update(campaigns)
      .set({ status: "paused", pauseReason: "channel_limits", nextRunAt: new Date(Date.now() + 3_600_000) })
      .where(eq(campaigns.id, id_campaign));

    const until = await recordRateLimited(db, a, new Date());
    expect((await info(t, a)).health).toMatchObject({ state: "cooling", reason: "rate-overlimit", until: until?.toISOString() });
    const runner = new JobTimer(numberHealthSweepJob, await getServices(), { intervalMs: 100 }).start();
    try {
      const back = await waitFor("the number back to ok", async () => {
        const i = await info(t, a);
        return i.health.state === "ok" && i;
      });
      expect(back.health).toMatchObject({ reason: null, until: null });
      expect(Date.parse(back.health.since)).toBeGreaterThanOrEqual(until?.getTime() ?? 0);
    } finally {
      await runner.stop();
    }
    const events = await waitFor("three channel_status events", () => {
      const got = fx.receiver.received
        .filter((r) => r.path === path)
        .map((r) => new Webhook(secret).verify(r.body, webhookHeadersOf(r.headers)) as { data: { status: string; health: { state: string } } });
      return got.length >= 3 && got;
    });
    expect(events.map((e) => e.data.health.state)).toEqual(["ok", "cooling", "ok"]);
    const [c] = await db.select().from(campaigns).where(eq(campaigns.id, id_campaign));
    expect(c.nextRunAt?.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it("capped until 00:00 Brasília (or until its cap is raised); warming → ok after the warm-up days, ok → warming when a warm-up is turned on", async () => {
    const { db } = await getServices();
    const t = await newTenant(fx.server.url);
    const now = new Date();
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Sao_Paulo" }).format(now);
    // 5 sent today of a cap of 5.
    const spent = async (id: string) =>
      db
        .update(channels)
        .set({ usageDay: today, sentToday: 5, limits: { daily_message_cap: 5 } })
        .where(eq(channels.id, id));
    const a = await channel(t);
    await spent(a);
    const capped = await markCapped(db, a, now);
    const midnight = capped?.healthUntil as Date;
    await sweepNumberHealth(db, new Date(midnight.getTime() - 1));
    expect((await info(t, a)).health.state).toBe("capped");
    await sweepNumberHealth(db, midnight);
    expect((await info(t, a)).health).toMatchObject({ state: "ok", until: null });

    // Capped at 5 sent today, then the channel's cap is raised to 10: it may send again at once.
    const b = await channel(t);
    await spent(b);
    await markCapped(db, b, now);
    await sweepNumberHealth(db, now);
    expect((await info(t, b)).health).toMatchObject({ state: "capped", sent_today: 5, daily_cap: 5 });
    await t("PUT", `/api/external/edit-channel/${b}`, { name: "B", limits: { daily_message_cap: 10 } });
    await sweepNumberHealth(db, now);
    expect((await info(t, b)).health).toMatchObject({ state: "ok", daily_cap: 10 });

    // A warm-up of 2 days turned on: a number paired today warms up; on day 3 it is ok.
    await t("PATCH", "/api/external/edit-settings", { number_health: { warmup_days: 2, warmup_first_day_cap: 20 } });
    await sweepNumberHealth(db, now);
    expect((await info(t, b)).health).toMatchObject({ state: "warming", warmup_day: 1, daily_cap: 10 });
    await sweepNumberHealth(db, new Date(now.getTime() + 2 * day));
    const [row] = await db.select().from(channels).where(eq(channels.id, b));
    expect(row.healthState).toBe("ok");
  });
});

describe("number-health-sweep (Inngest cron function)", () => {
  it("is served every minute and runs the same sweep", async () => {
    expect(functions.map((f) => f.id())).toContain("number-health-sweep");
    const { db } = await getServices();
    const t = await newTenant(fx.server.url);
    const a = await channel(t);
    const until = (await recordRateLimited(db, a, new Date())) as Date;
    const engine = new InngestTestEngine({ function: inngestFunctionOf(numberHealthSweepJob, { clock: () => new Date(until.getTime() + 1) }) });
    const { result } = await engine.execute();
    expect(result).toMatchObject({ changed: expect.any(Number), woken: 0, requested: 0 });
    expect((await info(t, a)).health.state).toBe("ok");
  });
});
