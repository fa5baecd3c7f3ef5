/**
 * info-campaign's `eta` (docs/dispatch.md#eta) against a real paced run: taken once the campaign is sending, it
 * lands within 10 % of the campaign's real end (the run's length from that moment), and is null while paused by
 * the user.
 */
import { formatInTimeZone } from "date-fns-tz";
import { describe, expect, it } from "vitest";
import { tenantWithSegment } from "../campaigns";
import { until, waitFor, type Api } from "../helpers";
import { testServerWithRunner } from "../server-with-runner";

const server = testServerWithRunner();

/** A tenant with a 20-group segment (test/campaigns.ts), paced at `rates`. */
async function pacedTenant(rates: Record<string, number>) {
  const { api, segment } = await tenantWithSegment(server.url, 20);
  expect((await api("PATCH", "/api/external/edit-settings", { dispatch_rates: rates })).status).toBe(200);
  return { api, segment };
}

const info = (api: Api, id: string) => api("GET", `/api/external/info-campaign/${id}`);

describe("info-campaign eta", () => {
  it("is within 10 % of the real end for a paced 20-group campaign", async () => {
    const { api, segment } = await pacedTenant({ min_dispatch_rate: 1, max_dispatch_rate: 1.4, dispatches_per_loop: 1 });
    const created = await api("POST", "/api/external/create-campaign/message", { name: "Ritmo", id_segment: segment, message: "Oi" });
    const id = created.json.id_campaign as string;
    // A pending campaign already has one: 19 pauses of 1.2 s from now.
    const first = await info(api, id);
    expect(first.json.eta).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-03:00$/);
    const sending = await waitFor("the campaign sending", async () => {
      const r = await info(api, id);
      return r.json.status === "sending" && r.json.groups.sent >= 1 ? r : undefined;
    });
    const readAt = Date.now();
    const eta = Date.parse(sending.json.eta);
    const done = await until(
      () => info(api, id),
      (r) => r.json.status === "completed",
      60_000,
    );
    expect(done.json.status).toBe("completed");
    // A finished campaign's eta is its end.
    const end = Date.parse(done.json.eta);
    expect(end).toBeGreaterThan(readAt);
    const length = end - readAt;
    // The answers carry whole seconds: a second of slack besides the 10 %.
    console.log(`[campaign-eta] eta ${sending.json.eta}, end ${done.json.eta}, ${length} ms after the reading`);
    expect(Math.abs(eta - end), `eta ${sending.json.eta}, end ${done.json.eta}, ${length} ms after the reading`).toBeLessThanOrEqual(0.1 * length + 1000);
  }, 90_000);

  it("is null while paused by the user, and comes back on resume", async () => {
    const { api, segment } = await pacedTenant({ min_dispatch_rate: 2, max_dispatch_rate: 2, dispatches_per_loop: 1 });
    const created = await api("POST", "/api/external/create-campaign/message", { name: "Pausa", id_segment: segment, message: "Oi" });
    const id = created.json.id_campaign as string;
    await waitFor("the campaign sending", async () => (await info(api, id)).json.status === "sending");
    expect((await api("POST", `/api/external/pause-campaign/${id}`)).status).toBe(200);
    expect((await info(api, id)).json).toMatchObject({ status: "paused", pause_reason: "user", eta: null });
    expect((await api("POST", `/api/external/resume-campaign/${id}`)).status).toBe(200);
    expect((await info(api, id)).json.eta).not.toBeNull();
    await api("POST", `/api/external/cancel-campaign/${id}`);
    expect((await info(api, id)).json.eta).toBeNull();
  });

  it("is null when no number of the campaign can send (its channel offline)", async () => {
    const { api, segment } = await pacedTenant({ min_dispatch_rate: 2, max_dispatch_rate: 2, dispatches_per_loop: 1 });
    const tomorrow = new Date(Date.now() + 86_400_000);
    const scheduledAt = formatInTimeZone(tomorrow, "America/Sao_Paulo", "dd/MM/yyyy - HH:mm");
    const created = await api("POST", "/api/external/create-campaign/message", { name: "Fora", id_segment: segment, message: "Oi", scheduled_at: scheduledAt });
    const id = created.json.id_campaign as string;
    // Scheduled: from its time, 19 pauses of 2 s.
    expect(Date.parse((await info(api, id)).json.eta) - Date.parse(created.json.scheduled_at)).toBe(38_000);
    const seg = (await api("GET", `/api/external/info-campaign/${id}`)).json;
    const idChannel = seg.channels[0].id_channel as string;
    expect((await api("POST", `/api/simulator/channels/${idChannel}/state`, { connected: false })).status).toBe(200);
    await until(
      () => info(api, id),
      (r) => r.json.eta === null,
    );
    expect((await info(api, id)).json.eta).toBeNull();
  });
});
