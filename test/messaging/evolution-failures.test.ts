import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { channels, evolutionMessages } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { newId } from "../../server/ids";
import { EvolutionProvider, mediaFileName, requestedMessageId } from "../../server/messaging/evolution";
import { ProviderOutcomeUnknownError, ProviderSendError, ProviderUnavailableError, type OutboundMessage } from "../../server/messaging/provider";
import { startEvolutionProvider } from "../evolution-harness";
import { evolutionSendErrors } from "../fake-evolution";
import { until as eventually } from "../helpers";

type MediaType = "image" | "video" | "document";
const until = async (ok: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
};

let h: Awaited<ReturnType<typeof startEvolutionProvider>>;
/** A second provider on the same fake and webhook route, with a short client time-out. */
let short: EvolutionProvider;
let tenantId: string;

beforeAll(async () => {
  h = await startEvolutionProvider();
  short = h.withOptions({ timeoutMs: 500 });
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
  it("creates one instance per channel with a webhook whose per-instance secret travels in a header, not the URL", async () => {
    const { id } = await pairedChannel();
    const inst = h.fake.instances.get(id)!;
    expect(inst.webhook?.url).toBe(`${h.webhookBaseUrl}/api/evolution/webhook/${id}`);
    expect(inst.webhook?.headers?.["x-webhook-token"]).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(h.fake.webhookDeliveries.filter((d) => d.url === inst.webhook?.url).length).toBeGreaterThan(0);
    expect(inst.webhook?.events).toEqual(expect.arrayContaining(["CONNECTION_UPDATE", "MESSAGES_UPDATE"]));
    expect(h.fake.webhookDeliveries.filter((d) => d.url === inst.webhook?.url).every((d) => d.status === 200)).toBe(true);
  });

  it("refuses webhooks with a wrong secret or for an unknown channel (401, body unread), accepts the right one; the old URL form still works", async () => {
    const { id } = await pairedChannel();
    const { url, headers } = h.fake.instances.get(id)!.webhook!;
    const secret = headers!["x-webhook-token"];
    const body = JSON.stringify({ event: "connection.update", instance: id, data: { state: "close" } });
    const post = (u: string, token?: string, b = body) =>
      fetch(u, { method: "POST", headers: { "content-type": "application/json", ...(token ? { "x-webhook-token": token } : {}) }, body: b });
    expect((await post(url)).status).toBe(401);
    expect((await post(url, "x".repeat(32))).status).toBe(401);
    expect((await post(`${url}/${"x".repeat(32)}`)).status).toBe(401);
    expect((await post(url.replace(id, newId("channel")), secret)).status).toBe(401);
    expect((await post(url, "x".repeat(32), "not json")).status).toBe(401); // checked before the body is read
    expect(await h.provider.getStatus(id)).toBe("connected"); // the forged events changed nothing
    // Instances created before the header: the secret in the path.
    expect(
      (await post(`${url}/${secret}`, undefined, JSON.stringify({ event: "connection.update", instance: id, data: { state: "connecting" } }))).status,
    ).toBe(200);
    expect((await post(url, secret)).status).toBe(200);
    const [row] = await (await getDb()).select().from(channels).where(eq(channels.id, id));
    expect(row).toBeDefined();
  });

  it("a silent reconnect (Evolution reconnects a close 428: `connecting` posted, fetchInstances still `open`) shorter than the grace changes nothing; sends wait meanwhile, unposted", async () => {
    const { id, group } = await pairedChannel();
    const seen: string[] = [];
    const off = h.provider.subscribe((e) => void (e.type === "channel_status" && e.channelId === id && seen.push(e.status)));
    try {
      await h.fake.setState(id, "close", 428);
      expect(h.fake.instances.get(id)!.state).toBe("connecting");
      const listed = await fetch(`${h.fake.url}/instance/fetchInstances?instanceName=${id}`, { headers: { apikey: h.fake.apiKey } });
      expect(((await listed.json()) as { connectionStatus: string }[])[0].connectionStatus).toBe("open");
      expect(await h.provider.getStatus(id)).toBe("connected");
      const posts = h.fake.sendRequests.length;
      const held = await h.provider.send(text(id, group)).catch((e) => e);
      expect(held).toBeInstanceOf(ProviderUnavailableError);
      expect(held.retryAfterMs).toBeGreaterThan(0);
      expect(held.retryAfterMs).toBeLessThanOrEqual(5_000);
      expect(h.fake.sendRequests.length).toBe(posts);
      // Baileys got the session back: Evolution posts `open`.
      await h.fake.setState(id, "open");
      await h.provider.send(text(id, group));
      expect(sentTo(id)).toHaveLength(1);
      expect(seen).toEqual([]);
    } finally {
      off();
    }
  });

  it("a silent reconnect past the grace: disconnected once (never `connecting`), not taken back by a poll while the gateway still reconnects, connected again on `open`", async () => {
    const quick = h.withOptions({ reconnectGraceMs: 300 });
    const { id, group } = await pairedChannel(quick);
    const seen: string[] = [];
    const off = quick.subscribe((e) => void (e.type === "channel_status" && e.channelId === id && seen.push(e.status)));
    try {
      await h.fake.setState(id, "close", 440);
      // No send needed: the grace ends by itself.
      await until(() => seen.length > 0, 3000);
      expect(seen).toEqual(["disconnected"]);
      expect(await quick.getStatus(id)).toBe("disconnected");
      // fetchInstances would still say `open`: the poll reads connectionState, which says `connecting`.
      expect(await quick.pollStates()).toBeGreaterThan(0);
      expect(seen).toEqual(["disconnected"]);
      const refused = await quick.send(text(id, group)).catch((e) => e);
      expect(refused).toBeInstanceOf(ProviderUnavailableError);
      expect(refused.retryAfterMs).toBeUndefined();
      await h.fake.setState(id, "open");
      expect(seen).toEqual(["disconnected", "connected"]);
      await quick.send(text(id, group));
      expect(sentTo(id)).toHaveLength(1);
    } finally {
      off();
    }
  });

  it("a silent reconnect whose webhooks are lost is seen by the state poll (connectionState), and so is its end", async () => {
    // A grace the first poll (every instance of this file, 8 at a time) ends well within, even on a loaded machine.
    const quick = h.withOptions({ reconnectGraceMs: 1000 });
    const { id } = await pairedChannel(quick);
    const seen: string[] = [];
    const off = quick.subscribe((e) => void (e.type === "channel_status" && e.channelId === id && seen.push(e.status)));
    try {
      h.fake.holdWebhooks(id);
      await h.fake.setState(id, "close", 515);
      await quick.pollStates();
      expect(seen).toEqual([]);
      // Past the grace (1 s, counted from the poll that saw `connecting`): offline. Polled every 100 ms, as the
      // periodic poll would, for at most 5 s: on a loaded machine the poll that sees it may come late, and the grace's
      // own timer may be writing the change while a poll runs (the change is then that timer's to announce).
      for (const end = Date.now() + 5000; seen.length === 0 && Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 100));
        await quick.pollStates();
      }
      expect(seen).toEqual(["disconnected"]);
      // Not taken back (nor announced twice) while the gateway still reconnects.
      await quick.pollStates();
      expect(seen).toEqual(["disconnected"]);
      await h.fake.setState(id, "open");
      await quick.pollStates();
      expect(seen).toEqual(["disconnected", "connected"]);
      // The held `connecting` and `open`, late: nothing more.
      await h.fake.releaseWebhooks(id);
      expect(seen).toEqual(["disconnected", "connected"]);
    } finally {
      off();
    }
  });

  it("sends answered `Connection Closed` while the gateway says `open`: tried again within the grace (no attempt used), past it the channel is offline until the gateway's state reads `open`", async () => {
    const quick = h.withOptions({ reconnectGraceMs: 400 });
    const { id, group } = await pairedChannel(quick);
    const seen: string[] = [];
    const off = quick.subscribe((e) => void (e.type === "channel_status" && e.channelId === id && seen.push(e.status)));
    try {
      h.fake.failSend({ instance: id, message: evolutionSendErrors.connectionClosed, times: 1000 });
      const first = await quick.send(text(id, group)).catch((e) => e);
      expect(first).toBeInstanceOf(ProviderUnavailableError);
      expect(first.retryAfterMs).toBeGreaterThan(0);
      expect(seen).toEqual([]);
      // Within the grace the next send is posted again (the gateway says open): refused again.
      const posts = h.fake.sendRequests.length;
      expect(await quick.send(text(id, group)).catch((e) => e)).toMatchObject({ retryAfterMs: expect.any(Number) });
      expect(h.fake.sendRequests.length).toBe(posts + 1);
      await until(() => seen.length > 0, 3000);
      expect(seen).toEqual(["disconnected"]);
      // A send claimed as the grace ended (before the channel's status said offline) is refused without asking the
      // gateway: its `open` would bring the channel back and start another grace (failover 30 s late).
      const raced = await quick.send(text(id, group)).catch((e) => e);
      expect(raced).toBeInstanceOf(ProviderUnavailableError);
      expect(raced.retryAfterMs).toBeUndefined();
      expect(h.fake.sendRequests.length).toBe(posts + 1);
      expect(seen).toEqual(["disconnected"]);
      // The poll reads `open` (as it did all along) and brings it back; still broken, its next refused send takes
      // it offline again at once, with no new grace.
      await quick.pollStates();
      expect(seen).toEqual(["disconnected", "connected"]);
      const again = await quick.send(text(id, group)).catch((e) => e);
      expect(again).toBeInstanceOf(ProviderUnavailableError);
      expect(again.retryAfterMs).toBeUndefined();
      expect(seen).toEqual(["disconnected", "connected", "disconnected"]);
      // The gateway is fixed; its connectionState says open: the poll brings the channel back, and it sends.
      h.fake.knobs.sendFailures = [];
      await quick.pollStates();
      expect(seen).toEqual(["disconnected", "connected", "disconnected", "connected"]);
      await quick.send(text(id, group));
      expect(sentTo(id)).toHaveLength(1);
    } finally {
      off();
      h.fake.knobs.sendFailures = [];
    }
  });

  it("a second create of the same instance (a retried create) configures it again", async () => {
    const id = newId("channel");
    await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
    await h.provider.createChannel({ id, name: "Evo" });
    await expect(h.provider.createChannel({ id, name: "Evo" })).resolves.toMatchObject({ ref: id, status: "connecting" });
  });

  it("pairing gives the QR code; a pairing code comes from a closed session (logout → close → connect with the number), after the gateway's 2-s answer, in qrcode.updated", async () => {
    const id = newId("channel");
    await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
    await h.provider.createChannel({ id, name: "Evo" });
    const qr = await h.provider.pairing(id);
    expect(qr).toMatchObject({ status: "connecting", automatic: false, sessionClosed: false, pairingCode: null, pairingCodePending: false });
    expect(qr.qrCode).toMatch(/^data:image\/png;base64,/);
    const logouts = h.fake.counters.logouts;
    // Evolution answers connect after a fixed 2 s, before WhatsApp gave the code: pending, not an error.
    const asked = await h.provider.pairing(id, { phoneNumber: "5511999998888" });
    expect(asked).toMatchObject({ status: "connecting", pairingCode: null, pairingCodePending: true, sessionClosed: false });
    expect(h.fake.counters.logouts).toBe(logouts + 1); // the session was connecting: the number would have been ignored
    // The code comes in qrcode.updated; the dashboard's next read shows it, its 60 s counted from its arrival.
    const code = await eventually(
      () => h.provider.pairing(id),
      (p) => p.pairingCode !== null,
    );
    const arrived = Date.now();
    expect(code.pairingCode).toBe(h.fake.instances.get(id)!.pairingCode);
    expect(code).toMatchObject({ pairingCode: expect.stringMatching(/^[A-Z0-9]{8}$/), pairingCodePending: false });
    expect(code.pairingCodeExpiresAt!.getTime()).toBeGreaterThanOrEqual(arrived - 2_000 + 55_000);
    expect(code.pairingCodeExpiresAt!.getTime()).toBeLessThanOrEqual(arrived + 61_000);
    // The gateway repeats the code in later answers: the expiry does not move; answers without one do not erase it.
    expect((await h.provider.pairing(id)).pairingCodeExpiresAt).toEqual(code.pairingCodeExpiresAt);
    await h.fake.setState(id, "connecting");
    const again = await h.provider.pairing(id);
    expect(again).toMatchObject({ pairingCode: code.pairingCode, status: "connecting" });
  });

  it("a pairing code whose qrcode.updated is lost arrives with the next connect's answer (the dashboard's poll)", async () => {
    const id = newId("channel");
    await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
    await h.provider.createChannel({ id, name: "Evo" });
    const inst = h.fake.instances.get(id)!;
    inst.webhook!.enabled = false;
    expect(await h.provider.pairing(id, { phoneNumber: "5511999997777" })).toMatchObject({ pairingCode: null, pairingCodePending: true });
    await until(() => Boolean(inst.pairingCode));
    expect(await h.provider.pairing(id)).toMatchObject({ pairingCode: inst.pairingCode, pairingCodePending: false, status: "connecting" });
  });
});

