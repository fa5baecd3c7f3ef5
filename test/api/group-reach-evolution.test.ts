/**
 * Reach is what the platform says (CONTRACT §7 "One group, several channels"; docs/launches.md#several-numbers,
 * docs/evolution.md#who-is-in-a-group), against the fake gateway answering as Evolution does: a number WhatsApp
 * refused to add to a launch's new group does not reach it (shown in info-launch's `unreached`, its deliveries go
 * through the other number) and is added again by the launch pass with backoff, never in a loop; a send refused
 * because the number is no longer in the group moves to the other number, once, and is not retried as transient.
 * And whose number is whose (issue 32; docs/evolution.md#what-a-tenant-sees-of-the-gateway-and-whose-number-is-whose):
 * a number the service does not hold is asked of the gateway, and a gateway that ignores fetchInstances' filter gives
 * no number for an instance it lost, never the list's first (another tenant's), which a launch would add to its group.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { channels } from "../../db/schema";
import { runLaunchEngine } from "../../server/launches/launch/launch-engine";
import { appRouter } from "../../server/root";
import { createCallerFactory } from "../../server/trpc";
import type { Services } from "../../server/services";
import { createCampaign } from "../campaigns";
import { startEvolutionWithRunner } from "../evolution-service";
import type { FakeEvolution } from "../fake-evolution";
import { newTenant, until, type Api } from "../helpers";
import type { TestServer } from "../http-server";

let fake: FakeEvolution;
let api: Api;
let server: TestServer;
let services: Services;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ fake, api, server, services, stop } = await startEvolutionWithRunner({
    channelLimit: 10,
    env: { EVOLUTION_TIMEOUT_MS: "5000", EVOLUTION_RECONCILE_AFTER_SECONDS: "1" },
  }));
});
afterAll(() => stop());

async function connectedChannel(as: Api = api) {
  const { json } = await as("POST", "/api/external/create-channel", { name: "Número" });
  await fake.pair(json.id_channel);
  await until(
    async () => (await as("GET", `/api/external/info-channel/${json.id_channel}`)).json,
    (c) => c.status === "connected" && typeof c.phone === "string",
  );
  return json.id_channel as string;
}

/** A launch on these channels (the first creates, in turn), with one template admin. */
const createLaunch = (name: string, ids: string[], initialGroups: number) =>
  api("POST", "/api/external/create-launch", {
    name,
    id_channel: ids,
    group_template: { name: `Turma ${name} ${Date.now()} #{n}`, admins_only: false, admins: ["5511900000001"] },
    capacity: 50,
    margin: 1,
    initial_groups: initialGroups,
  });
const info = async (id: string) => (await api("GET", `/api/external/info-launch/${id}`)).json;
const phoneOf = (channelId: string) => fake.instances.get(channelId)!.owner;
const at = (t0: Date, minutes: number) => new Date(t0.getTime() + minutes * 60_000);

/** Sends the campaign to the launch's segment and waits for it to finish; answers info-campaign. */
async function campaignTo(segment: string) {
  const { id_campaign } = await createCampaign(api, segment, { message: `Aula ${Date.now()}` });
  return until(
    async () => (await api("GET", `/api/external/info-campaign/${id_campaign}`)).json,
    (c) => c.status === "completed" || c.status === "failed",
    60_000,
  );
}

// First in the file: the other tenant's number must be the first of the gateway's list.
describe("whose number is whose", () => {
  it("a launch never adds another tenant's number: a gateway that ignores fetchInstances' filter and lost this instance gives no number, never the list's first", async () => {
    const other = await newTenant(server.url, { channelLimit: 2 });
    const theirs = await connectedChannel(other);
    const theirPhone = phoneOf(theirs);
    expect([...fake.instances.keys()][0]).toBe(theirs);

    const [a, b] = [await connectedChannel(), await connectedChannel()];
    // Only a creates; b's number is added to what a makes, and the service does not hold it (a channel paired before
    // its number was recorded, after a restart): it asks the gateway.
    expect((await api("PUT", `/api/external/edit-channel/${b}`, { name: "Número", limits: { group_create_cap: 0 } })).status).toBe(200);
    await services.db.update(channels).set({ phone: null }).where(eq(channels.id, b));
    (services.provider as unknown as { instances: { ownNumbers: Map<string, string> } }).instances.ownNumbers.delete(b);
    // The gateway lost b's instance and answers fetchInstances?instanceName= with every other instance.
    fake.knobs.ignoresInstanceFilter = true;
    fake.instances.delete(b);
    const asked = fake.counters.fetchInstances;
    let launchId = "";
    try {
      const res = await createLaunch("Meus", [a, b], 1);
      expect(res.status, res.text).toBe(201);
      launchId = res.json.id_launch;
      expect(fake.counters.fetchInstances, "b's number was asked of the gateway").toBeGreaterThan(asked);
      const [group] = (await info(res.json.id_launch)).groups as { id_group: string; id_channel: string }[];
      expect(group.id_channel).toBe(a);
      expect(fake.group(a, group.id_group)!.participants!.some((p) => p.id.startsWith(theirPhone))).toBe(false);
      expect(fake.participantUpdates.filter((u) => u.participants.some((x) => x.startsWith(theirPhone)))).toEqual([]);
    } finally {
      fake.knobs.ignoresInstanceFilter = false;
    }
    expect((await api("PUT", `/api/external/edit-launch/${launchId}`, { status: "closed" })).status).toBe(200);
  });
});

