/**
 * CONTRACT §7 through HTTP: a number the platform limits to 5 sends a minute (simulator `rate_limit_per_minute`,
 * answered as WhatsApp's rate-overlimit). The minute is scaled down to `windowMs`, the simulator's window and the
 * number's first cool-down alike (SIMULATOR_RATE_WINDOW_MS, NUMBER_COOLING_BASE_MS), so the run keeps its shape in
 * seconds: 5 groups go at once, the 6th send is refused and the number cools for one window (the campaign pauses as
 * channel_limits, its other groups untouched), then the next 5 go.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveries } from "../../db/schema";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { getServices } from "../../server/services";
import { newTenant, until, zeroPacing } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

/** The platform's minute and the cool-down, scaled: long enough to see the number cooling and the campaign paused. */
const windowMs = 10_000;
let server: TestServer;
let dispatch: InProcessRunner;

beforeAll(async () => {
  process.env.SIMULATOR_RATE_WINDOW_MS = String(windowMs);
  process.env.NUMBER_COOLING_BASE_MS = String(windowMs);
  server = await startTestServer();
  dispatch = new InProcessRunner(await getServices(), { maxSleepMs: 50 }).start();
});
afterAll(async () => {
  await dispatch?.stop();
  await server?.close();
  delete process.env.SIMULATOR_RATE_WINDOW_MS;
  delete process.env.NUMBER_COOLING_BASE_MS;
});

describe("a number limited by the platform", () => {
  it("5 sends a window: it ends cooling, no group fails, every group once and never more than 5 in any window", { timeout: 180_000 }, async () => {
    const t = await newTenant(server.url);
    expect((await t("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
    const channel = (await t("POST", "/api/external/create-channel", { name: "Limitado" })).json.id_channel as string;
    const groups = ((await t("GET", `/api/external/list-groups/${channel}`)).json.groups as { id_group: string }[]).slice(0, 10).map((g) => g.id_group);
    const segment = (await t("POST", "/api/external/create-segment", { name: "Seg", id_channel: [channel], groups })).json.id_segment;
    expect((await t("POST", `/api/simulator/channels/${channel}/state`, { rate_limit_per_minute: 5 })).json).toMatchObject({ rate_limit_per_minute: 5 });

    const id = (await t("POST", "/api/external/create-campaign/message", { name: "Limite", id_segment: segment, message: "Oferta" })).json.id_campaign;
    // The platform refuses the 6th: the number cools, the campaign waits for it (nothing else can send).
    const cooling = await until(
      () => t("GET", `/api/external/info-channel/${channel}`),
      (r) => r.json.health.state === "cooling",
    );
    expect(cooling.json.health).toMatchObject({ state: "cooling", reason: expect.stringContaining("rate") });
    const until1 = new Date(cooling.json.health.until).getTime();
    expect(until1 - new Date(cooling.json.health.since).getTime()).toBe(windowMs);
    const paused = await until(
      () => t("GET", `/api/external/info-campaign/${id}`),
      (r) => r.json.status === "paused",
    );
    expect(paused.json).toMatchObject({ pause_reason: "channel_limits", groups: { sent: 5, pending: 5, failed: 0 } });

    const done = await until(
      () => t("GET", `/api/external/info-campaign/${id}`),
      (r) => r.json.status === "completed",
      120_000,
    );
    expect(done.json).toMatchObject({ status: "completed", groups: { total: 10, sent: 10, pending: 0, failed: 0 } });
    const log = (await t("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages as { id_group: string; sent_at: string }[];
    expect(log.map((m) => m.id_group).sort()).toEqual([...groups].sort());
    const times = log.map((m) => new Date(m.sent_at).getTime()).sort((a, b) => a - b);
    for (const at of times) expect(times.filter((x) => x >= at && x < at + windowMs).length).toBeLessThanOrEqual(5);
    // The second five went after the cool-down, not before.
    expect(times[5]).toBeGreaterThanOrEqual(until1);
    // No group lost an attempt to the refusals: each was sent on its first counted attempt.
    const rows = await (await getServices()).db.select({ attempts: deliveries.attempts }).from(deliveries).where(eq(deliveries.campaignId, id));
    expect(rows.map((d) => d.attempts)).toEqual(rows.map(() => 1));
  });
});