describe("Evolution provider: sends whose outcome is unknown", () => {
  const lookup = (m: OutboundMessage) => ({
    channelId: m.channelId,
    groupId: m.groupId,
    deliveryKey: m.deliveryKey,
    content: m.content,
    since: new Date(Date.now() - 60_000),
  });
  const slowNext = (ms = 1200) => Object.assign(h.fake.knobs, { slowSends: 1, slowSendMs: ms });

  it("a gateway still sending when the client gives up: unknown, one POST, then found by fingerprint", async () => {
    const { id, group } = await pairedChannel(short);
    const m = text(id, group);
    slowNext();
    h.fake.knobs.sendMessageEvents = false;
    try {
      await expect(short.send(m)).rejects.toBeInstanceOf(ProviderOutcomeUnknownError);
      // Not stored yet: a look-up now sees nothing (and must not be taken as "not sent").
      expect(await short.findSent(lookup(m))).toEqual({ kind: "not_found" });
      await h.fake.idle();
      const found = await short.findSent(lookup(m));
      expect(found).toMatchObject({ kind: "sent", receipt: { messageId: sentTo(id)[0].id } });
      expect(sentTo(id)).toHaveLength(1);
      expect(h.fake.sendRequests.filter((r) => r.number === group)).toHaveLength(1);
    } finally {
      h.fake.knobs.sendMessageEvents = true;
    }
  });

  it("a send.message event settles a lost answer at once (message_sent by delivery key)", async () => {
    const { id, group } = await pairedChannel(short);
    const m = text(id, group);
    const seen: string[] = [];
    const off = short.subscribe((e) => void (e.type === "message_sent" && seen.push(...e.receipts.map((r) => `${r.deliveryKey} ${r.messageId}`))));
    try {
      h.fake.knobs.dropAnswers = 1;
      await expect(short.send(m)).rejects.toBeInstanceOf(ProviderOutcomeUnknownError);
      await h.fake.idle();
      await until(() => seen.length > 0);
      expect(seen).toEqual([`${m.deliveryKey} ${sentTo(id)[0].id}`]);
    } finally {
      off();
    }
  });

  it("the fingerprint never claims a gateway id another delivery holds (same text, same group)", async () => {
    const { id, group } = await pairedChannel(short);
    const first = text(id, group, "Mesma mensagem");
    await short.send(first);
    const second = text(id, group, "Mesma mensagem");
    h.fake.knobs.loseSends = 1;
    h.fake.knobs.slowSendMs = 1200;
    await expect(short.send(second)).rejects.toBeInstanceOf(ProviderOutcomeUnknownError);
    await h.fake.idle();
    expect(await short.findSent(lookup(second))).toEqual({ kind: "not_found" });
    expect(sentTo(id)).toHaveLength(1);
  });

  it("a voice note (no text) whose answer was lost cannot be looked up: unsearchable", async () => {
    const { id, group } = await pairedChannel(short);
    const m: OutboundMessage = { ...text(id, group), content: { type: "audio", mediaUrl: "https://cdn.example.com/v.ogg", caption: "" } };
    slowNext();
    await expect(short.send(m)).rejects.toBeInstanceOf(ProviderOutcomeUnknownError);
    await h.fake.idle();
    expect(await short.findSent(lookup(m))).toEqual({ kind: "unsearchable" });
  });

  it("on a 2.4.0 gateway a caption-less image is found by the id we asked for (never a voice note)", async () => {
    const v24 = await startEvolutionProvider({ timeoutMs: 500 }, { version: "2.4.0", license: "active" });
    try {
      const cid = newId("channel");
      await (await getDb()).insert(channels).values({ id: cid, tenantId, name: "Evo", status: "connecting", providerRef: "" });
      await v24.provider.createChannel({ id: cid, name: "Evo" });
      await v24.fake.pair(cid);
      const group = v24.fake.instances.get(cid)!.groups[0].id;
      const image: OutboundMessage = { ...text(cid, group), content: { type: "image", mediaUrl: "https://cdn.example.com/p.png", caption: "" } };
      Object.assign(v24.fake.knobs, { slowSends: 1, slowSendMs: 1000, sendMessageEvents: false });
      await expect(v24.provider.send(image)).rejects.toBeInstanceOf(ProviderOutcomeUnknownError);
      await v24.fake.idle();
      expect(await v24.provider.findSent(lookup(image))).toMatchObject({ kind: "sent", receipt: { messageId: requestedMessageId(image.deliveryKey, 0) } });
      const audio: OutboundMessage = { ...text(cid, group), content: { type: "audio", mediaUrl: "https://cdn.example.com/v.ogg", caption: "" } };
      await v24.provider.send(audio);
      expect(v24.fake.messages.at(-1)!.id).not.toBe(requestedMessageId(audio.deliveryKey, 0));
      expect(v24.fake.sendRequests.at(-1)!.body.messageId).toBeUndefined();
    } finally {
      await v24.close();
    }
  });

  it("a 500 on sendText is unknown; a 500 on sendMedia (media preparation) is not sent, transient", async () => {
    const { id, group } = await pairedChannel();
    h.fake.failSend({ number: group, message: "Internal error", status: 500 });
    await expect(h.provider.send(text(id, group))).rejects.toBeInstanceOf(ProviderOutcomeUnknownError);
    h.fake.failSend({ number: group, message: "Error: ffmpeg exited with code 1", status: 500 });
    const err = await h.provider
      .send({ ...text(id, group), content: { type: "video", mediaUrl: "https://cdn.example.com/v.mp4", caption: "oi" } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ProviderSendError);
    expect(err.transient).toBe(true);
    expect(sentTo(id)).toHaveLength(0);
  });

  it("Evolution's 400 texts: transient ones retried later, rate-overlimit slows down, invalid fields are permanent", async () => {
    const { id, group } = await pairedChannel();
    for (const message of [evolutionSendErrors.timedOut, evolutionSendErrors.noSessions, evolutionSendErrors.mediaUpload, evolutionSendErrors.groupMetadata]) {
      h.fake.failSend({ number: group, message });
      const err = await h.provider.send(text(id, group)).catch((e) => e);
      expect(err, message).toBeInstanceOf(ProviderSendError);
      expect(err, message).toMatchObject({ transient: true, rateLimited: false });
    }
    // `Connection Closed` (nothing sent: the number is reconnecting) is handed back to be tried again in a moment, no
    // attempt used; a send that goes through ends it (docs/evolution.md#a-number-that-is-reconnecting).
    h.fake.failSend({ number: group, message: evolutionSendErrors.connectionClosed });
    const closed = await h.provider.send(text(id, group)).catch((e) => e);
    expect(closed).toBeInstanceOf(ProviderUnavailableError);
    expect(closed.retryAfterMs).toBeGreaterThan(0);
    expect(closed.retryAfterMs).toBeLessThanOrEqual(5_000);
    await h.provider.send(text(id, group));
    expect(sentTo(id)).toHaveLength(1);
    h.fake.failSend({ number: group, message: evolutionSendErrors.rateOverlimit });
    expect(await h.provider.send(text(id, group)).catch((e) => e)).toMatchObject({ transient: true, rateLimited: true });
    const bad = await h.provider.send({ ...text(id, group), content: { type: "image", mediaUrl: "not a url", caption: "x" } }).catch((e) => e);
    expect(bad).toBeInstanceOf(ProviderSendError);
    expect(bad.transient).toBe(false);
    // Only the send after `Connection Closed` went out.
    expect(sentTo(id)).toHaveLength(1);
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
    const found = await h.provider.findSent(lookup(m));
    expect(found).toMatchObject({ kind: "sent", receipt: { messageId: sentTo(id)[0].id } });
    await h.provider.send(m);
    expect(sentTo(id)).toHaveLength(1);
    // A key that never reached the gateway is absent.
    expect(await h.provider.findSent(lookup(text(id, group)))).toEqual({ kind: "absent" });
  });

  it("an offline instance makes sends unavailable (released, not failed)", async () => {
    const { id, group } = await pairedChannel();
    await h.fake.setState(id, "close");
    await expect(h.provider.send(text(id, group))).rejects.toBeInstanceOf(ProviderUnavailableError);
  });
});

describe("Evolution provider: mentions", () => {
  it("mentionsEveryOne goes with text and media only: Evolution drops it on voice notes and polls (their sendMessage branch passes no mentions)", async () => {
    const { id, group } = await pairedChannel();
    const m = text(id, group);
    await h.provider.send(m);
    await h.provider.send({ ...text(id, group), content: { type: "image", mediaUrl: "https://cdn.example.com/a.jpg", caption: "oi" } });
    await h.provider.send({ ...text(id, group), content: { type: "audio", mediaUrl: "https://cdn.example.com/a.ogg", caption: "" } });
    await h.provider.send({ ...text(id, group), content: { type: "poll", poll: { question: "Qual?", options: ["A", "B"], multiple_answers: false } } });
    const bodies = Object.fromEntries(
      h.fake.sendRequests
        .filter((r) => r.number === group)
        .slice(-4)
        .map((r) => [r.endpoint, r.body]),
    );
    expect(bodies.sendText.mentionsEveryOne).toBe(true);
    expect(bodies.sendMedia.mentionsEveryOne).toBe(true);
    expect(bodies.sendWhatsAppAudio).not.toHaveProperty("mentionsEveryOne");
    expect(bodies.sendPoll).not.toHaveProperty("mentionsEveryOne");
  });
});

describe("Evolution provider: media file names", () => {
  it("fileName always carries an extension: file_name, the URL's basename, or <type>.<default>", async () => {
    const { id, group } = await pairedChannel();
    const cases: [MediaType, string, string | undefined, string][] = [
      ["document", "https://cdn.example.com/files/catalogo.pdf", undefined, "catalogo.pdf"],
      ["document", "https://cdn.example.com/files/catalogo.pdf", "Catálogo 2025", "Catálogo 2025.pdf"],
      ["document", "https://cdn.example.com/download?id=7", undefined, "document.pdf"],
      ["image", "https://cdn.example.com/img/abc", undefined, "image.jpg"],
      ["video", "https://cdn.example.com/v/aula.mp4", undefined, "aula.mp4"],
    ];
    for (const [type, mediaUrl, fileName, expected] of cases) {
      await h.provider.send({ ...text(id, group), content: { type, mediaUrl, caption: "", fileName } });
      const last = sentTo(id).at(-1)!;
      expect(last.body.fileName).toBe(expected);
      expect(last.mimetype).not.toBe("false");
    }
    expect(mediaFileName("document", "https://x.example.com/a/b/relatorio.final.docx")).toBe("relatorio.final.docx");
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

  it("rate-limited (500 rate-overlimit): a stale cached list is served; with no cache it is unavailable", async () => {
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
