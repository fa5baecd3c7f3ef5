import { and, eq, isNotNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { channels, deliveries, outboxEvents } from "../../db/schema";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { runGatewayCheck } from "../../server/messaging/gateway-check";
import { EvolutionProvider } from "../../server/messaging/evolution";
import { evolutionSendErrors, type FakeEvolution } from "../fake-evolution";
import { expectEnvelope, newTenant, until, type Api, zeroPacingWith } from "../helpers";
import type { TestServer } from "../http-server";
import { startEvolutionWithRunner } from "../evolution-service";

// The whole service with MESSAGING_PROVIDER=evolution, against the fake gateway: the services are
// built on the first request, after these variables are set.
let fake: FakeEvolution;
let server: TestServer;
let api: Api;
let stop: () => Promise<void>;

beforeAll(async () => {
  // Unknown outcomes are looked up 1 s after the attempt; retries and a number's cool-down after rate-overlimit are short.
  const env = { EVOLUTION_RECONCILE_AFTER_SECONDS: "1", SEND_RETRY_SCHEDULE: "200,400", NUMBER_COOLING_BASE_MS: "300" };
  ({ fake, server, api, stop } = await startEvolutionWithRunner({ env, channelLimit: 50 }));
});
afterAll(() => stop());

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
    expect(inst.webhook?.url).toBe(`${server.url}/api/evolution/webhook/${res.json.id_channel}`);
    expect(inst.webhook?.headers?.["x-webhook-token"]).toBeTruthy();

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
      health: expect.objectContaining({ state: "ok" }),
    });
  });

  it("list-groups answers the gateway's groups (cached; community parents left out); 503 once the number goes offline", async () => {
    const id = await connectedChannel();
    const res = await api("GET", `/api/external/list-groups/${id}`);
    expect(res.status).toBe(200);
    expect(res.json.groups).toEqual(
      fake.instances
        .get(id)!
        .groups.filter((g) => !g.isCommunity)
        .map((g) => ({ id_group: g.id, name: g.subject })),
    );
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
    const dashboard = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: api.tenantId, userId: "u", role: "owner" },
      now: new Date(),
    });
    // The composer learns that carousels go out as the fallback here.
    expect(await dashboard.channels.platform()).toEqual({
      provider: "evolution",
      capabilities: { carousel: false, forward: false, linkPreview: true, mentionAll: true, receipts: false, pollOptions: 10 },
    });
    const { json } = await api("POST", "/api/external/create-channel", { name: "Pareamento" });
    const qr = await dashboard.channels.pairing({ id_channel: json.id_channel });
    expect(qr).toMatchObject({ provider: "evolution", status: "connecting", automatic: false });
    expect(qr.qr_code).toMatch(/^data:image\/png;base64,/);
    // A pairing code only comes from a closed session: logout → close → connect with the number.
    const logouts = fake.counters.logouts;
    // The gateway answers after 2 s, before WhatsApp gave the code: the screen says it is coming.
    const asked = await dashboard.channels.requestPairing({ id_channel: json.id_channel, phone_number: "5511999998888" });
    expect(asked).toMatchObject({ pairing_code: null, pairing_code_pending: true, session_closed: false });
    expect(fake.counters.logouts).toBe(logouts + 1);
    // It arrives (qrcode.updated) and the dashboard's poll shows it, with its 60 s.
    const code = await until(
      () => dashboard.channels.pairing({ id_channel: json.id_channel }),
      (p) => p.pairing_code !== null,
    );
    expect(code).toMatchObject({ pairing_code: expect.stringMatching(/^[A-Z0-9]{8}$/), pairing_code_pending: false });
    expect(Date.parse(code.pairing_code_expires_at!)).toBeGreaterThan(Date.now() + 50_000);
    // The gateway's later answers do not erase it.
    expect((await dashboard.channels.pairing({ id_channel: json.id_channel })).pairing_code).toBe(code.pairing_code);
    await expect(dashboard.channels.requestPairing({ id_channel: json.id_channel, phone_number: "abc" })).rejects.toThrow(/phone_number|digits/);
    // The query changes nothing (a GET a cross-site link could send): a phone_number there is refused, no logout, no code asked.
    const before = { logouts: fake.counters.logouts, code: (await dashboard.channels.pairing({ id_channel: json.id_channel })).pairing_code };
    await expect(dashboard.channels.pairing({ id_channel: json.id_channel, phone_number: "5511999997777" } as never)).rejects.toThrow(
      /phone_number|nrecognized/,
    );
    expect(fake.counters.logouts).toBe(before.logouts);
    expect((await dashboard.channels.pairing({ id_channel: json.id_channel })).pairing_code).toBe(before.code);

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

