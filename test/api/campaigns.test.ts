import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { getServices } from "../../server/services";
import { expectEnvelope, newTenant, until, type Api, zeroPacing } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let runner: InProcessRunner;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  runner = new InProcessRunner(await getServices(), { maxSleepMs: 50 }).start();
  api = await newTenant(server.url, { channelLimit: 50 });
  expect((await api("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
});
afterAll(async () => {
  await runner.stop();
  await server.close();
});

async function segmentWithGroups(t: Api, count: number, monitoring = false) {
  const { json: ch } = await t("POST", "/api/external/create-channel", { name: "Canal" });
  const groups = (await t("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups.map((g: { id_group: string }) => g.id_group);
  const { json: seg } = await t("POST", "/api/external/create-segment", { name: "Seg", id_channel: [ch.id_channel], groups: groups.slice(0, count) });
  if (monitoring) await t("POST", "/api/external/monitoring/group", { id_segment: seg.id_segment, id_channel: ch.id_channel, id_group: groups[19] });
  return { channel: ch.id_channel as string, segment: seg.id_segment as string, totalGroups: seg.total_groups as number, groups: groups as string[] };
}

describe("create-campaign/message", () => {
  it("creates a pending text campaign (201) and sends it once to every group and the monitoring group", async () => {
    const s = await segmentWithGroups(api, 8, true);
    const res = await api("POST", "/api/external/create-campaign/message", { name: "Oferta", id_segment: s.segment, message: "Olá!" });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, name: "Oferta", status: "pending", message_type: "text", scheduled_at: null });
    expect(res.json.id_campaign).toMatch(/^campaign_[0-9a-f-]{36}$/);
    const info = await until(
      () => api("GET", `/api/external/info-campaign/${res.json.id_campaign}`),
      (r) => r.json.status === "completed",
    );
    expect(info.json).toMatchObject({
      success: true,
      status: "completed",
      message_type: "text",
      id_segment: s.segment,
      segment_name: "Seg",
      // The monitoring copy is not one of the campaign's groups (it is reported apart).
      pause_reason: null,
      groups: { total: 8, sent: 8, pending: 0, failed: 0 },
      // One channel: all its groups (CONTRACT §7; the monitoring copy is apart).
      channels: [{ id_channel: s.channel, sent: 8, pending: 0, failed: 0 }],
      monitoring_group: { id_group: s.groups[19], id_channel: s.channel, status: "sent" },
      // The simulator reports reads of group messages.
      reads_available: true,
    });
    // The whole answer, field by field and in this order (the router shapes it from infoCampaign's domain object).
    expect(Object.keys(info.json)).toEqual([
      "success",
      "id_campaign",
      "name",
      "status",
      "pause_reason",
      "message_type",
      "id_segment",
      "segment_name",
      "groups",
      "channels",
      "monitoring_group",
      "reads_available",
      "scheduled_at",
      "created_at",
      "poll",
      "id_series",
      "eta",
    ]);
    expect(Object.keys(info.json.monitoring_group)).toEqual(["id_group", "id_channel", "status", "sent_at"]);
    expect(info.json).toMatchObject({ id_campaign: res.json.id_campaign, name: "Oferta", scheduled_at: null });
    expect(info.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-03:00$/);
    expect(info.json.monitoring_group.sent_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-03:00$/);
    const log = await api("GET", `/api/simulator/messages?id_campaign=${res.json.id_campaign}`);
    expect(log.json.messages).toHaveLength(9);
    expect(new Set(log.json.messages.map((m: { id_group: string }) => m.id_group)).size).toBe(9);
    expect(log.json.messages[0]).toMatchObject({ text: "Olá!", message_type: "text" });
  });

  it("sends media with its caption and mention_all", async () => {
    const s = await segmentWithGroups(api, 2);
    const res = await api("POST", "/api/external/create-campaign/message", {
      name: "Vídeo",
      id_segment: s.segment,
      message: "Veja",
      message_type: "video",
      media_url: "https://cdn.example.com/v.mp4",
      mention_all: true,
    });
    expect(res.status).toBe(201);
    await until(
      () => api("GET", `/api/external/info-campaign/${res.json.id_campaign}`),
      (r) => r.json.status === "completed",
    );
    const log = await api("GET", `/api/simulator/messages?id_campaign=${res.json.id_campaign}`);
    expect(log.json.messages[0]).toMatchObject({ message_type: "video", media_url: "https://cdn.example.com/v.mp4", text: "Veja", mention_all: true });
  });

  it("validates the body, naming the field", async () => {
    const s = await segmentWithGroups(api, 1);
    const cases: [unknown, string][] = [
      [{ id_segment: s.segment, message: "x" }, "name"],
      [{ name: "x", id_segment: s.segment }, "message"],
      [{ name: "x", id_segment: s.segment, message: "x", message_type: "image" }, "media_url"],
      [{ name: "x", id_segment: s.segment, message: "", message_type: "image", media_url: "http://insecure.example.com/a.png" }, "media_url"],
      [{ name: "x", id_segment: s.segment, message: "x", message_type: "sticker" }, "message_type"],
      [{ name: "x", id_segment: s.segment, message: "x", scheduled_at: "2030-01-01 10:00" }, "scheduled_at"],
      [{ name: "x", id_segment: s.segment, message: "x", scheduled_at: "01/01/2020 - 10:00" }, "scheduled_at"],
      [{ name: "x", id_segment: s.segment, message: "x", scheduled_at: "31/02/2030 - 10:00" }, "scheduled_at"],
      [{ name: "x", id_segment: s.segment, message: "x", mention_all: "false" }, "mention_all"],
      [{ name: "x", id_segment: "nope", message: "x" }, "id_segment"],
    ];
    for (const [body, field] of cases) {
      const env = expectEnvelope(await api("POST", "/api/external/create-campaign/message", body), 400, "Bad Request");
      expect(env.message, JSON.stringify(body)).toContain(field);
    }
  });

  it("404 for an unknown or foreign segment; 400 when no channel of the segment is connected", async () => {
    expectEnvelope(
      await api("POST", "/api/external/create-campaign/message", { name: "x", id_segment: "segment_00000000-0000-4000-8000-000000000000", message: "x" }),
      404,
      "Not Found",
    );
    const other = await newTenant(server.url);
    const theirs = await segmentWithGroups(other, 1);
    expectEnvelope(await api("POST", "/api/external/create-campaign/message", { name: "x", id_segment: theirs.segment, message: "x" }), 404, "Not Found");
    const s = await segmentWithGroups(api, 1);
    await api("POST", `/api/simulator/channels/${s.channel}/state`, { connected: false });
    expect(
      expectEnvelope(await api("POST", "/api/external/create-campaign/message", { name: "x", id_segment: s.segment, message: "x" }), 400, "Bad Request").code,
    ).toBe("no_connected_channel");
  });

  it("keeps a scheduled campaign pending and answers scheduled_at in Brasília time", async () => {
    const s = await segmentWithGroups(api, 1);
    const res = await api("POST", "/api/external/create-campaign/message", {
      name: "Natal",
      id_segment: s.segment,
      message: "x",
      scheduled_at: "25/12/2099 - 09:30",
    });
    expect(res.status).toBe(201);
    expect(res.json.scheduled_at).toBe("2099-12-25T09:30:00-03:00");
    await new Promise((r) => setTimeout(r, 300));
    const info = await api("GET", `/api/external/info-campaign/${res.json.id_campaign}`);
    expect(info.json).toMatchObject({ status: "pending", groups: { total: 1, sent: 0, pending: 1, failed: 0 }, scheduled_at: "2099-12-25T09:30:00-03:00" });
  });

  it("replays with Idempotency-Key and creates one campaign", async () => {
    const s = await segmentWithGroups(api, 1);
    const body = { name: "Uma vez", id_segment: s.segment, message: "x", scheduled_at: "01/01/2099 - 10:00" };
    const a = await api("POST", "/api/external/create-campaign/message", body, { "idempotency-key": "camp-1" });
    const b = await api("POST", "/api/external/create-campaign/message", body, { "idempotency-key": "camp-1" });
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.json.id_campaign).toBe(a.json.id_campaign);
  });
});

