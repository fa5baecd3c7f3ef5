import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { channels, evolutionMessages } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { newId } from "../../server/ids";
import { EvolutionProvider } from "../../server/messaging/evolution";
import { ProviderSendError, ProviderUnavailableError, type OutboundMessage } from "../../server/messaging/provider";
import { startEvolutionProvider } from "../evolution-harness";

let h: Awaited<ReturnType<typeof startEvolutionProvider>>;
let tenantId: string;

beforeAll(async () => {
  h = await startEvolutionProvider();
  ({ tenantId } = await createTenant(await getDb(), { name: "Falhas", email: `f-${randomUUID()}@example.test`, password: "senha-segura-123" }));
});
afterAll(() => h.close());

async function pairedChannel(provider: EvolutionProvider = h.provider) {
  const id = newId("channel");
  await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
  await provider.createChannel({ id, name: "Evo" });
  await h.fake.pair(id);
  const [g] = h.fake.instances.get(id)!.groups;
  return { id, group: g.id };
}

const text = (channelId: string, groupId: string, body = `Oi ${randomUUID().slice(0, 8)}`): OutboundMessage => ({
  channelId,
  groupId,
  deliveryKey: `campaign_${randomUUID()}:${groupId}`,
  content: { type: "text", text: body },
  linkPreview: false,
  mentionAll: true,
});

const sentTo = (channelId: string) => h.fake.messages.filter((m) => m.instance === channelId);

describe("Evolution provider: instance and webhook", () => {
  it("creates one instance per channel with a webhook carrying a per-instance secret", async () => {
    const { id } = await pairedChannel();
    const inst = h.fake.instances.get(id)!;
    expect(inst.webhook?.url).toMatch(new RegExp(`^${h.webhookBaseUrl}/api/evolution/webhook/${id}/[A-Za-z0-9_-]{32}$`));
    expect(inst.webhook?.events).toEqual(expect.arrayContaining(["CONNECTION_UPDATE", "MESSAGES_UPDATE"]));
    expect(h.fake.webhookDeliveries.filter((d) => d.url === inst.webhook?.url).every((d) => d.status === 200)).toBe(true);
  });

  it("refuses webhooks with a wrong secret or for an unknown channel (401), accepts the right one", async () => {
    const { id } = await pairedChannel();
    const url = h.fake.instances.get(id)!.webhook!.url;
    const post = (u: string) =>
      fetch(u, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ event: "connection.update", instance: id, data: { state: "close" } }),
      });
    expect((await post(url.replace(/[^/]+$/, "x".repeat(32)))).status).toBe(401);
    expect((await post(url.replace(id, newId("channel")))).status).toBe(401);
    expect(await h.provider.getStatus(id)).toBe("connected"); // the forged events changed nothing
    expect((await post(url)).status).toBe(200);
    const [row] = await (await getDb()).select().from(channels).where(eq(channels.id, id));
    expect(row).toBeDefined();
  });

  it("a paired number reconnecting (close → connecting → open) is disconnected once, never `connecting` again", async () => {
    const { id } = await pairedChannel();
    const seen: string[] = [];
    const off = h.provider.subscribe((e) => void (e.type === "channel_status" && e.channelId === id && seen.push(e.status)));
    try {
      await h.fake.setState(id, "connecting"); // a blip: no change
      expect(await h.provider.getStatus(id)).toBe("connected");
      await h.fake.setState(id, "close");
      await h.fake.setState(id, "connecting");
      await h.fake.setState(id, "open");
      expect(seen).toEqual(["disconnected", "connected"]);
    } finally {
      off();
    }
  });

  it("a second create of the same instance (a retried create) configures it again", async () => {
    const id = newId("channel");
    await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
    await h.provider.createChannel({ id, name: "Evo" });
    await expect(h.provider.createChannel({ id, name: "Evo" })).resolves.toMatchObject({ ref: id, status: "connecting" });
  });

  it("pairing gives the QR code, and a pairing code for a phone number", async () => {
    const id = newId("channel");
    await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
    await h.provider.createChannel({ id, name: "Evo" });
    const qr = await h.provider.pairing(id);
    expect(qr).toMatchObject({ status: "connecting", automatic: false });
    expect(qr.qrCode).toMatch(/^data:image\/png;base64,/);
    const code = await h.provider.pairing(id, { phoneNumber: "5511999998888" });
    expect(code.pairingCode).toBe("WZYEH1YY");
  });
});

