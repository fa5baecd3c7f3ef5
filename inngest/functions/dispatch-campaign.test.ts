import { InngestTestEngine } from "@inngest/test";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { campaigns } from "../../db/schema";
import { startTestServer, type TestServer } from "../../test/http-server";
import { brasiliaMinute, createCampaign, dispatchEvent, tenantWithSegment } from "../../test/campaigns";
import { dispatchCampaign } from "./dispatch-campaign";

let server: TestServer;
let t: InngestTestEngine;

// Sleeps are mocked by step id (an unmocked sleep never returns under @inngest/test). Any wait past
// the first few would be a pacing or lease ("busy") wait; answer them at once too.
const instantSleeps = (from = 1) => Array.from({ length: 200 }, (_, i) => ({ id: `wait-${from + i}`, handler: () => null }));

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  // A fresh engine per test: a shared one would carry memoized step results over.
  t = new InngestTestEngine({ function: dispatchCampaign });
});
afterEach(() => {
  delete process.env.DISPATCH_STEPS_PER_RUN;
});

async function expectSentOncePerGroup(api: Awaited<ReturnType<typeof tenantWithSegment>>["api"], id: string, groups: string[]) {
  const log = await api("GET", `/api/simulator/messages?id_campaign=${id}`);
  const sentTo = log.json.messages.map((m: { id_group: string }) => m.id_group);
  expect(sentTo.sort()).toEqual([...groups].sort());
  const info = await api("GET", `/api/external/info-campaign/${id}`);
  expect(info.json).toMatchObject({ status: "completed", groups: { total: groups.length, sent: groups.length, pending: 0, failed: 0 } });
}