describe("create-campaign/carousel", () => {
  const card = (n: number) => ({
    image_url: `https://cdn.example.com/${n}.png`,
    text: `Card ${n}`,
    buttons: [{ label: "Comprar", type: "URL", url: "https://loja.example.com" }],
  });

  it("creates and sends a carousel (201, cards_count)", async () => {
    const s = await segmentWithGroups(api, 2);
    const res = await api("POST", "/api/external/create-campaign/carousel", {
      name: "Vitrine",
      id_segment: s.segment,
      carousel_data: { message: "Confira", cards: [card(1), card(2)] },
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, message_type: "carousel", cards_count: 2, status: "pending" });
    await until(
      () => api("GET", `/api/external/info-campaign/${res.json.id_campaign}`),
      (r) => r.json.status === "completed",
    );
    const log = await api("GET", `/api/simulator/messages?id_campaign=${res.json.id_campaign}`);
    expect(log.json.messages[0].cards).toHaveLength(2);
  });

  it("400 for 0 or 5 cards, 3 buttons, a button type other than URL", async () => {
    const s = await segmentWithGroups(api, 1);
    const post = (carousel_data: unknown) => api("POST", "/api/external/create-campaign/carousel", { name: "x", id_segment: s.segment, carousel_data });
    expect(expectEnvelope(await post({ message: "x", cards: [] }), 400, "Bad Request").message).toContain("carousel_data.cards");
    expect(expectEnvelope(await post({ message: "x", cards: [1, 2, 3, 4, 5].map(card) }), 400, "Bad Request").message).toContain("at most 4");
    const three = { ...card(1), buttons: [0, 1, 2].map(() => card(1).buttons[0]) };
    expect(expectEnvelope(await post({ message: "x", cards: [three] }), 400, "Bad Request").message).toContain("carousel_data.cards.0.buttons");
    const call = { ...card(1), buttons: [{ label: "Ligar", type: "CALL", url: "https://x.example.com" }] };
    expect(expectEnvelope(await post({ message: "x", cards: [call] }), 400, "Bad Request").message).toMatch(/buttons\.0\.type: must be URL/);
  });
});