describe("Evolution provider: sends whose outcome is unknown", () => {
  it("a lost answer is reconciled with findMessages: the message goes out once", async () => {
    const { id, group } = await pairedChannel();
    h.fake.knobs.dropAnswers = 1;
    const before = h.fake.counters.findMessages;
    const receipt = await h.provider.send(text(id, group));
    expect(sentTo(id)).toHaveLength(1);
    expect(receipt.messageId).toBe(sentTo(id)[0].id);
    expect(h.fake.counters.findMessages).toBeGreaterThan(before);
  });

  it("…also on a gateway that ignores our message id (matched by text in the group)", async () => {
    const { id, group } = await pairedChannel();
    h.fake.knobs.ignoreMessageId = true;
    h.fake.knobs.dropAnswers = 1;
    try {
      const receipt = await h.provider.send(text(id, group));
      expect(sentTo(id)).toHaveLength(1);
      expect(receipt.messageId).toBe(sentTo(id)[0].id);
    } finally {
      h.fake.knobs.ignoreMessageId = false;
    }
  });

  it("a 500 is checked with findMessages, then sent again once", async () => {
    const { id, group } = await pairedChannel();
    h.fake.knobs.failSends = 1;
    await h.provider.send(text(id, group));
    expect(sentTo(id)).toHaveLength(1);
  });

  it("repeated 500s fail the send as transient (the service retries it later)", async () => {
    const { id, group } = await pairedChannel();
    h.fake.knobs.failSends = 2;
    const err = await h.provider.send(text(id, group)).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderSendError);
    expect(err.transient).toBe(true);
    expect(sentTo(id)).toHaveLength(0);
    h.fake.knobs.failSends = 0;
  });

  it("after a crash mid-send, findSent asks the gateway; a resend skips what went out", async () => {
    const { id, group } = await pairedChannel();
    const m = text(id, group);
    await h.provider.send(m);
    const db = await getDb();
    // As if the worker died before recording the gateway's answer.
    await db
      .update(evolutionMessages)
      .set({ messageId: null, sentAt: null })
      .where(and(eq(evolutionMessages.deliveryKey, m.deliveryKey)));
    const found = await h.provider.findSent(id, m.deliveryKey);
    expect(found?.messageId).toBe(sentTo(id)[0].id);
    await h.provider.send(m);
    expect(sentTo(id)).toHaveLength(1);
    // A key that was attempted but never reached the gateway is not sent.
    const lost = text(id, group);
    h.fake.knobs.failSends = 2;
    await h.provider.send(lost).catch(() => undefined);
    expect(await h.provider.findSent(id, lost.deliveryKey)).toBeNull();
  });

  it("an offline instance makes sends unavailable (released, not failed)", async () => {
    const { id, group } = await pairedChannel();
    await h.fake.setState(id, "close");
    await expect(h.provider.send(text(id, group))).rejects.toBeInstanceOf(ProviderUnavailableError);
  });
});

describe("Evolution provider: gateway failures", () => {
  it("groups are cached: one fetchAllGroups for repeated lists", async () => {
    const { id } = await pairedChannel();
    const before = h.fake.counters.fetchAllGroups;
    const a = await h.provider.listGroups(id);
    const b = await h.provider.listGroups(id);
    expect(b).toEqual(a);
    expect(h.fake.counters.fetchAllGroups - before).toBe(1);
  });

  it("rate-limited (429): a stale cached list is served; with no cache it is unavailable", async () => {
    const stale = await startEvolutionProvider({ groupsTtlMs: 0 });
    try {
      const id = newId("channel");
      await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
      await stale.provider.createChannel({ id, name: "Evo" });
      await stale.fake.pair(id);
      const first = await stale.provider.listGroups(id);
      stale.fake.knobs.rateLimitGroups = true;
      expect(await stale.provider.listGroups(id)).toEqual(first);
      const id2 = newId("channel");
      await (await getDb()).insert(channels).values({ id: id2, tenantId, name: "Evo", status: "connecting", providerRef: "" });
      await stale.provider.createChannel({ id: id2, name: "Evo" });
      await stale.fake.pair(id2);
      await expect(stale.provider.listGroups(id2)).rejects.toBeInstanceOf(ProviderUnavailableError);
    } finally {
      await stale.close();
    }
  });

  it("a slow gateway times out: unavailable within the time-out × attempts", async () => {
    const { id } = await pairedChannel();
    const slow = new EvolutionProvider(await getDb(), {
      apiUrl: h.fake.url,
      apiKey: h.fake.apiKey,
      webhookBaseUrl: h.webhookBaseUrl,
      timeoutMs: 200,
      retries: 1,
      groupsTtlMs: 0,
      backoffMs: 10,
    });
    h.fake.knobs.latencyMs = 1000;
    const started = Date.now();
    try {
      await expect(slow.getStatus(id)).rejects.toBeInstanceOf(ProviderUnavailableError);
    } finally {
      h.fake.knobs.latencyMs = 0;
    }
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("a wrong API key (401) or an unreachable gateway is unavailable, never a crash", async () => {
    const { id, group } = await pairedChannel();
    const wrongKey = new EvolutionProvider(await getDb(), {
      apiUrl: h.fake.url,
      apiKey: "wrong",
      webhookBaseUrl: h.webhookBaseUrl,
      timeoutMs: 500,
      retries: 0,
      groupsTtlMs: 0,
    });
    await expect(wrongKey.listGroups(id)).rejects.toBeInstanceOf(ProviderUnavailableError);
    const down = new EvolutionProvider(await getDb(), {
      apiUrl: "http://127.0.0.1:9",
      apiKey: "k",
      webhookBaseUrl: h.webhookBaseUrl,
      timeoutMs: 500,
      retries: 0,
      groupsTtlMs: 0,
    });
    await expect(down.listGroups(id)).rejects.toBeInstanceOf(ProviderUnavailableError);
    // The last state we know is `open`, so the send is tried and refused by the key.
    await expect(wrongKey.send(text(id, group))).rejects.toBeInstanceOf(ProviderUnavailableError);
  });

  it("logout and delete remove the instance from the gateway", async () => {
    const { id } = await pairedChannel();
    await h.provider.deleteChannel(id);
    expect(h.fake.instances.has(id)).toBe(false);
  });
});
