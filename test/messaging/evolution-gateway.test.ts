import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { channels, evolutionInstances } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { newId } from "../../server/ids";
import { compareVersions, EvolutionProvider } from "../../server/messaging/evolution";
import { ProviderUnavailableError, type ProviderEvent } from "../../server/messaging/provider";
import { startJob } from "../../inngest/start";
import { channelStatePollJob } from "../../inngest/jobs/channel-state-poll";
import { SimulatorProvider } from "../../server/messaging/simulator";
import { startEvolutionProvider } from "../evolution-harness";
import { evolutionDateTime } from "../fake-evolution";

// How the provider copes with the gateway as it really behaves (docs/evolution.md), against the fake
// in its default (realistic) mode.
let h: Awaited<ReturnType<typeof startEvolutionProvider>>;
let tenantId: string;

beforeAll(async () => {
  h = await startEvolutionProvider();
  ({ tenantId } = await createTenant(await getDb(), { name: "Gateway", email: `g-${randomUUID()}@example.test`, password: "senha-segura-123" }));
});
afterAll(() => h.close());

async function channel(provider: EvolutionProvider = h.provider, paired = true) {
  const id = newId("channel");
  await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
  await provider.createChannel({ id, name: "Evo" });
  if (paired) await h.fake.pair(id);
  return id;
}

describe("times", () => {
  it("the fake's date_time is São Paulo wall-clock time labelled Z (3 h early)", () => {
    const now = new Date("2025-06-01T15:00:00.000Z");
    expect(evolutionDateTime(now, "America/Sao_Paulo")).toBe("2025-06-01T12:00:00.000Z");
  });

  it("a `close` event is stamped with our receive time, not the gateway's date_time", async () => {
    const id = await channel();
    const seen: ProviderEvent[] = [];
    const off = h.provider.subscribe((e) => void seen.push(e));
    try {
      const before = Date.now();
      await h.fake.setState(id, "close");
      const ev = seen.find((e) => e.type === "channel_status" && e.channelId === id);
      expect(ev).toMatchObject({ status: "disconnected" });
      expect(ev!.at.getTime()).toBeGreaterThanOrEqual(before);
      expect(ev!.at.getTime()).toBeLessThanOrEqual(Date.now());
    } finally {
      off();
    }
  });
});

describe("receipts", () => {
  it("declares receipts: false; the gateway never forwards group receipts", async () => {
    expect(h.provider.capabilities.receipts).toBe(false);
    const id = await channel();
    const [g] = await h.provider.listGroups(id);
    const sent = await h.provider.send({
      channelId: id,
      groupId: g.id_group,
      deliveryKey: `k-${randomUUID()}`,
      content: { type: "text", text: "oi" },
      linkPreview: false,
      mentionAll: false,
    });
    const dropped = h.fake.droppedGroupReceipts;
    await h.fake.receipt(sent.messageId, "READ");
    expect(h.fake.droppedGroupReceipts).toBe(dropped + 1);
  });
});