type LoggedMessage = { id_group: string; sent_at: string };

describe("the monitoring copy: first, and apart from the campaign's groups", () => {
  const info = (id: string) => api("GET", `/api/external/info-campaign/${id}`);
  const log = async (id: string): Promise<LoggedMessage[]> => (await api("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages;

  it("a 5-group segment with a monitoring group: groups.total is the segment's total_groups (5); the copy goes first and is reported apart", async () => {
    const s = await segmentWithGroups(api, 5, true);
    expect(s.totalGroups).toBe(5);
    const { json } = await api("POST", "/api/external/create-campaign/message", { name: "Oferta", id_segment: s.segment, message: "Olá!" });
    const done = await until(
      () => info(json.id_campaign),
      (r) => r.json.status === "completed",
    );
    expect(done.json.groups).toEqual({ total: s.totalGroups, sent: 5, pending: 0, failed: 0 });
    expect(done.json.monitoring_group).toEqual({ id_group: s.groups[19], id_channel: s.channel, status: "sent", sent_at: expect.any(String) });
    expect(done.json.monitoring_group.sent_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-03:00$/);

    // The platform's log (ordered by send time): the copy is the first message, sent no later than any group's.
    const messages = await log(json.id_campaign);
    expect(messages).toHaveLength(6);
    expect(messages[0].id_group).toBe(s.groups[19]);
    const copyAt = Date.parse(messages[0].sent_at);
    for (const m of messages.slice(1)) expect(Date.parse(m.sent_at)).toBeGreaterThanOrEqual(copyAt);
    // info-campaign's sent_at is to the second: it is not after any group's send.
    expect(Date.parse(done.json.monitoring_group.sent_at)).toBeLessThanOrEqual(Math.min(...messages.slice(1).map((m) => Date.parse(m.sent_at))));
  });

  it("a segment without a monitoring group: monitoring_group is null", async () => {
    const s = await segmentWithGroups(api, 2);
    const { json } = await api("POST", "/api/external/create-campaign/message", { name: "x", id_segment: s.segment, message: "x" });
    const created = await info(json.id_campaign);
    expect(created.json.monitoring_group).toBeNull();
    const done = await until(
      () => info(json.id_campaign),
      (r) => r.json.status === "completed",
    );
    expect(done.json).toMatchObject({ groups: { total: 2, sent: 2, pending: 0, failed: 0 }, monitoring_group: null });
  });

  it("while the copy backs off for a retry, no segment group is sent (dispatches_per_loop 10); then the groups go", async () => {
    process.env.SEND_RETRY_SCHEDULE = "400,400";
    try {
      const s = await segmentWithGroups(api, 5, true);
      await api("POST", `/api/simulator/groups/${encodeURIComponent(s.groups[19])}/failures`, { fail_next: 1 });
      const { json } = await api("POST", "/api/external/create-campaign/message", { name: "x", id_segment: s.segment, message: "x" });
      const early = await info(json.id_campaign);
      expect(early.json.groups).toEqual({ total: 5, sent: 0, pending: 5, failed: 0 });
      expect(early.json.monitoring_group).toMatchObject({ status: expect.stringMatching(/^(pending|sending)$/), sent_at: null });
      const done = await until(
        () => info(json.id_campaign),
        (r) => r.json.status === "completed",
      );
      expect(done.json.groups).toEqual({ total: 5, sent: 5, pending: 0, failed: 0 });
      expect(done.json.monitoring_group.status).toBe("sent");
      const messages = await log(json.id_campaign);
      // The groups waited for the copy's retry: it is the first message (the groups of one loop share a send time).
      expect(messages.map((m) => m.id_group)[0]).toBe(s.groups[19]);
      expect(
        messages
          .slice(1)
          .map((m) => m.id_group)
          .sort(),
      ).toEqual(s.groups.slice(0, 5).sort());
      for (const m of messages.slice(1)) expect(Date.parse(m.sent_at)).toBeGreaterThan(Date.parse(messages[0].sent_at));
    } finally {
      delete process.env.SEND_RETRY_SCHEDULE;
    }
  });

  it("the copy failing for good is not a failed group; every segment group failing is a failed campaign even though the copy was sent", async () => {
    process.env.SEND_RETRY_SCHEDULE = "10,10";
    try {
      const a = await segmentWithGroups(api, 3, true);
      await api("POST", `/api/simulator/groups/${encodeURIComponent(a.groups[19])}/failures`, { always: true });
      const first = (await api("POST", "/api/external/create-campaign/message", { name: "x", id_segment: a.segment, message: "x" })).json;
      const doneA = await until(
        () => info(first.id_campaign),
        (r) => r.json.status === "completed",
      );
      expect(doneA.json.groups).toEqual({ total: 3, sent: 3, pending: 0, failed: 0 });
      expect(doneA.json.monitoring_group).toMatchObject({ status: "failed", sent_at: null });
      await api("POST", `/api/simulator/groups/${encodeURIComponent(a.groups[19])}/failures`, { always: false });

      const b = await segmentWithGroups(api, 2, true);
      for (const g of b.groups.slice(0, 2)) await api("POST", `/api/simulator/groups/${encodeURIComponent(g)}/failures`, { always: true });
      const second = (await api("POST", "/api/external/create-campaign/message", { name: "x", id_segment: b.segment, message: "x" })).json;
      const doneB = await until(
        () => info(second.id_campaign),
        (r) => r.json.status === "failed",
      );
      expect(doneB.json).toMatchObject({ status: "failed", groups: { total: 2, sent: 0, pending: 0, failed: 2 }, monitoring_group: { status: "sent" } });
      for (const g of b.groups.slice(0, 2)) await api("POST", `/api/simulator/groups/${encodeURIComponent(g)}/failures`, { always: false });
    } finally {
      delete process.env.SEND_RETRY_SCHEDULE;
    }
  });
});

describe("info-campaign and operations", () => {
  it("400 malformed id, 404 unknown and foreign", async () => {
    expectEnvelope(await api("GET", "/api/external/info-campaign/xyz"), 400, "Bad Request");
    expectEnvelope(await api("GET", "/api/external/info-campaign/campaign_00000000-0000-4000-8000-000000000000"), 404, "Not Found");
    const s = await segmentWithGroups(api, 1);
    const { json } = await api("POST", "/api/external/create-campaign/message", {
      name: "x",
      id_segment: s.segment,
      message: "x",
      scheduled_at: "01/01/2099 - 10:00",
    });
    const other = await newTenant(server.url);
    expectEnvelope(await other("GET", `/api/external/info-campaign/${json.id_campaign}`), 404, "Not Found");
  });

  it("pause, resume and cancel through REST, with 409 for a finished campaign", async () => {
    const s = await segmentWithGroups(api, 3);
    const { json } = await api("POST", "/api/external/create-campaign/message", {
      name: "x",
      id_segment: s.segment,
      message: "x",
      scheduled_at: "01/01/2099 - 10:00",
    });
    const paused = await api("POST", `/api/external/pause-campaign/${json.id_campaign}`);
    expect(paused.json).toMatchObject({ success: true, status: "paused" });
    const resumed = await api("POST", `/api/external/resume-campaign/${json.id_campaign}`);
    expect(resumed.json).toMatchObject({ success: true, status: "pending" });
    const canceled = await api("POST", `/api/external/cancel-campaign/${json.id_campaign}`);
    expect(canceled.json).toMatchObject({ success: true, status: "canceled" });
    expectEnvelope(await api("POST", `/api/external/resume-campaign/${json.id_campaign}`), 409, "Conflict");
    expectEnvelope(await api("POST", `/api/external/cancel-campaign/${json.id_campaign}`), 409, "Conflict");
  });

  it("retries a failing group, then marks it failed; the others are sent", async () => {
    process.env.SEND_RETRY_SCHEDULE = "10,10";
    const s = await segmentWithGroups(api, 3);
    await api("POST", `/api/simulator/groups/${encodeURIComponent(s.groups[1])}/failures`, { always: true });
    const { json } = await api("POST", "/api/external/create-campaign/message", { name: "x", id_segment: s.segment, message: "x" });
    const info = await until(
      () => api("GET", `/api/external/info-campaign/${json.id_campaign}`),
      (r) => r.json.status === "completed",
    );
    expect(info.json.groups).toEqual({ total: 3, sent: 2, pending: 0, failed: 1 });
    await api("POST", `/api/simulator/groups/${encodeURIComponent(s.groups[1])}/failures`, { always: false });
  });
});

describe("the campaign queue (settings.queue.concurrent_mode)", () => {
  const sendTimes = async (t: Api, id: string) =>
    ((await t("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages as { sent_at: string }[])
      .map((m) => Date.parse(m.sent_at))
      .sort((a, b) => a - b);
  const completed = async (t: Api, id: string) =>
    until(
      async () => (await t("GET", `/api/external/info-campaign/${id}`)).json.status,
      (status) => status === "completed",
      20_000,
    );

  it("disabled: the next campaign starts after the one before it finished and the campaign interval passed; per_channel: other channels go at once", async () => {
    const t = await newTenant(server.url, { channelLimit: 5 });
    const rates = { min_dispatch_rate: 1, max_dispatch_rate: 1, dispatches_per_loop: 1, min_campaign_interval: 1, max_campaign_interval: 1 };
    expect((await t("PATCH", "/api/external/edit-settings", { dispatch_rates: rates, queue: { concurrent_mode: "disabled" } })).status).toBe(200);
    const one = await segmentWithGroups(t, 2);
    const two = await segmentWithGroups(t, 2);
    const create = async (segment: string) =>
      (await t("POST", "/api/external/create-campaign/message", { name: "Fila", id_segment: segment, message: "Olá!" })).json.id_campaign as string;

    const a = await create(one.segment);
    const b = await create(two.segment);
    await completed(t, a);
    await completed(t, b);
    const [ta, tb] = [await sendTimes(t, a), await sendTimes(t, b)];
    expect([ta.length, tb.length]).toEqual([2, 2]);
    // B waited for A's end, then the 1 s interval (A's last send is a moment before it finished).
    expect(tb[0] - ta[1]).toBeGreaterThanOrEqual(1000);

    expect((await t("PATCH", "/api/external/edit-settings", { queue: { concurrent_mode: "per_channel" } })).status).toBe(200);
    const c = await create(one.segment);
    const d = await create(two.segment);
    await completed(t, c);
    await completed(t, d);
    const [tc, td] = [await sendTimes(t, c), await sendTimes(t, d)];
    // Different channels: D's first send does not wait for C's end.
    expect(td[0]).toBeLessThan(tc[1]);
    // The same channel: F waits for E's end and the interval, as in `disabled`.
    const e = await create(one.segment);
    const f = await create(one.segment);
    await completed(t, e);
    await completed(t, f);
    const [te, tf] = [await sendTimes(t, e), await sendTimes(t, f)];
    expect(tf[0] - te[1]).toBeGreaterThanOrEqual(1000);
  }, 60_000);
});