describe("dispatch-campaign (Inngest function)", () => {
  it("registers one run per campaign at a time, canceled by campaign/canceled for the same campaign", () => {
    // getConfig is what the serve handler registers with Inngest (internal API, as @inngest/test uses).
    const [config] = (dispatchCampaign as unknown as { getConfig(o: object): object[] }).getConfig({
      baseUrl: new URL("http://localhost:3000/api/inngest"),
      appPrefix: "group-campaigns",
    });
    expect(config).toMatchObject({
      triggers: [{ event: "campaign/dispatch.requested" }],
      concurrency: [{ key: "event.data.id_campaign", limit: 1 }],
      cancel: [{ event: "campaign/canceled", if: "async.data.id_campaign == event.data.id_campaign" }],
    });
  });

  it("runs a campaign to completion, one message per group, every step.run executing the domain step", async () => {
    const { api, segment, groups } = await tenantWithSegment(server.url, 12, 5);
    const { id_campaign } = await createCampaign(api, segment);

    const { result, ctx } = await t.execute({ events: [dispatchEvent(api, id_campaign)], steps: instantSleeps() });

    expect(result).toMatchObject({ id_campaign, status: "completed" });
    const stepIds = ctx.step.run.mock.calls.map((c) => c[0]);
    expect(stepIds).toEqual(Array.from({ length: stepIds.length }, (_, i) => `step-${i + 1}`));
    // 12 groups at 5 per loop: three sending steps and the one that finishes the campaign.
    expect(stepIds).toHaveLength(4);
    expect(ctx.step.sendEvent).not.toHaveBeenCalled();
    await expectSentOncePerGroup(api, id_campaign, groups);
  });

  it("sleeps until the scheduled instant, then sends", async () => {
    const { api, segment, groups } = await tenantWithSegment(server.url, 3, 5);
    const at = new Date(Date.now() + 2 * 24 * 60 * 60_000);
    const { id_campaign, scheduled_at } = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(at) });
    const scheduledAt = new Date(scheduled_at!);

    // The sleep "passes" by moving the schedule into the past, as the clock would.
    const timeTravel = async () => {
      const db = await getDb();
      const past = new Date(Date.now() - 1000);
      await db.update(campaigns).set({ scheduledAt: past, nextRunAt: past }).where(eq(campaigns.id, id_campaign));
      return null;
    };
    const { result, ctx } = await t.execute({
      events: [dispatchEvent(api, id_campaign)],
      steps: [{ id: "wait-1", handler: timeTravel }, ...instantSleeps(2)],
    });

    expect(ctx.step.sleepUntil.mock.calls[0]).toEqual(["wait-1", scheduledAt]);
    expect(result).toMatchObject({ id_campaign, status: "completed" });
    await expectSentOncePerGroup(api, id_campaign, groups);
  });

  it("continues in a new run when the step budget is spent, and the new run finishes the job", async () => {
    process.env.DISPATCH_STEPS_PER_RUN = "3";
    const { api, segment, groups } = await tenantWithSegment(server.url, 12, 1);
    const { id_campaign } = await createCampaign(api, segment);
    const event = dispatchEvent(api, id_campaign);

    const first = await t.execute({ events: [event], steps: [...instantSleeps(), { id: "continue", handler: () => ({ ids: ["evt"] }) }] });

    expect(first.result).toMatchObject({ id_campaign, continued: true, steps: 3 });
    expect(first.ctx.step.sendEvent).toHaveBeenCalledWith("continue", event);
    // Its three steps sent three groups.
    expect((await api("GET", `/api/external/info-campaign/${id_campaign}`)).json.groups.sent).toBe(3);

    // The continuation event starts a fresh run (fresh step state) that picks up where the first stopped.
    delete process.env.DISPATCH_STEPS_PER_RUN;
    const next = new InngestTestEngine({ function: dispatchCampaign });
    const second = await next.execute({ events: [event], steps: instantSleeps() });
    expect(second.result).toMatchObject({ id_campaign, status: "completed" });
    await expectSentOncePerGroup(api, id_campaign, groups);
  });

  it("fails over inside the domain step: a number banned before the run, its groups go through the other number that reaches them", async () => {
    const { api, segment, groups, channel: a } = await tenantWithSegment(server.url, 6, 2);
    const b = (await api("POST", "/api/external/create-channel", { name: "Outro" })).json.id_channel as string;
    const phone = (await api("GET", `/api/external/info-channel/${b}`)).json.phone as string;
    for (const g of groups) await api("POST", `/api/simulator/groups/${encodeURIComponent(g)}/participants`, { join: [phone] });
    const both = (await api("POST", "/api/external/create-segment", { name: "Dois", id_channel: [a, b], groups })).json.id_segment as string;
    expect(segment).not.toBe(both);
    const { id_campaign } = await createCampaign(api, both);
    // Spread over both at creation; then the platform bans B.
    expect((await api("GET", `/api/external/info-campaign/${id_campaign}`)).json.channels.map((c: { id_channel: string }) => c.id_channel)).toEqual([a, b]);
    expect((await api("POST", `/api/simulator/channels/${b}/state`, { health: "banned" })).status).toBe(200);

    const { result } = await t.execute({ events: [dispatchEvent(api, id_campaign)], steps: instantSleeps() });

    expect(result).toMatchObject({ id_campaign, status: "completed" });
    await expectSentOncePerGroup(api, id_campaign, groups);
    const log = (await api("GET", `/api/simulator/messages?id_campaign=${id_campaign}`)).json.messages as { id_channel: string }[];
    expect(log.every((m) => m.id_channel === a)).toBe(true);
    expect((await api("GET", `/api/external/info-campaign/${id_campaign}`)).json.channels).toEqual([
      { id_channel: a, sent: 6, pending: 0, failed: 0 },
      { id_channel: b, sent: 0, pending: 0, failed: 0 },
    ]);
  });

  it("ends the run when nothing can happen until an external event (a paused campaign)", async () => {
    const { api, segment } = await tenantWithSegment(server.url, 2, 5);
    // Scheduled, then paused: never due.
    const { id_campaign } = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 24 * 60 * 60_000)) });
    expect((await api("POST", `/api/external/pause-campaign/${id_campaign}`)).json.status).toBe("paused");

    const { result, ctx } = await t.execute({ events: [dispatchEvent(api, id_campaign)], steps: instantSleeps() });

    expect(result).toMatchObject({ id_campaign, status: "paused", steps: 1 });
    expect(ctx.step.sleepUntil).not.toHaveBeenCalled();
  });
});
