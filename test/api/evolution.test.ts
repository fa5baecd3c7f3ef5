import { and, eq, isNotNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { deliveries, outboxEvents } from "../../db/schema";
import { InProcessRunner } from "../../inngest/runner";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { startFakeEvolution, type FakeEvolution } from "../fake-evolution";
import { expectEnvelope, newTenant, until, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

// The whole service with MESSAGING_PROVIDER=evolution, against the fake gateway: the services are
// built on the first request, after these variables are set.
let fake: FakeEvolution;
let server: TestServer;
let runner: InProcessRunner;
let api: Api;

beforeAll(async () => {
  fake = await startFakeEvolution();
  Object.assign(process.env, {
    MESSAGING_PROVIDER: "evolution",
    EVOLUTION_API_URL: fake.url,
    EVOLUTION_API_KEY: fake.apiKey,
    EVOLUTION_TIMEOUT_MS: "1000",
    EVOLUTION_RETRIES: "1",
  });
  server = await startTestServer();
  process.env.EVOLUTION_WEBHOOK_BASE_URL = server.url;
  const services = await getServices();
  expect(services.provider.name).toBe("evolution");
  runner = new InProcessRunner(services, { maxSleepMs: 50 }).start();
  api = await newTenant(server.url, { channelLimit: 50 });
  const zeroPacing = {
    dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 10, min_campaign_interval: 0, max_campaign_interval: 0 },
  };
  expect((await api("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
});
afterAll(async () => {
  await runner.stop();
  await server.close();
  await fake.close();
});

const status = async (id: string) => (await api("PUT", `/api/external/edit-channel/${id}`, { name: "Evo" })).json.status;

async function connectedChannel() {
  const { json } = await api("POST", "/api/external/create-channel", { name: "Evo" });
  await fake.pair(json.id_channel);
  await until(
    () => status(json.id_channel),
    (s) => s === "connected",
  );
  return json.id_channel as string;
}

describe("channels on Evolution API", () => {
  it("create-channel creates the instance (201, connecting) with our webhook; pairing makes it connected and emits channel_status", async () => {
    const res = await api("POST", "/api/external/create-channel", { name: "Vendas" });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, status: "connecting", channel_ref: res.json.id_channel });
    const inst = fake.instances.get(res.json.id_channel)!;
    expect(inst.webhook?.url.startsWith(`${server.url}/api/evolution/webhook/${res.json.id_channel}/`)).toBe(true);

    expect(expectEnvelope(await api("GET", `/api/external/list-groups/${res.json.id_channel}`), 503, "Service Unavailable").message).toContain("connecting");

    await fake.pair(res.json.id_channel);
    expect(
      await until(
        () => status(res.json.id_channel),
        (s) => s === "connected",
      ),
    ).toBe("connected");
    const events = await (await getDb())
      .select()
      .from(outboxEvents)
      .where(and(eq(outboxEvents.tenantId, api.tenantId), eq(outboxEvents.type, "channel_status")));
    expect(events.map((e) => (e.payload as { data: unknown }).data)).toContainEqual({
      id_channel: res.json.id_channel,
      name: "Vendas",
      status: "connected",
      previous_status: "connecting",
    });
  });

  it("list-groups answers the gateway's groups (cached); 503 once the number goes offline", async () => {
    const id = await connectedChannel();
    const res = await api("GET", `/api/external/list-groups/${id}`);
    expect(res.status).toBe(200);
    expect(res.json.groups).toEqual(fake.instances.get(id)!.groups.map((g) => ({ id_group: g.id, name: g.subject })));
    const fetches = fake.counters.fetchAllGroups;
    expect((await api("GET", `/api/external/list-groups/${id}`)).status).toBe(200);
    expect(fake.counters.fetchAllGroups).toBe(fetches);

    await fake.setState(id, "close");
    expect(
      await until(
        () => status(id),
        (s) => s === "disconnected",
      ),
    ).toBe("disconnected");
    expectEnvelope(await api("GET", `/api/external/list-groups/${id}`), 503, "Service Unavailable");
  });

  it("dashboard pairing screen: live QR code, pairing code for a number; disconnect logs the number out", async () => {
    const { db, provider } = await getServices();
    const dashboard = createCallerFactory(appRouter)({ db, provider, caller: { kind: "session", tenantId: api.tenantId, userId: "u" }, now: new Date() });
    // The composer learns that carousels go out as the fallback here.
    expect(await dashboard.channels.platform()).toEqual({
      provider: "evolution",
      capabilities: { carousel: false, forward: false, linkPreview: true, mentionAll: true },
    });
    const { json } = await api("POST", "/api/external/create-channel", { name: "Pareamento" });
    const qr = await dashboard.channels.pairing({ id_channel: json.id_channel });
    expect(qr).toMatchObject({ provider: "evolution", status: "connecting", automatic: false });
    expect(qr.qr_code).toMatch(/^data:image\/png;base64,/);
    expect((await dashboard.channels.pairing({ id_channel: json.id_channel, phone_number: "5511999998888" })).pairing_code).toBe("WZYEH1YY");
    await expect(dashboard.channels.pairing({ id_channel: json.id_channel, phone_number: "abc" })).rejects.toThrow(/phone_number|digits/);

    await fake.pair(json.id_channel);
    await until(
      () => status(json.id_channel),
      (s) => s === "connected",
    );
    expect(await dashboard.channels.pairing({ id_channel: json.id_channel })).toMatchObject({ status: "connected", qr_code: null });
    await dashboard.channels.disconnect({ id_channel: json.id_channel });
    expect(fake.instances.get(json.id_channel)!.state).toBe("close");
    expect(
      await until(
        () => status(json.id_channel),
        (s) => s === "disconnected",
      ),
    ).toBe("disconnected");
  });

  it("a gateway that is down answers 503 on list-groups, never 500", async () => {
    const id = await connectedChannel();
    fake.knobs.latencyMs = 1500; // beyond EVOLUTION_TIMEOUT_MS
    try {
      expectEnvelope(await api("GET", `/api/external/list-groups/${id}`), 503, "Service Unavailable");
    } finally {
      fake.knobs.latencyMs = 0;
    }
  });
});

describe("campaigns through Evolution API", () => {
  async function segment(count: number) {
    const id = await connectedChannel();
    const groups = (await api("GET", `/api/external/list-groups/${id}`)).json.groups.map((g: { id_group: string }) => g.id_group).slice(0, count);
    const { json } = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [id], groups });
    return { channel: id, segment: json.id_segment as string, groups: groups as string[] };
  }

  it("sends a text with mentionsEveryOne and link preview to every group; acks and reads are recorded", async () => {
    const s = await segment(3);
    const res = await api("POST", "/api/external/create-campaign/message", {
      name: "Oferta",
      id_segment: s.segment,
      message: "Veja https://loja.example.com",
      mention_all: true,
      link_preview: true,
    });
    expect(res.status).toBe(201);
    const info = await until(
      () => api("GET", `/api/external/info-campaign/${res.json.id_campaign}`),
      (r) => r.json.status === "completed",
    );
    expect(info.json.groups).toEqual({ total: 3, sent: 3, pending: 0, failed: 0 });
    const sent = fake.messages.filter((m) => m.instance === s.channel);
    expect(sent.map((m) => m.number).sort()).toEqual([...s.groups].sort());
    for (const m of sent)
      expect(m).toMatchObject({ endpoint: "sendText", body: { text: "Veja https://loja.example.com", mentionsEveryOne: true, linkPreview: true } });

    for (const m of sent) await fake.receipt(m.id, "DELIVERY_ACK");
    await fake.receipt(sent[0].id, "READ");
    const db = await getDb();
    const acked = await until(
      () =>
        db
          .select()
          .from(deliveries)
          .where(and(eq(deliveries.campaignId, res.json.id_campaign), isNotNull(deliveries.ackedAt))),
      (rows) => rows.length === 3,
    );
    expect(acked).toHaveLength(3);
    const read = await until(
      () =>
        db
          .select()
          .from(deliveries)
          .where(and(eq(deliveries.campaignId, res.json.id_campaign), isNotNull(deliveries.readAt))),
      (rows) => rows.length === 1,
    );
    expect(read.map((d) => d.groupId)).toEqual([sent[0].number]);
  });

  it("a carousel goes out as the documented fallback: one image per card with its text and links, in order", async () => {
    const s = await segment(1);
    const cards = [1, 2].map((n) => ({
      image_url: `https://cdn.example.com/${n}.png`,
      text: `Card ${n}`,
      buttons: [{ label: "Comprar", type: "URL", url: `https://loja.example.com/${n}` }],
    }));
    const res = await api("POST", "/api/external/create-campaign/carousel", {
      name: "Vitrine",
      id_segment: s.segment,
      carousel_data: { message: "Confira", cards },
    });
    expect(res.status).toBe(201);
    await until(
      () => api("GET", `/api/external/info-campaign/${res.json.id_campaign}`),
      (r) => r.json.status === "completed",
    );
    const sent = fake.messages.filter((m) => m.instance === s.channel);
    expect(sent.map((m) => [m.endpoint, m.body.mediatype, m.body.media])).toEqual([
      ["sendMedia", "image", "https://cdn.example.com/1.png"],
      ["sendMedia", "image", "https://cdn.example.com/2.png"],
    ]);
    expect(sent[0].body.caption).toBe("Confira\n\nCard 1\n\nComprar: https://loja.example.com/1");
    expect(sent[1].body.caption).toBe("Card 2\n\nComprar: https://loja.example.com/2");
  });

  it("a voice note goes through sendWhatsAppAudio and a document keeps its file name", async () => {
    const s = await segment(1);
    for (const [type, url, extra] of [
      ["audio", "https://cdn.example.com/a.ogg", {}],
      ["document", "https://cdn.example.com/d.pdf", { file_name: "catalogo.pdf" }],
    ] as const) {
      const res = await api("POST", "/api/external/create-campaign/message", {
        name: type,
        id_segment: s.segment,
        message: "",
        message_type: type,
        media_url: url,
        ...extra,
      });
      expect(res.status).toBe(201);
      await until(
        () => api("GET", `/api/external/info-campaign/${res.json.id_campaign}`),
        (r) => r.json.status === "completed",
      );
    }
    const sent = fake.messages.filter((m) => m.instance === s.channel);
    expect(sent[0]).toMatchObject({ endpoint: "sendWhatsAppAudio", body: { audio: "https://cdn.example.com/a.ogg" } });
    expect(sent[1]).toMatchObject({ endpoint: "sendMedia", body: { mediatype: "document", media: "https://cdn.example.com/d.pdf", fileName: "catalogo.pdf" } });
  });
});

describe("the simulator's endpoints on Evolution API", () => {
  it("/api/simulator/* is 404 in the envelope, even with a valid API key", async () => {
    const channel = await connectedChannel();
    const calls: [string, string, unknown?][] = [
      ["GET", "/api/simulator/messages"],
      ["POST", "/api/simulator/latency", { ms: 1000 }],
      ["POST", `/api/simulator/channels/${channel}/state`, { connected: false }],
      ["POST", "/api/simulator/groups/120363000000000000001%40g.us/failures", { always: true }],
    ];
    for (const [method, path, body] of calls) expectEnvelope(await api(method, path, body), 404, "Not Found");
    expect(await status(channel)).toBe("connected");
  });
});
