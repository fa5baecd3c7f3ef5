import { formatInTimeZone } from "date-fns-tz/formatInTimeZone";
import { afterAll, beforeAll, expect } from "vitest";
import { InProcessRunner } from "../inngest/in-process/dispatch-runner";
import { getServices } from "../server/services";
import { newTenant, zeroPacingWith, type Api } from "./helpers";
import { startTestServer, type TestServer } from "./http-server";

/** Test fixtures for the engine tests: a tenant (new, or `existing`) with a paced (or unpaced) setting and a segment of N groups. */
export async function tenantWithSegment(baseUrl: string, groupCount: number, dispatchesPerLoop = 5, existing?: Api) {
  const api = existing ?? (await newTenant(baseUrl));
  const settings = await api("PATCH", "/api/external/edit-settings", zeroPacingWith(dispatchesPerLoop));
  expect(settings.status).toBe(200);
  const { json: ch } = await api("POST", "/api/external/create-channel", { name: "Canal" });
  const groups: string[] = (await api("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups
    .slice(0, groupCount)
    .map((g: { id_group: string }) => g.id_group);
  const { json: seg } = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [ch.id_channel], groups });
  expect(seg.id_segment).toBeTruthy();
  return { api, segment: seg.id_segment as string, groups, channel: ch.id_channel as string };
}

export async function createCampaign(api: Api, segment: string, extra: Record<string, unknown> = {}) {
  const res = await api("POST", "/api/external/create-campaign/message", { name: "Oferta", id_segment: segment, message: "Olá!", ...extra });
  expect(res.status).toBe(201);
  return res.json as { id_campaign: string; scheduled_at: string | null };
}

/** scheduled_at as the API takes it: DD/MM/YYYY - HH:mm in Brasília time. */
export const brasiliaMinute = (at: Date) => formatInTimeZone(at, "America/Sao_Paulo", "dd/MM/yyyy - HH:mm");

export const dispatchEvent = (api: Api, id: string) => ({
  name: "campaign/dispatch.requested",
  data: { id_campaign: id, tenant_id: api.tenantId },
});

/** A test server and the embedded dispatch runner for a file's tests: started before them, stopped after. */
export function serverWithRunner(setUp?: (server: TestServer) => void) {
  const rig = {} as { server: TestServer; runner: InProcessRunner };
  beforeAll(async () => {
    rig.server = await startTestServer();
    setUp?.(rig.server);
    rig.runner = new InProcessRunner(await getServices(), { maxSleepMs: 50 }).start();
  });
  afterAll(async () => {
    await rig.runner.stop();
    await rig.server.close();
  });
  return rig;
}
