/**
 * Issue 27, items 1 and 3 (docs/launches.md#measuring-the-funnel): every UTM of a counted click and
 * launch-analytics' by_utm, and the traffic alert (clicks without joins) sent by the launches' periodic pass.
 */
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launchClicks, outboxEvents } from "../../db/schema";
import { checkTrafficAlerts } from "../../server/launches/funnel/traffic-alerts";
import { expectEnvelope, newTenant, waitFor, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let serverB: TestServer;
let api: Api;
let channelId: string;

beforeAll(async () => {
  server = await startTestServer({ peerAddress: "198.51.100.41" });
  serverB = await startTestServer({ peerAddress: "203.0.113.42" });
  api = await newTenant(server.url, { channelLimit: 20 });
  channelId = (await api("POST", "/api/external/create-channel", { name: "Canal do lançamento" })).json.id_channel;
});
afterAll(async () => {
  await server.close();
  await serverB.close();
});

const template = { name: "Turma 7 #{n}", admins_only: true, admins: [] };
const browser = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148";

async function createLaunch(body: Record<string, unknown> = {}) {
  const res = await api("POST", "/api/external/create-launch", { name: "Turma UTM", id_channel: [channelId], group_template: template, ...body });
  if (res.status !== 201) throw new Error(`create-launch: ${res.status} ${res.text}`);
  return res.json as { id_launch: string; slug: string; groups: { id_group: string }[] };
}

/** `n` visits of the join link with `query`, 10 at a time, each must be redirected. */
async function visits(slug: string, n: number, query: string | ((i: number) => string) = "", base = server.url) {
  for (let i = 0; i < n; i += 10) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(10, n - i) }, (_, j) =>
        fetch(`${base}/g/${slug}${typeof query === "function" ? query(i + j) : query}`, { redirect: "manual", headers: { "user-agent": browser } }),
      ),
    );
    for (const a of answers) expect(a.status).toBe(302);
  }
}

const analytics = async (id: string) => (await api("GET", `/api/external/launch-analytics/${id}?days=7`)).json;

