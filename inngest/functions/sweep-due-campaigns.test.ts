import { InngestTestEngine } from "@inngest/test";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../test/http-server";
import { brasiliaMinute, createCampaign, dispatchEvent, tenantWithSegment } from "../../test/campaigns";
import { createSweepDueCampaigns } from "./sweep-due-campaigns";

let server: TestServer;
let t: InngestTestEngine;
let sweepAt = new Date();
const hour = 60 * 60_000;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  // The sweep runs "hours from now", so campaigns scheduled an hour ahead are overdue to it while no
  // real runner would touch them yet.
  t = new InngestTestEngine({ function: createSweepDueCampaigns({ clock: () => sweepAt }) });
});

it("requests a dispatch run for every overdue campaign, with its tenant, and none for the others", async () => {
  const { api, segment } = await tenantWithSegment(server.url, 2);
  const overdue = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + hour)) });
  const justDue = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 2 * hour)) });
  const later = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 24 * hour)) });
  sweepAt = new Date(new Date(justDue.scheduled_at!).getTime() + 30_000);

  const { result, ctx } = await t.execute({ steps: [{ id: "request-dispatch", handler: () => ({ ids: [] }) }] });

  expect(ctx.step.sendEvent).toHaveBeenCalledTimes(1);
  const [id, events] = ctx.step.sendEvent.mock.calls[0] as [string, { name: string; data: { id_campaign: string } }[]];
  expect(id).toBe("request-dispatch");
  expect(events).toContainEqual(dispatchEvent(api, overdue.id_campaign));
  const requested = events.map((e) => e.data.id_campaign);
  // Due less than a minute ago: a live run is about to take it. Due tomorrow: not yet.
  expect(requested).not.toContain(justDue.id_campaign);
  expect(requested).not.toContain(later.id_campaign);
  expect(result).toMatchObject({ requested: events.length });
});
