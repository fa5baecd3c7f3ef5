/**
 * Every payload the service builds parses with its event type's schema (server/webhooks/events.ts), no field
 * more or less: the SQL-built campaign events and the literal ones alike, from real flows (a campaign run to
 * completion, a channel's status and health changing, a launch's groups), and test-webhook's samples as the
 * receiver gets them.
 */
import { asc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { outboxEvents } from "../../db/schema";
import { launchFunnelJob } from "../../inngest/jobs/launch-funnel";
import { JobTimer } from "../../inngest/in-process/job-timer";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { getServices } from "../../server/services";
import { eventBody, eventTypes, type EventType } from "../../server/webhooks/events";
import { createCampaign, tenantWithSegment } from "../campaigns";
import { restPollMs, waitFor, type Api } from "../helpers";
import { withServerAndReceiver } from "./fixtures";

const fx = withServerAndReceiver();

interface Payload {
  type: EventType;
  timestamp: string;
  data: Record<string, any>;
}

/** Parses `payload` with its type's schema and expects nothing added, dropped or changed. */
function expectValid(payload: Payload) {
  const parsed = eventBody(payload.type).safeParse(payload);
  expect(parsed.error?.issues, JSON.stringify(payload)).toBeUndefined();
  expect(parsed.data, JSON.stringify(payload)).toEqual(payload);
}

async function outbox(tenantId: string) {
  const db = await getDb();
  const rows = await db.select().from(outboxEvents).where(eq(outboxEvents.tenantId, tenantId)).orderBy(asc(outboxEvents.id));
  return rows.map((r) => r.payload as Payload);
}

const ofType = (events: Payload[], type: EventType) => events.filter((e) => e.type === type).map((e) => e.data);

async function runCampaign(api: Api, segment: string) {
  const dispatch = new InProcessRunner(await getServices()).start();
  try {
    const { id_campaign } = await createCampaign(api, segment);
    await waitFor(
      "campaign completed",
      async () => (await api("GET", `/api/external/info-campaign/${id_campaign}`)).json.status === "completed",
      30_000,
      restPollMs,
    );
    return id_campaign;
  } finally {
    await dispatch.stop();
  }
}

async function runLaunch(api: Api, channel: string) {
  const res = await api("POST", "/api/external/create-launch", {
    name: "Turma 9",
    id_channel: [channel],
    group_template: { name: "Turma 9 #{n}", admins_only: false, admins: ["5511900000001"] },
    capacity: 3,
    margin: 0,
    auto_create: false,
    initial_groups: 1,
  });
  expect(res.status, res.text).toBe(201);
  const { id_launch, slug } = res.json as { id_launch: string; slug: string };
  const [group] = (await api("GET", `/api/external/info-launch/${id_launch}`)).json.groups as { invite_url: string }[];
  // The channel's number and the template's admin are in; one more fills it (group_full).
  const code = group.invite_url.split("/").at(-1);
  expect((await api("POST", `/api/simulator/invites/${code}/join`, { participant: "5511999990001" })).status).toBe(200);
  // Every group full and none can be made: the join link is broken (link_broken all_groups_full).
  const visit = await fetch(`${fx.server.url}/g/${slug}`, { redirect: "manual", headers: { "user-agent": "Mozilla/5.0 (iPhone)" } });
  expect(visit.status).toBe(200);
  // The launches' periodic pass reports the joins (members_changed).
  await new JobTimer(launchFunnelJob, await getServices(), { intervalMs: 60_000 }).runOnce();
  return id_launch;
}

async function changeChannel(api: Api, channel: string) {
  for (const state of [{ connected: false }, { connected: true }, { health: "restricted" }]) {
    expect((await api("POST", `/api/simulator/channels/${channel}/state`, state)).status).toBe(200);
  }
}

describe("the payloads the service builds", () => {
  it("a campaign to completion, a launch's groups and a channel's status and health: every outbox event parses with its schema", async () => {
    const { api, segment, channel } = await tenantWithSegment(fx.server.url, 4, 2);
    const id_campaign = await runCampaign(api, segment);
    const id_launch = await runLaunch(api, channel);
    await changeChannel(api, channel);
    const events = await waitFor("four channel_status events (the pairing and three changes)", async () => {
      const all = await outbox(api.tenantId);
      return ofType(all, "channel_status").length >= 4 && all;
    });

    for (const e of events) expectValid(e);

    // The flows made every type and every group_activity event (the parse above covered each).
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(eventTypes));
    const statuses = ofType(events, "campaign_status").filter((d) => d.id_campaign === id_campaign);
    expect(statuses.map((d) => d.status)).toEqual(["pending", "sending", "completed"]);
    expect(ofType(events, "campaign_progress").some((d) => d.id_campaign === id_campaign && d.groups.pending === 0)).toBe(true);
    const activity = ofType(events, "group_activity").filter((d) => d.id_launch === id_launch);
    expect([...new Set(activity.map((d) => d.event))].sort()).toEqual(["group_created", "group_full", "link_broken", "members_changed"]);
    const channelEvents = ofType(events, "channel_status").filter((d) => d.id_channel === channel);
    expect(channelEvents.map((d) => [d.previous_status, d.status, d.health.state])).toEqual([
      ["connecting", "connected", "ok"],
      ["connected", "disconnected", "ok"],
      ["disconnected", "connected", "ok"],
      ["connected", "disconnected", "restricted"],
    ]);
  });

  it("test-webhook's sample of each type, as the receiver gets it, parses with the type's schema", async () => {
    const { api } = await tenantWithSegment(fx.server.url, 1);
    const path = `/samples-${api.tenantId}`;
    const urls = Object.fromEntries(eventTypes.map((t) => [`${t}_url`, `${fx.receiver.url}${path}/${t}`]));
    expect((await api("PATCH", "/api/external/edit-webhooks", urls)).status).toBe(200);
    for (const type of eventTypes) expect((await api("POST", `/api/external/test-webhook/${type}`)).json.status).toBe(200);
    const bodies = fx.receiver.received.filter((r) => r.path.startsWith(path)).map((r) => JSON.parse(r.body) as Payload & { test: true });
    expect(bodies.map((b) => b.type)).toEqual([...eventTypes]);
    for (const b of bodies) {
      expect(b.test).toBe(true);
      expectValid(b);
    }
  });
});