async function trafficAlerts(launchId: string) {
  const db = await getDb();
  const rows = await db
    .select({ payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(
      and(
        eq(outboxEvents.tenantId, api.tenantId),
        eq(outboxEvents.type, "group_activity"),
        sql`${outboxEvents.payload}->'data'->>'event' = 'traffic_alert'`,
        sql`${outboxEvents.payload}->'data'->>'id_launch' = ${launchId}`,
      ),
    );
  return rows.map((r) => (r.payload as { data: Record<string, unknown> }).data);
}

describe("every UTM", () => {
  it("60 visits add up per source/medium/campaign/content, lower case and trimmed, long values cut at 200", async () => {
    const l = await createLaunch({ alerts: { clicks_without_joins_minutes: 0 } });
    const long = "A".repeat(250);
    await visits(l.slug, 25, "?utm_source=Facebook&utm_medium=cpc&utm_campaign=Turma7&utm_content=ad-1");
    await visits(l.slug, 15, "?utm_source=%20facebook%20&utm_medium=CPC&utm_campaign=turma7%20&utm_content=AD-1");
    await visits(l.slug, 10, "?utm_source=instagram&utm_medium=stories&utm_campaign=turma7&utm_content=story-2&utm_term=Curso&fbclid=IwAR0abc");
    await visits(l.slug, 5, `?utm_source=google&utm_content=${long}&gclid=Cj0KCQ`);
    await visits(l.slug, 5, "?utm_source=%20%20");

    const a = await analytics(l.id_launch);
    expect(a.by_utm).toEqual([
      { utm_source: "facebook", utm_medium: "cpc", utm_campaign: "turma7", utm_content: "ad-1", clicks: 40, unique_clicks: 1 },
      { utm_source: "instagram", utm_medium: "stories", utm_campaign: "turma7", utm_content: "story-2", clicks: 10, unique_clicks: 1 },
      { utm_source: "google", utm_medium: null, utm_campaign: null, utm_content: "a".repeat(200), clicks: 5, unique_clicks: 1 },
      { utm_source: null, utm_medium: null, utm_campaign: null, utm_content: null, clicks: 5, unique_clicks: 1 },
    ]);
    expect(a.by_utm.reduce((n: number, r: { clicks: number }) => n + r.clicks, 0)).toBe(60);
    const today = a.days[a.days.length - 1].date;
    expect(a.by_source_day).toEqual(
      expect.arrayContaining([
        { date: today, utm_source: "facebook", clicks: 40 },
        { date: today, utm_source: "instagram", clicks: 10 },
        { date: today, utm_source: "google", clicks: 5 },
        { date: today, utm_source: null, clicks: 5 },
      ]),
    );
    expect(a.by_source_day).toHaveLength(4);

    const db = await getDb();
    const [ids] = await db
      .select({
        fbclid: sql<number>`count(*) filter (where ${launchClicks.fbclid})`.mapWith(Number),
        gclid: sql<number>`count(*) filter (where ${launchClicks.gclid})`.mapWith(Number),
        term: sql<number>`count(*) filter (where ${launchClicks.utmTerm} = 'curso')`.mapWith(Number),
      })
      .from(launchClicks)
      .where(eq(launchClicks.launchId, l.id_launch));
    expect(ids).toEqual({ fbclid: 10, gclid: 5, term: 10 });
  });

  it("a value cut at 200 through an emoji's surrogate pair is counted, the half left as U+FFFD, with the clicks of its batch", async () => {
    const l = await createLaunch();
    // 199 letters and an emoji: the cut at 200 keeps the first half of its pair. The ten visits go at once, so
    // they share group commits with plain ones (on PostgreSQL a batch is one json parameter, and json refuses a
    // lone surrogate: the whole batch would fail).
    const cut = encodeURIComponent(`${"b".repeat(199)}😀`);
    await visits(l.slug, 10, (i) => (i % 2 === 0 ? `?utm_source=emoji&utm_content=${cut}` : "?utm_source=plain"));
    const a = await analytics(l.id_launch);
    expect(a.by_utm).toEqual(
      expect.arrayContaining([
        { utm_source: "emoji", utm_medium: null, utm_campaign: null, utm_content: `${"b".repeat(199)}\ufffd`, clicks: 5, unique_clicks: 1 },
        { utm_source: "plain", utm_medium: null, utm_campaign: null, utm_content: null, clicks: 5, unique_clicks: 1 },
      ]),
    );
  });

  it("past 50 combinations the rest is one (outros) row; unique clicks count visitors per combination", async () => {
    const l = await createLaunch({ alerts: { clicks_without_joins_minutes: 0 } });
    await visits(l.slug, 55, (i) => `?utm_source=meta&utm_content=ad-${String(i).padStart(2, "0")}`, serverB.url);
    await visits(l.slug, 3, "?utm_source=meta&utm_content=ad-00");
    const { by_utm } = await analytics(l.id_launch);
    expect(by_utm).toHaveLength(51);
    expect(by_utm[0]).toEqual({ utm_source: "meta", utm_medium: null, utm_campaign: null, utm_content: "ad-00", clicks: 4, unique_clicks: 2 });
    expect(by_utm[49].utm_content).toBe("ad-49");
    expect(by_utm[50]).toEqual({
      utm_source: "(outros)",
      utm_medium: "(outros)",
      utm_campaign: "(outros)",
      utm_content: "(outros)",
      clicks: 5,
      unique_clicks: 5,
    });
  });
});

describe("traffic alerts", () => {
  it("create-launch and edit-launch validate alerts, naming the field; info-launch answers them", async () => {
    const bad = await api("POST", "/api/external/create-launch", {
      name: "Ruim",
      id_channel: [channelId],
      group_template: template,
      alerts: { min_clicks: 0 },
    });
    expect(expectEnvelope(bad, 400, "Bad Request").message).toContain("alerts.min_clicks");
    const l = await createLaunch();
    expect((await api("GET", `/api/external/info-launch/${l.id_launch}`)).json).toMatchObject({
      alerts: { clicks_without_joins_minutes: 20, min_clicks: 30 },
      traffic_alert: null,
    });
    for (const alerts of [{ clicks_without_joins_minutes: "20" }, { clicks_without_joins_minutes: 1441 }, { clicks_without_joins_minutes: -1 }]) {
      const res = await api("PUT", `/api/external/edit-launch/${l.id_launch}`, { alerts });
      expect(expectEnvelope(res, 400, "Bad Request").message).toContain("alerts.clicks_without_joins_minutes");
    }
    const edited = await api("PUT", `/api/external/edit-launch/${l.id_launch}`, { alerts: { min_clicks: 5 } });
    expect(edited.json.alerts).toEqual({ clicks_without_joins_minutes: 20, min_clicks: 5 });
  });

  it("30 clicks without a join: exactly one traffic_alert, none again within the hour; 29 are not enough", async () => {
    const l = await createLaunch();
    await visits(l.slug, 29);
    await checkTrafficAlerts(await getDb(), new Date());
    expect(await trafficAlerts(l.id_launch)).toEqual([]);
    await visits(l.slug, 1);
    const now = new Date();
    await Promise.all([checkTrafficAlerts(await getDb(), now), checkTrafficAlerts(await getDb(), now)]);
    expect(await trafficAlerts(l.id_launch)).toEqual([
      { event: "traffic_alert", id_launch: l.id_launch, reason: "clicks_without_joins", clicks: 30, minutes: 20, id_group: l.groups[0].id_group },
    ]);
    await visits(l.slug, 10);
    await checkTrafficAlerts(await getDb(), new Date(now.getTime() + 10 * 60_000));
    expect(await trafficAlerts(l.id_launch)).toHaveLength(1);
    const info = (await api("GET", `/api/external/info-launch/${l.id_launch}`)).json;
    expect(info.traffic_alert).toMatchObject({ reason: "clicks_without_joins", clicks: 30, minutes: 20 });
    // Off: no alert even past the hour.
    await api("PUT", `/api/external/edit-launch/${l.id_launch}`, { alerts: { clicks_without_joins_minutes: 0 } });
    await checkTrafficAlerts(await getDb(), new Date(now.getTime() + 61 * 60_000));
    expect(await trafficAlerts(l.id_launch)).toHaveLength(1);
  });

  it("a join in the window prevents it", async () => {
    const l = await createLaunch();
    const join = await api("POST", `/api/simulator/groups/${encodeURIComponent(l.groups[0].id_group)}/participants`, { join: 1 });
    expect(join.status).toBeLessThan(300);
    await waitFor("the join recorded", async () => (await api("GET", `/api/external/info-launch/${l.id_launch}`)).json.totals.joins >= 1);
    await visits(l.slug, 35);
    await checkTrafficAlerts(await getDb(), new Date());
    expect(await trafficAlerts(l.id_launch)).toEqual([]);
  });
});