describe("groups", () => {
  it("keeps legacy <phone>-<timestamp>@g.us ids, drops community parents, flags admins-only groups", async () => {
    const id = await channel();
    const listed = await h.provider.listGroups(id);
    const fakeGroups = h.fake.instances.get(id)!.groups;
    const legacy = fakeGroups.find((g) => /^\d+-\d+@g\.us$/.test(g.id))!;
    const parent = fakeGroups.find((g) => g.isCommunity)!;
    expect(listed.map((g) => g.id_group)).toContain(legacy.id);
    expect(listed.map((g) => g.id_group)).not.toContain(parent.id);
    expect(listed).toHaveLength(fakeGroups.length - 1);
    expect(
      listed
        .filter((g) => g.adminsOnly)
        .map((g) => g.id_group)
        .sort(),
    ).toEqual(
      fakeGroups
        .filter((g) => g.announce && !g.isCommunity)
        .map((g) => g.id)
        .sort(),
    );
  });

  it("five concurrent listings → one gateway job", async () => {
    const id = await channel();
    const before = h.fake.counters.fetchAllGroups;
    const lists = await Promise.all(Array.from({ length: 5 }, () => h.provider.listGroups(id)));
    expect(h.fake.counters.fetchAllGroups - before).toBe(1);
    for (const l of lists) expect(l).toEqual(lists[0]);
  });

  it("a listing that times out is not retried (the gateway's job runs on); unavailable without a cache", async () => {
    const impatient = new EvolutionProvider(await getDb(), {
      apiUrl: h.fake.url,
      apiKey: h.fake.apiKey,
      webhookBaseUrl: h.webhookBaseUrl,
      timeoutMs: 2000,
      retries: 2,
      groupsTtlMs: 60_000,
      groupsTimeoutMs: 100,
      backoffMs: 10,
    });
    const id = await channel(impatient);
    const before = h.fake.counters.fetchAllGroups;
    h.fake.knobs.groupDelayMs = 60; // 8 groups: ~0.5 s
    try {
      await expect(impatient.listGroups(id)).rejects.toBeInstanceOf(ProviderUnavailableError);
      expect(h.fake.counters.fetchAllGroups - before).toBe(1);
      expect(h.fake.counters.groupJobsRunning).toBeGreaterThan(0); // the client's time-out stopped nothing
    } finally {
      h.fake.knobs.groupDelayMs = 20;
    }
  });

  it("a stale list is served at once while one background listing refreshes it", async () => {
    const swr = new EvolutionProvider(await getDb(), {
      apiUrl: h.fake.url,
      apiKey: h.fake.apiKey,
      webhookBaseUrl: h.webhookBaseUrl,
      timeoutMs: 2000,
      retries: 1,
      groupsTtlMs: 0,
      backoffMs: 10,
    });
    const id = await channel(swr);
    const first = await swr.listGroups(id);
    h.fake.instances.get(id)!.groups.push({ id: "120363999999999999@g.us", subject: "Novo" });
    h.fake.knobs.groupDelayMs = 50;
    try {
      const before = h.fake.counters.fetchAllGroups;
      const started = Date.now();
      expect(await swr.listGroups(id)).toEqual(first); // stale, at once
      expect(Date.now() - started).toBeLessThan(300);
      expect(await swr.listGroups(id)).toEqual(first); // the refresh in progress is shared
      const stored = async () =>
        (await (await getDb()).select().from(evolutionInstances).where(eq(evolutionInstances.channelId, id)))[0].groups?.map((g) => g.id_group);
      await expect.poll(stored, { timeout: 3000 }).toContain("120363999999999999@g.us");
      expect(h.fake.counters.fetchAllGroups - before).toBe(1);
    } finally {
      h.fake.knobs.groupDelayMs = 20;
    }
  });

  it("rate-overlimit on group queries: 500, no retry, unavailable without a cache", async () => {
    const id = await channel();
    h.fake.knobs.rateLimitGroups = true;
    const before = h.fake.counters.fetchAllGroups;
    try {
      await expect(h.provider.listGroups(id)).rejects.toThrow(/rate-overlimit/);
    } finally {
      h.fake.knobs.rateLimitGroups = false;
    }
    expect(h.fake.counters.fetchAllGroups).toBe(before);
  });
});