describe("reach is what the platform says", () => {
  it("a number WhatsApp refuses to add is not counted in: shown, its groups' deliveries go through the other number, added again with backoff", async () => {
    const [a, b] = [await connectedChannel(), await connectedChannel()];
    // Only a creates (b's cap is 0), so b is added to each group a makes: WhatsApp refuses b (privacy, 403).
    expect((await api("PUT", `/api/external/edit-channel/${b}`, { name: "Número", limits: { group_create_cap: 0 } })).status).toBe(200);
    fake.knobs.refuseAdds[phoneOf(b)] = "403";
    const res = await createLaunch("Recusa", [a, b], 2);
    expect(res.status, res.text).toBe(201);
    const t0 = new Date();
    const launch = await info(res.json.id_launch);
    expect(launch.groups).toHaveLength(2);
    for (const g of launch.groups) {
      expect(g.id_channel).toBe(a);
      expect(g.unreached).toEqual([{ id_channel: b, reason: "403", attempts: 0, next_attempt_at: expect.any(String), since: expect.any(String) }]);
      expect(fake.group(a, g.id_group)!.participants!.some((p) => p.id.startsWith(phoneOf(b)))).toBe(false);
    }
    // The dashboard's launch page reads them too (a viewer's session is enough).
    const dashboard = createCallerFactory(appRouter)({
      db: services.db,
      provider: services.provider,
      caller: { kind: "session", tenantId: api.tenantId, userId: "u", role: "viewer" },
      now: new Date(),
    });
    const seen = await dashboard.launches.info({ id_launch: res.json.id_launch });
    expect(seen.groups.map((g) => [g.id_group, g.unreached])).toEqual(
      launch.groups.map((g: { id_group: string; unreached: unknown }) => [g.id_group, g.unreached]),
    );
    const groups = launch.groups.map((g: { id_group: string }) => g.id_group);

    // The campaign: every group through a (b reaches none), one message each, nothing tried through b.
    const c = await campaignTo(launch.id_segment);
    expect(c.status).toBe("completed");
    expect(c.channels).toEqual([expect.objectContaining({ id_channel: a, sent: 2, failed: 0 })]);
    for (const g of groups) expect(fake.messages.filter((m) => m.number === g).map((m) => m.instance)).toEqual([a]);
    expect(fake.sendRequests.filter((r) => r.instance === b)).toEqual([]);

    // Added again by the launch pass: none before 5 min, then one add per group, then none for 10 more minutes.
    const adds = () => fake.participantUpdates.filter((u) => u.action === "add" && u.participants.includes(phoneOf(b))).length;
    const before = adds();
    await runLaunchEngine(services.db, services.provider, at(t0, 4));
    expect(adds()).toBe(before);
    await runLaunchEngine(services.db, services.provider, at(t0, 6));
    expect(adds()).toBe(before + 2);
    await runLaunchEngine(services.db, services.provider, at(t0, 6));
    await runLaunchEngine(services.db, services.provider, at(t0, 15));
    expect(adds(), "the second retry waits 10 minutes").toBe(before + 2);
    const waiting = (await info(res.json.id_launch)).groups[0].unreached;
    expect(waiting).toEqual([expect.objectContaining({ id_channel: b, reason: "403", attempts: 1 })]);
    // WhatsApp lets b in now: the next retry adds and promotes it, and b reaches both groups.
    delete fake.knobs.refuseAdds[phoneOf(b)];
    await runLaunchEngine(services.db, services.provider, at(t0, 17));
    expect(adds()).toBe(before + 4);
    for (const g of (await info(res.json.id_launch)).groups) expect(g.unreached).toEqual([]);
    expect((await api("PUT", `/api/external/edit-launch/${res.json.id_launch}`, { status: "closed" })).status).toBe(200);
  });

  it("a send refused because the number is no longer in the group moves to the other number: one message (a lost answer there included), no transient retry", async () => {
    const [b, a] = [await connectedChannel(), await connectedChannel()];
    // b makes the group and a is added: both reach it, and the campaign picks b (the launch's first number).
    const res = await createLaunch("Saiu", [b, a], 1);
    expect(res.status, res.text).toBe(201);
    const [group] = (await info(res.json.id_launch)).groups;
    expect(group.unreached).toEqual([]);
    // Another admin takes b out of the group on a phone: WhatsApp says nothing to us.
    fake.loseGroup(b, group.id_group, "gone");
    // And a's answer is lost: the look-up must find a's send (on a), not send again.
    fake.knobs.dropAnswers = 1;

    const c = await campaignTo(res.json.id_segment);
    expect(c.status).toBe("completed");
    expect(fake.messages.filter((m) => m.number === group.id_group).map((m) => m.instance)).toEqual([a]);
    // b was asked once (Evolution's 400 [object Object]); the delivery then went through a, not back to b.
    expect(fake.sendRequests.filter((r) => r.instance === b && r.number === group.id_group)).toHaveLength(1);
    expect(c.channels).toEqual(expect.arrayContaining([expect.objectContaining({ id_channel: a, sent: 1, failed: 0 })]));
    // b no longer reaches the group: the launch shows it and will add it again.
    expect((await info(res.json.id_launch)).groups[0].unreached).toEqual([expect.objectContaining({ id_channel: b, reason: "not_in_group", attempts: 0 })]);
    expect((await api("PUT", `/api/external/edit-launch/${res.json.id_launch}`, { status: "closed" })).status).toBe(200);
  });
});