describe("the gateway as it really behaves", () => {
  const dashboard = async () => {
    const { db, provider } = await getServices();
    return createCallerFactory(appRouter)({ db, provider, caller: { kind: "session", tenantId: api.tenantId, userId: "u", role: "owner" }, now: new Date() });
  };

  it("a gateway `close` event (date_time 3 h early) gives a channel_status webhook stamped with real time", async () => {
    const id = await connectedChannel();
    const before = Date.now();
    await fake.setState(id, "close");
    const db = await getDb();
    const events = await until(
      () =>
        db
          .select()
          .from(outboxEvents)
          .where(and(eq(outboxEvents.tenantId, api.tenantId), eq(outboxEvents.type, "channel_status"))),
      (rows) =>
        rows.some(
          (e) =>
            (e.payload as { data: { id_channel: string; status: string } }).data.id_channel === id &&
            (e.payload as { data: { status: string } }).data.status === "disconnected",
        ),
    );
    const ev = events.find(
      (e) =>
        (e.payload as { data: { id_channel: string; status: string } }).data.id_channel === id &&
        (e.payload as { data: { status: string } }).data.status === "disconnected",
    )!;
    const stamped = Date.parse((ev.payload as { timestamp: string }).timestamp);
    expect(stamped).toBeGreaterThanOrEqual(before - 1000);
    expect(stamped).toBeLessThanOrEqual(Date.now());
    // The gateway's own stamp was 3 hours earlier.
    const posted = fake.webhookDeliveries.filter((d) => (d.body as { instance: string; data: { state?: string } }).instance === id).at(-1)!.body as {
      date_time: string;
    };
    expect(Date.parse(posted.date_time)).toBeLessThan(before - 2 * 3_600_000);
  });

  it("legacy <phone>-<timestamp>@g.us groups are listed and go into a segment; community parents are not listed nor accepted", async () => {
    const id = await connectedChannel();
    const groups = (await api("GET", `/api/external/list-groups/${id}`)).json.groups as { id_group: string }[];
    const legacy = fake.instances.get(id)!.groups.find((g) => /^\d+-\d+@g\.us$/.test(g.id))!;
    const parent = fake.instances.get(id)!.groups.find((g) => g.isCommunity)!;
    expect(groups.map((g) => g.id_group)).toContain(legacy.id);
    expect(groups.map((g) => g.id_group)).not.toContain(parent.id);
    const seg = await api("POST", "/api/external/create-segment", { name: "Antigos", id_channel: [id], groups: [legacy.id] });
    expect(seg.status).toBe(201);
    expect(seg.json.total_groups).toBe(1);
    expectEnvelope(await api("POST", "/api/external/create-segment", { name: "Comunidade", id_channel: [id], groups: [parent.id] }), 400, "Bad Request");
    // Admins-only groups are flagged for the dashboard, not in the published list.
    const detailed = await (await dashboard()).channels.groupsDetailed({ id_channel: id });
    expect(detailed.groups.filter((g) => g.admins_only).length).toBeGreaterThan(0);
    expect(JSON.stringify(groups)).not.toContain("admins_only");
  });

  it("five concurrent list-groups calls cause one gateway listing", async () => {
    const id = await connectedChannel();
    const before = fake.counters.fetchAllGroups;
    const answers = await Promise.all(Array.from({ length: 5 }, () => api("GET", `/api/external/list-groups/${id}`)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(fake.counters.fetchAllGroups - before).toBe(1);
  });

  it("a lost instance (404) is created again when the service meets it", async () => {
    const id = await connectedChannel();
    fake.loseInstance(id);
    expectEnvelope(await api("GET", `/api/external/list-groups/${id}`), 503, "Service Unavailable");
    expect(fake.instances.has(id)).toBe(true);
    expect(fake.instances.get(id)!.webhook?.url).toBe(`${server.url}/api/evolution/webhook/${id}`);
    expect(
      await until(
        () => status(id),
        (s) => s === "disconnected",
      ),
    ).toBe("disconnected");
    // It pairs again through the new instance (its webhooks carry the new secret).
    await fake.pair(id);
    expect(
      await until(
        () => status(id),
        (s) => s === "connected",
      ),
    ).toBe("connected");
  });

  it("the webhook secret travels in a header; the old URL form (secret in the path) still works", async () => {
    const id = await connectedChannel();
    const { url, headers } = fake.instances.get(id)!.webhook!;
    const secret = headers!["x-webhook-token"];
    const event = (state: string) => JSON.stringify({ event: "connection.update", instance: id, data: { state }, date_time: "2020-01-01T00:00:00.000Z" });
    expect((await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: event("close") })).status).toBe(401);
    expect((await fetch(`${url}/${secret}`, { method: "POST", headers: { "content-type": "application/json" }, body: event("close") })).status).toBe(200);
    expect(
      await until(
        () => status(id),
        (s) => s === "disconnected",
      ),
    ).toBe("disconnected");
    expect((await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-webhook-token": secret }, body: event("open") })).status).toBe(
      200,
    );
    expect(
      await until(
        () => status(id),
        (s) => s === "connected",
      ),
    ).toBe("connected");
  });

  it("a tenant reads whether the gateway answered, never an operator detail: no URL, version, warnings nor reminders, up or down", async () => {
    const { provider } = await getServices();
    const quiet = { info: () => {}, warn: () => {} };
    // The operator's own check (the log) has them all.
    const full = await runGatewayCheck(provider, quiet);
    expect(full).toMatchObject({ reachable: true, version: "2.3.7" });
    const up = await (await dashboard()).channels.gatewayCheck();
    expect(Object.keys(up!).sort()).toEqual(["checkedAt", "provider", "reachable"]);
    expect(up).toMatchObject({ provider: "evolution", reachable: true });
    const downUrl = "http://127.0.0.1:9";
    const down = new EvolutionProvider((await getServices()).db, {
      apiUrl: downUrl,
      apiKey: "k",
      webhookBaseUrl: downUrl,
      timeoutMs: 300,
      retries: 0,
      groupsTtlMs: 0,
    });
    try {
      const logged = await runGatewayCheck(down, quiet);
      expect(logged!.warnings.join("\n")).toContain(downUrl);
      const seen = await (await dashboard()).channels.gatewayCheck();
      expect(seen).toMatchObject({ reachable: false });
      const text = JSON.stringify(seen);
      expect(text).not.toContain("127.0.0.1:9");
      expect(text).not.toContain("2.3.7");
    } finally {
      await runGatewayCheck(provider, quiet);
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

  it("sends a text with mentionsEveryOne and link preview to every group; reads are unavailable (never 0 by mistake)", async () => {
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

    // Evolution never forwards group receipts: the service says reads are unavailable instead of 0.
    expect(info.json.reads_available).toBe(false);
    const dropped = fake.droppedGroupReceipts;
    for (const m of sent) await fake.receipt(m.id, "READ");
    expect(fake.droppedGroupReceipts).toBe(dropped + 3);
    const db = await getDb();
    expect(
      await db
        .select()
        .from(deliveries)
        .where(and(eq(deliveries.campaignId, res.json.id_campaign), isNotNull(deliveries.readAt))),
    ).toEqual([]);
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

  it("a voice note goes through sendWhatsAppAudio (without mentionsEveryOne, which the gateway drops there) and a document keeps its file name", async () => {
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
        // Asked to mention everyone: Evolution drops mentionsEveryOne on a voice note, so it is not sent there (issue 32).
        mention_all: true,
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
    expect(sent[0].body).not.toHaveProperty("mentionsEveryOne");
    expect(sent[1].body).toMatchObject({ mentionsEveryOne: true });
    expect(sent[1]).toMatchObject({ endpoint: "sendMedia", body: { mediatype: "document", media: "https://cdn.example.com/d.pdf", fileName: "catalogo.pdf" } });
  });
});

describe("exactly once and the right failures on a gateway that behaves like Evolution", () => {
  async function segment(count: number) {
    const id = await connectedChannel();
    const groups = (await api("GET", `/api/external/list-groups/${id}`)).json.groups.map((g: { id_group: string }) => g.id_group).slice(0, count);
    const { json } = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [id], groups });
    return { channel: id, segment: json.id_segment as string, groups: groups as string[] };
  }
  const finished = (id: string) =>
    until(
      () => api("GET", `/api/external/info-campaign/${id}`),
      (r) => ["completed", "failed"].includes(r.json.status),
      20_000,
    );
  const perGroup = (channel: string) => {
    const counts = new Map<string, number>();
    for (const m of fake.messages.filter((x) => x.instance === channel)) counts.set(m.number, (counts.get(m.number) ?? 0) + 1);
    return counts;
  };

  it("sends answered after the client's time-out (or never) end with exactly one message per group", async () => {
    for (const events of [true, false]) {
      const s = await segment(5);
      // Two sends accepted by WhatsApp only after our 1 s time-out, one whose answer is dropped.
      Object.assign(fake.knobs, { slowSends: 2, slowSendMs: 1500, dropAnswers: 1, sendMessageEvents: events });
      try {
        const res = await api("POST", "/api/external/create-campaign/message", {
          name: `Lenta ${events}`,
          id_segment: s.segment,
          message: `Aula ao vivo hoje ${events}`,
        });
        expect(res.status).toBe(201);
        const info = await finished(res.json.id_campaign);
        expect(info.json).toMatchObject({ status: "completed", groups: { total: 5, sent: 5, pending: 0, failed: 0 } });
        await fake.idle();
        expect([...perGroup(s.channel).entries()].sort()).toEqual([...s.groups].sort().map((g) => [g, 1]));
        expect(fake.sendRequests.filter((r) => s.groups.includes(r.number))).toHaveLength(5);
        const rows = await (await getDb()).select().from(deliveries).where(eq(deliveries.campaignId, res.json.id_campaign));
        const ids = rows.map((d) => d.providerMessageId);
        expect(new Set(ids).size).toBe(5);
        expect(ids.every((id) => fake.messages.some((m) => m.id === id))).toBe(true);
      } finally {
        fake.knobs.sendMessageEvents = true;
      }
    }
  });

  it("400 rate-overlimit and No sessions are retried and sent, not failed; rate-overlimit cools the number without using a retry", async () => {
    const s = await segment(4);
    fake.failSend({ number: s.groups[0], message: evolutionSendErrors.rateOverlimit });
    fake.failSend({ number: s.groups[1], message: evolutionSendErrors.rateOverlimit });
    fake.failSend({ number: s.groups[2], message: evolutionSendErrors.noSessions });
    fake.failSend({ number: s.groups[3], message: evolutionSendErrors.noSessions });
    const res = await api("POST", "/api/external/create-campaign/message", { name: "Limite", id_segment: s.segment, message: "Oferta relâmpago" });
    const info = await finished(res.json.id_campaign);
    expect(info.json.groups).toEqual({ total: 4, sent: 4, pending: 0, failed: 0 });
    expect(perGroup(s.channel).size).toBe(4);
    expect([...perGroup(s.channel).values()].every((n) => n === 1)).toBe(true);
    // The number cooled (CONTRACT §7): NUMBER_COOLING_BASE_MS, doubled by a second signal after the first cool-down.
    const [ch] = await (await getDb()).select().from(channels).where(eq(channels.id, s.channel));
    expect(ch.rateLimitedAt).not.toBeNull();
    expect(ch.coolingMs).toBeGreaterThanOrEqual(300);
    // A rate-limited attempt is given back (the group loses no retry); No sessions is a failed attempt, retried.
    const rows = await (await getDb()).select().from(deliveries).where(eq(deliveries.campaignId, res.json.id_campaign));
    const attempts = Object.fromEntries(rows.map((d) => [d.groupId, d.attempts]));
    expect([0, 1, 2, 3].map((i) => attempts[s.groups[i]])).toEqual([1, 1, 2, 2]);
  });

  it("a document without file_name reaches the gateway with a file name and a real mimetype", async () => {
    const s = await segment(1);
    const res = await api("POST", "/api/external/create-campaign/message", {
      name: "Doc",
      id_segment: s.segment,
      message: "",
      message_type: "document",
      media_url: "https://cdn.example.com/materiais/apostila.pdf",
    });
    expect((await finished(res.json.id_campaign)).json.groups.sent).toBe(1);
    const [m] = fake.messages.filter((x) => x.instance === s.channel);
    expect(m).toMatchObject({ endpoint: "sendMedia", body: { fileName: "apostila.pdf" }, mimetype: "application/pdf" });
  });

  it("a voice note whose answer is lost ends failed 'outcome unknown', is not resent, and 'send again' sends it once", async () => {
    const s = await segment(1);
    Object.assign(fake.knobs, { loseSends: 1, slowSendMs: 1500 });
    const res = await api("POST", "/api/external/create-campaign/message", {
      name: "Áudio",
      id_segment: s.segment,
      message: "",
      message_type: "audio",
      media_url: "https://cdn.example.com/audio/aviso.ogg",
    });
    const info = await finished(res.json.id_campaign);
    expect(info.json).toMatchObject({ status: "failed", groups: { total: 1, sent: 0, failed: 1 } });
    // The counters per channel move with the campaign's (campaigns.channel_counts).
    expect(info.json.channels).toEqual([{ id_channel: s.channel, sent: 0, pending: 0, failed: 1 }]);
    const audioPosts = () => fake.sendRequests.filter((r) => r.number === s.groups[0]).length;
    expect(audioPosts()).toBe(1);
    const { db, provider } = await getServices();
    const dashboard = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: api.tenantId, userId: "u", role: "owner" },
      now: new Date(),
    });
    const [row] = await dashboard.campaigns.deliveries({ id_campaign: res.json.id_campaign });
    expect(row).toMatchObject({ state: "failed", error: "outcome unknown" });

    await new Promise((r) => setTimeout(r, 1500));
    expect(audioPosts()).toBe(1); // nothing resent it

    expect(await dashboard.campaigns.resendDelivery({ id_campaign: res.json.id_campaign, id_group: s.groups[0] })).toMatchObject({ status: "sending" });
    const again = await finished(res.json.id_campaign);
    expect(again.json).toMatchObject({ status: "completed", groups: { total: 1, sent: 1, failed: 0 } });
    expect(again.json.channels).toEqual([{ id_channel: s.channel, sent: 1, pending: 0, failed: 0 }]);
    expect(audioPosts()).toBe(2);
    expect(fake.messages.filter((m) => m.number === s.groups[0])).toHaveLength(1);
    await expect(dashboard.campaigns.resendDelivery({ id_campaign: res.json.id_campaign, id_group: s.groups[0] })).rejects.toThrow(/not failed/);
  });
});

describe("a late send.message", () => {
  it("settles a delivery already failed 'outcome unknown' as sent: counters move back, the campaign is completed", async () => {
    // A tenant of its own, polled every 400 ms: this test waits ~15 s, and the file's key has spent much of its 300 requests a minute.
    const t = await newTenant(server.url);
    expect((await t("PATCH", "/api/external/edit-settings", zeroPacingWith(1))).status).toBe(200);
    const poll = async (campaign: string, done: (status: string) => boolean, ms: number) => {
      const end = Date.now() + ms;
      for (;;) {
        const r = await t("GET", `/api/external/info-campaign/${campaign}`);
        if (done(r.json.status) || Date.now() > end) return r;
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
    };
    const id = (await t("POST", "/api/external/create-channel", { name: "Tarde" })).json.id_channel as string;
    await fake.pair(id);
    await until(
      async () => (await t("PUT", `/api/external/edit-channel/${id}`, { name: "Tarde" })).json.status,
      (s) => s === "connected",
    );
    const [group] = (await t("GET", `/api/external/list-groups/${id}`)).json.groups.map((g: { id_group: string }) => g.id_group);
    const seg = (await t("POST", "/api/external/create-segment", { name: "Tarde", id_channel: [id], groups: [group] })).json.id_segment;
    // Attempts 1 and 2 never go out; attempt 3 is accepted by WhatsApp 6 s after its POST, long after our
    // 1 s time-out and its two look-ups (1 s apart): with SEND_RETRY_SCHEDULE=200,400 no retry is left,
    // so it is `failed` "outcome unknown" before the gateway's send.message arrives.
    Object.assign(fake.knobs, { loseSends: 2, slowSends: 1, slowSendMs: 6000 });
    try {
      const res = await t("POST", "/api/external/create-campaign/message", { name: "Tarde", id_segment: seg, message: "Resposta que chega tarde" });
      expect(res.status).toBe(201);
      const campaign = res.json.id_campaign as string;
      const failed = await poll(campaign, (s) => ["completed", "failed"].includes(s), 20_000);
      expect(failed.json).toMatchObject({ status: "failed", groups: { total: 1, sent: 0, pending: 0, failed: 1 } });
      expect(failed.json.channels).toEqual([{ id_channel: id, sent: 0, pending: 0, failed: 1 }]);
      const db = await getDb();
      const [before] = await db.select().from(deliveries).where(eq(deliveries.campaignId, campaign));
      expect(before).toMatchObject({ state: "failed", error: "outcome unknown", attempts: 3 });
      expect(fake.messages.filter((m) => m.number === group)).toHaveLength(0);

      // WhatsApp accepts attempt 3; the gateway posts send.message to our webhook.
      await fake.idle();
      const [m] = fake.messages.filter((x) => x.number === group);
      expect(m).toBeDefined();
      const done = await poll(campaign, (s) => s === "completed", 10_000);
      expect(done.json.groups).toEqual({ total: 1, sent: 1, pending: 0, failed: 0 });
      expect(done.json.channels).toEqual([{ id_channel: id, sent: 1, pending: 0, failed: 0 }]);
      const [after] = await db.select().from(deliveries).where(eq(deliveries.campaignId, campaign));
      expect(after).toMatchObject({ state: "sent", providerMessageId: m.id, error: null });
      const statuses = await db
        .select()
        .from(outboxEvents)
        .where(and(eq(outboxEvents.tenantId, t.tenantId), eq(outboxEvents.type, "campaign_status")));
      expect(statuses.map((e) => (e.payload as { data: { id_campaign: string; status: string; previous_status: string } }).data)).toContainEqual(
        expect.objectContaining({ id_campaign: campaign, status: "completed", previous_status: "failed" }),
      );
      // One message at the gateway: three POSTs, two of which never went out, none sent again afterwards.
      expect(fake.messages.filter((x) => x.number === group)).toHaveLength(1);
      expect(fake.sendRequests.filter((r) => r.number === group)).toHaveLength(3);
    } finally {
      Object.assign(fake.knobs, { loseSends: 0, slowSends: 0, slowSendMs: 3000 });
    }
  }, 40_000);
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