describe("instances and pairing", () => {
  it.each([
    ["a state read", (id: string) => h.provider.getStatus(id)],
    // The poll asks its connectionState: 404 (docs/evolution.md#missed-webhooks-the-state-poll).
    ["the state poll, on a connected channel", async (id: string) => (await h.provider.pollStates()) && h.provider.getStatus(id)],
  ])("a lost instance (404) met by %s is created again with the same name and a webhook; the paired channel becomes disconnected", async (_, meet) => {
    const id = await channel();
    const seen: string[] = [];
    const off = h.provider.subscribe((e) => void (e.type === "channel_status" && e.channelId === id && seen.push(e.status)));
    try {
      h.fake.loseInstance(id);
      const creates = h.fake.counters.creates;
      expect(await meet(id)).toBe("disconnected");
      expect(h.fake.counters.creates).toBe(creates + 1);
      const inst = h.fake.instances.get(id)!;
      expect(inst.webhook?.url).toBe(`${h.webhookBaseUrl}/api/evolution/webhook/${id}`);
      expect(seen).toEqual(["disconnected"]);
      // Its webhooks are accepted (the new secret is stored).
      await h.fake.pair(id);
      expect(seen).toEqual(["disconnected", "connected"]);
    } finally {
      off();
    }
  });

  it("the fake's instance guard answers 404 before the key check", async () => {
    const res = await fetch(`${h.fake.url}/instance/connectionState/nobody`, { headers: { apikey: "wrong" } });
    expect(res.status).toBe(404);
  });

  it("`refused` (too many QR codes) is disconnected; asking again starts a new session", async () => {
    const id = await channel(h.provider, false);
    await h.fake.setState(id, "refused");
    expect(await h.provider.getStatus(id)).toBe("disconnected");
    h.fake.instances.get(id)!.state = "close"; // the gateway ends the session: still disconnected
    expect(await h.provider.getStatus(id)).toBe("disconnected");
    const idle = await h.provider.pairing(id);
    expect(idle).toMatchObject({ status: "disconnected", sessionClosed: true, qrCode: null });
    const again = await h.provider.pairing(id, { restart: true });
    expect(again).toMatchObject({ status: "connecting", sessionClosed: false });
    expect(again.qrCode).toMatch(/^data:image\/png;base64,/);
  });

  it("connect errors come back as HTTP 200 {error: true}: unavailable, with the gateway's message", async () => {
    const id = await channel(h.provider, false);
    await h.fake.setState(id, "close");
    h.fake.knobs.connectError = "Error: Connection Failure";
    try {
      await expect(h.provider.pairing(id, { phoneNumber: "5511999998888" })).rejects.toThrow(/Connection Failure/);
    } finally {
      h.fake.knobs.connectError = null;
    }
  });

  it("the state poll recovers a missed connection.update", async () => {
    const id = await channel(h.provider, false);
    h.fake.instances.get(id)!.state = "open"; // paired, but the webhook never came
    const seen: string[] = [];
    const off = h.provider.subscribe((e) => void (e.type === "channel_status" && e.channelId === id && seen.push(e.status)));
    try {
      expect(await h.provider.pollStates()).toBeGreaterThan(0);
      expect(seen).toEqual(["connected"]);
    } finally {
      off();
    }
  });
});

describe("the state poll reads connectionState (docs/evolution.md#missed-webhooks-the-state-poll)", () => {
  it("one connectionState per channel; an instance's stored row only for a change: a missed open, a close (its reason, when the gateway keeps one)", async () => {
    const connected = await channel();
    const missed = await channel(h.provider, false);
    h.fake.instances.get(missed)!.state = "open"; // paired, but the webhook never came
    const seen: string[] = [];
    const off = h.provider.subscribe((e) => void (e.type === "channel_status" && seen.push(`${e.channelId}/${e.status}/${e.reason ?? ""}`)));
    try {
      const states = h.fake.counters.connectionStates;
      const lists = h.fake.counters.fetchInstances;
      const polled = await h.provider.pollStates();
      const rows = (await (await getDb()).select().from(evolutionInstances)).filter((r) => h.fake.instances.has(r.instanceName));
      expect(polled).toBe(rows.length);
      expect(h.fake.counters.connectionStates - states).toBe(polled);
      expect(h.fake.counters.fetchInstances - lists).toBe(0);
      expect(seen).toContain(`${missed}/connected/`);
      expect(seen.filter((s) => s.startsWith(connected))).toEqual([]);

      // A ban whose webhooks were lost, on a gateway whose rows have no disconnectionReasonCode (a 2.x before Aug 2024):
      // the close is found, the reason cannot be: offline, health unchanged.
      h.fake.knobs.listsDisconnections = false;
      h.fake.holdWebhooks(connected);
      await h.fake.setState(connected, "close", 403);
      await h.provider.pollStates();
      expect(seen.filter((s) => s.startsWith(connected))).toEqual([`${connected}/disconnected/`]);
      expect(h.fake.counters.fetchInstances - lists).toBe(1);
    } finally {
      off();
      h.fake.knobs.listsDisconnections = true;
    }
  });
});

