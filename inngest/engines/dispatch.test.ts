import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { getServices } from "../../server/services";
import { inngestEnv, restoreInngestEnvAfterEach } from "../../test/helpers";
import { startTestServer, type TestServer } from "../../test/http-server";
import { inngest } from "../client";
import { type Started as DispatchEngine, startDispatchEngine } from "../start";
import { brasiliaMinute, createCampaign, dispatchEvent, tenantWithSegment } from "../../test/campaigns";

let server: TestServer;
let engine: DispatchEngine | undefined;
restoreInngestEnvAfterEach();

beforeAll(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await engine?.stop();
  engine = undefined;
  vi.restoreAllMocks();
});
afterAll(async () => {
  await server.close();
});

it("with Inngest configured, a wake-up sends campaign/dispatch.requested and a cancel sends campaign/canceled", async () => {
  process.env.INNGEST_EVENT_KEY = "test-event-key";
  const send = vi.spyOn(inngest, "send").mockResolvedValue({ ids: ["evt"] });
  engine = startDispatchEngine(await getServices());
  expect(engine.kind).toBe("inngest");

  const { api, segment } = await tenantWithSegment(server.url, 2);
  // Scheduled for tomorrow: nothing finishes it before the cancel.
  const { id_campaign } = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 24 * 60 * 60_000)) });
  await vi.waitFor(() => expect(send).toHaveBeenCalledWith([dispatchEvent(api, id_campaign)]));

  expect((await api("POST", `/api/external/cancel-campaign/${id_campaign}`)).json.status).toBe("canceled");
  await vi.waitFor(() => expect(send).toHaveBeenCalledWith(expect.objectContaining({ name: "campaign/canceled", data: { id_campaign } })));
});

it("without Inngest, the in-process runner dispatches and nothing is sent to Inngest", async () => {
  for (const k of inngestEnv) delete process.env[k];
  const send = vi.spyOn(inngest, "send");
  engine = startDispatchEngine(await getServices());
  expect(engine.kind).toBe("in-process");

  const { api, segment } = await tenantWithSegment(server.url, 3);
  const { id_campaign } = await createCampaign(api, segment);
  await vi.waitFor(async () => expect((await api("GET", `/api/external/info-campaign/${id_campaign}`)).json.status).toBe("completed"), {
    timeout: 15_000,
    interval: 50,
  });
  expect(send).not.toHaveBeenCalled();
});

it("serves every function (dispatch, webhooks, maintenance, channel-state poll, launch engine, launch funnel, number health sweep, repeating campaigns' runs, Meta events, group actions, welcomes) at /api/inngest", async () => {
  process.env.INNGEST_DEV = "1";
  const { GET } = await import("../../app/api/inngest/route");
  const res = await GET(new Request("http://localhost:3000/api/inngest") as never, undefined);
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ function_count: 13, mode: "dev" });
});