describe("2.4 reconnects 3 s after the close", () => {
  it("the session reads `close` meanwhile: its stored row (still `open`) tells it from a close for good — a reconnect, not a disconnect", async () => {
    const g = await startEvolutionProvider({}, { version: "2.4.0-rc2", license: "active" });
    try {
      const id = newId("channel");
      await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
      await g.provider.createChannel({ id, name: "Evo" });
      await g.fake.pair(id);
      const seen: string[] = [];
      g.provider.subscribe((e) => void (e.type === "channel_status" && e.channelId === id && seen.push(e.status)));
      await g.fake.setState(id, "close", 440);
      expect(g.fake.instances.get(id)!.state).toBe("close");
      const lists = g.fake.counters.fetchInstances;
      expect(await g.provider.getStatus(id)).toBe("connected");
      expect(g.fake.counters.fetchInstances - lists).toBe(1);
      expect(seen).toEqual([]);
      // 3 s later Evolution reconnects (`connecting`), then Baileys opens the session again.
      await new Promise((r) => setTimeout(r, 3100));
      expect(g.fake.instances.get(id)!.state).toBe("connecting");
      await g.fake.setState(id, "open");
      expect(await g.provider.getStatus(id)).toBe("connected");
      expect(seen).toEqual([]);
    } finally {
      await g.close();
    }
  });
});

describe("the friendlier double (opt-in)", () => {
  it("reportEveryClose posts a close the real gateway would reconnect silently: the channel is disconnected at once", async () => {
    const g = await startEvolutionProvider({}, { reportEveryClose: true });
    try {
      const id = newId("channel");
      await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
      await g.provider.createChannel({ id, name: "Evo" });
      await g.fake.pair(id);
      await g.fake.setState(id, "close", 428);
      expect(g.fake.instances.get(id)!.state).toBe("close");
      expect(await g.provider.getStatus(id)).toBe("disconnected");
    } finally {
      await g.close();
    }
  });
});

describe("the embedded state poll", () => {
  it("runs on an unref'd timer for Evolution (off with the simulator) and recovers a missed webhook", async () => {
    const db = await getDb();
    expect(startJob(channelStatePollJob, { db, provider: new SimulatorProvider(db, { pairingMs: 0, groupsPerChannel: 1 }) }, { intervalMs: 50 }).kind).toBe(
      "off",
    );
    const id = await channel(h.provider, false);
    h.fake.instances.get(id)!.state = "open";
    const engine = startJob(channelStatePollJob, { db, provider: h.provider }, { intervalMs: 50 });
    try {
      expect(engine.kind).toBe("in-process");
      await expect
        .poll(async () => (await db.select().from(evolutionInstances).where(eq(evolutionInstances.channelId, id)))[0].state, { timeout: 3000 })
        .toBe("open");
    } finally {
      await engine.stop();
    }
  });
});

describe("start-up check", () => {
  it("reports the version; < 2.4.0 warns that messageId is ignored; reminders for what cannot be checked", async () => {
    const check = await h.provider.checkGateway();
    expect(check).toMatchObject({ reachable: true, version: "2.3.7" });
    expect(check.warnings.join("\n")).toMatch(/ignores the messageId/);
    expect(check.reminders.join("\n")).toMatch(/DATABASE_SAVE_DATA_NEW_MESSAGE=true/);
    expect(check.reminders.join("\n")).toMatch(/CORS_ORIGIN/);
  });

  it("2.4.0-rc2: no messageId warning; a wrong key and an unreachable gateway are warnings", async () => {
    const rc = await startEvolutionProvider({}, { version: "2.4.0-rc2", license: "active" });
    try {
      expect((await rc.provider.checkGateway()).warnings).toEqual([]);
      const wrongKey = new EvolutionProvider(await getDb(), {
        apiUrl: rc.fake.url,
        apiKey: "wrong",
        webhookBaseUrl: rc.webhookBaseUrl,
        timeoutMs: 500,
        retries: 0,
        groupsTtlMs: 0,
      });
      expect((await wrongKey.checkGateway()).warnings.join("\n")).toMatch(/refused EVOLUTION_API_KEY/);
    } finally {
      await rc.close();
    }
    const down = new EvolutionProvider(await getDb(), {
      apiUrl: "http://127.0.0.1:9",
      apiKey: "k",
      webhookBaseUrl: "http://127.0.0.1:3000",
      timeoutMs: 300,
      retries: 0,
      groupsTtlMs: 0,
    });
    expect(await down.checkGateway()).toMatchObject({ reachable: false, version: null });
    expect(compareVersions("2.3.7", "2.4.0")).toBe(-1);
    expect(compareVersions("2.4.0-rc1", "2.4.0")).toBe(0);
    expect(compareVersions("2.10.0", "2.4.0")).toBe(1);
  });
});

describe("gateway versions", () => {
  it("2.4 not activated (503 LICENSE_REQUIRED): the gateway is unavailable — a send is not 'outcome unknown', nothing is sent, the channel goes offline", async () => {
    const g = await startEvolutionProvider({}, {});
    try {
      const id = newId("channel");
      await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
      await g.provider.createChannel({ id, name: "Evo" });
      await g.fake.pair(id);
      const events: ProviderEvent[] = [];
      g.provider.subscribe((e) => void events.push(e));
      const group = g.fake.instances.get(id)!.groups[0].id;
      // The operator upgrades the gateway to 2.4 and has not activated it yet.
      g.fake.upgrade("2.4.0");
      const sends = g.fake.sendRequests.length;
      const message = {
        channelId: id,
        groupId: group,
        deliveryKey: `k-${randomUUID()}`,
        content: { type: "text" as const, text: "Oi" },
        linkPreview: false as const,
        mentionAll: false,
      };
      const err = await g.provider.send(message).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderUnavailableError);
      expect(err.message).toMatch(/LICENSE_REQUIRED/);
      expect(g.fake.sendRequests.length).toBe(sends);
      // Like a gateway that cannot be reached: the channel is offline until the state poll reads it open again.
      expect(events).toContainEqual(expect.objectContaining({ type: "channel_status", channelId: id, status: "disconnected" }));
      await expect(g.provider.listGroups(id)).rejects.toBeInstanceOf(ProviderUnavailableError);
      const check = await g.provider.checkGateway();
      expect(check).toMatchObject({ reachable: true, version: "2.4.0" });
      expect(check.warnings.join("\n")).toMatch(/not activated.*LICENSE_REQUIRED/);
      // Activated: the poll finds the instance open and the channel connected again.
      g.fake.activate();
      await g.provider.pollStates();
      expect(await g.provider.getStatus(id)).toBe("connected");
    } finally {
      await g.close();
    }
  });

  it("the gateway's version is read again when a connection is (re)established and after versionTtlMs: an upgrade to 2.4 is noticed", async () => {
    const g = await startEvolutionProvider({}, {});
    try {
      const id = newId("channel");
      await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
      await g.provider.createChannel({ id, name: "Evo" });
      await g.fake.pair(id);
      const group = g.fake.instances.get(id)!.groups[0].id;
      const send = (provider: EvolutionProvider) =>
        provider.send({
          channelId: id,
          groupId: group,
          deliveryKey: `k-${randomUUID()}`,
          content: { type: "text", text: "Oi" },
          linkPreview: false,
          mentionAll: false,
        });
      await send(g.provider);
      expect(g.fake.sendRequests.at(-1)!.body.messageId).toBeUndefined();
      // Upgraded in place (and activated): the gateway restarts, every instance reconnects.
      g.fake.upgrade("2.4.0");
      g.fake.activate();
      await g.fake.setState(id, "open");
      await send(g.provider);
      expect(g.fake.sendRequests.at(-1)!.body.messageId).toMatch(/^3EB0[0-9A-F]{18}$/);
      // Without a reconnect, an interval does it.
      const later = g.withOptions({ versionTtlMs: 50 });
      g.fake.upgrade("2.3.7");
      await send(later);
      expect(g.fake.sendRequests.at(-1)!.body.messageId).toBeUndefined();
      g.fake.upgrade("2.4.0");
      await new Promise((r) => setTimeout(r, 60));
      await send(later);
      expect(g.fake.sendRequests.at(-1)!.body.messageId).toMatch(/^3EB0/);
    } finally {
      await g.close();
    }
  });
});
