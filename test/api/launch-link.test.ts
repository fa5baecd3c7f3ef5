import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launchClicks, launches, launchGroups, outboxEvents, segments } from "../../db/schema";
import { clicksPerVisitor, forgetPublicLink } from "../../server/launches/public-link";
import { brasiliaParts } from "../../server/time/brasilia";
import { newTenant, until, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

/**
 * The public join link GET /g/{slug} (docs/decisions.md#launches, "The link") through the test server.
 * Launches are written straight into the database here (the link only reads them), so these tests do not
 * depend on create-launch.
 */

const peerA = "198.51.100.23";
const peerB = "203.0.113.77";
let server: TestServer;
let serverB: TestServer;
let api: Api;
let channelId: string;
let groupIds: string[];

beforeAll(async () => {
  server = await startTestServer({ peerAddress: peerA });
  serverB = await startTestServer({ peerAddress: peerB });
  api = await newTenant(server.url);
  const channel = await api("POST", "/api/external/create-channel", { name: "Canal do lançamento" });
  channelId = channel.json.id_channel;
  groupIds = ((await api("GET", `/api/external/list-groups/${channelId}`)).json.groups as { id_group: string }[]).map((g) => g.id_group);
});
afterAll(async () => {
  await server.close();
  await serverB.close();
});

const browser = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";

interface GroupFixture {
  members?: number;
  status?: "filling" | "reserve" | "full" | "broken";
}

/** A launch of capacity 10, margin 2 (full at 8), with the given groups, straight into the database. */
async function launchWith(
  groups: GroupFixture[],
  opts: { status?: "active" | "paused" | "closed"; closedUrl?: string; name?: string; description?: string; imageUrl?: string } = {},
) {
  const db = await getDb();
  const id = `launch_${randomUUID()}`;
  const slug = `turma-${randomUUID().slice(0, 8)}`;
  const segmentId = `segment_${randomUUID()}`;
  await db.insert(segments).values({ id: segmentId, tenantId: api.tenantId, name: opts.name ?? "Turma 7" });
  await db.insert(launches).values({
    id,
    tenantId: api.tenantId,
    name: opts.name ?? "Turma 7",
    slug,
    segmentId,
    channelIds: [channelId],
    groupTemplate: { name: "Turma 7 #{n}", description: opts.description, image_url: opts.imageUrl, admins_only: true, admins: [] },
    capacity: 10,
    margin: 2,
    status: opts.status ?? "active",
    closedUrl: opts.closedUrl ?? null,
  });
  const invites = groups.map((_, i) => `https://chat.whatsapp.com/${slug}${i + 1}`);
  if (groups.length) {
    await db.insert(launchGroups).values(
      groups.map((g, i) => ({
        launchId: id,
        position: i + 1,
        groupId: groupIds[i] as string,
        channelId,
        name: `Turma 7 #${i + 1}`,
        inviteUrl: invites[i],
        members: g.members ?? 0,
        status: g.status ?? (i === 0 ? "filling" : "reserve"),
      })),
    );
  }
  return { id, slug, invites };
}

async function visit(slug: string, opts: { ua?: string; query?: string; base?: string; method?: string } = {}) {
  return fetch(`${opts.base ?? server.url}/g/${slug}${opts.query ?? ""}`, {
    method: opts.method ?? "GET",
    redirect: "manual",
    headers: { "user-agent": opts.ua ?? browser },
  });
}

async function clicksOf(launchId: string) {
  const db = await getDb();
  return db.select().from(launchClicks).where(eq(launchClicks.launchId, launchId)).orderBy(launchClicks.id);
}

async function groupClicks(launchId: string) {
  const db = await getDb();
  const rows = await db.select({ position: launchGroups.position, clicks: launchGroups.clicks }).from(launchGroups).where(eq(launchGroups.launchId, launchId));
  return Object.fromEntries(rows.map((r) => [r.position, r.clicks]));
}

describe("GET /g/{slug}", () => {
  it("redirects to the first group with room, counts the click on that group, and stores no raw address", async () => {
    const l = await launchWith([{}, {}]);
    const res = await visit(l.slug);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(l.invites[0]);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");

    const [click, ...more] = await clicksOf(l.id);
    expect(more).toHaveLength(0);
    expect(click).toMatchObject({ position: 1, day: brasiliaParts(new Date()).date, utmSource: null, utmMedium: null, utmCampaign: null });
    expect(click?.visitor).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await groupClicks(l.id)).toEqual({ 1: 1, 2: 0 });
    const db = await getDb();
    const stored = await db.execute(sql`select row_to_json(c)::text as row from launch_clicks c where launch_id = ${l.id}`);
    const text = JSON.stringify(stored);
    expect(text).toContain(l.id);
    expect(text).not.toContain(peerA);
  });

  it("stores utm_source, utm_medium and utm_campaign", async () => {
    const l = await launchWith([{}]);
    const res = await visit(l.slug, { query: "?utm_source=instagram&utm_medium=stories&utm_campaign=turma%207&fbclid=x" });
    expect(res.status).toBe(302);
    const [click] = await clicksOf(l.id);
    expect(click).toMatchObject({ utmSource: "instagram", utmMedium: "stories", utmCampaign: "turma 7" });
  });

  it("one visitor id per client address per day: the same address twice is one unique visitor, another address another", async () => {
    const l = await launchWith([{}]);
    for (const base of [server.url, server.url, serverB.url]) expect((await visit(l.slug, { base })).status).toBe(302);
    const clicks = await clicksOf(l.id);
    expect(clicks).toHaveLength(3);
    expect(clicks[0]?.visitor).toBe(clicks[1]?.visitor);
    expect(clicks[2]?.visitor).not.toBe(clicks[0]?.visitor);
    expect(new Set(clicks.map((c) => c.visitor)).size).toBe(2);
    expect(await groupClicks(l.id)).toEqual({ 1: 3 });
    // The same address on another launch is another visitor id: ids cannot be joined across launches.
    const other = await launchWith([{}]);
    await visit(other.slug);
    expect((await clicksOf(other.id))[0]?.visitor).not.toBe(clicks[0]?.visitor);
  });

  it("many visits at once on two launches: every click stored once and counted on its own group (written together)", async () => {
    const a = await launchWith([{}, {}]);
    const b = await launchWith([{ members: 8, status: "full" }, {}]);
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => visit(i % 2 ? a.slug : b.slug, { query: `?utm_source=s${i % 3}` })));
    expect(answers.map((r) => r.status)).toEqual(Array(60).fill(302));
    expect(await clicksOf(a.id)).toHaveLength(30);
    expect(await clicksOf(b.id)).toHaveLength(30);
    expect(await groupClicks(a.id)).toEqual({ 1: 30, 2: 0 });
    expect(await groupClicks(b.id)).toEqual({ 1: 0, 2: 30 });
    expect(new Set((await clicksOf(a.id)).map((c) => c.utmSource))).toEqual(new Set(["s0", "s1", "s2"]));
  });

  it("a flood from one address: every visit gets its group, at most clicksPerVisitor of them counted; another address still counts", async () => {
    const l = await launchWith([{}, {}]);
    const flood = clicksPerVisitor + 15;
    for (let i = 0; i < flood; i += 25) {
      const answers = await Promise.all(Array.from({ length: Math.min(25, flood - i) }, () => visit(l.slug)));
      expect(answers.map((r) => [r.status, r.headers.get("location")])).toEqual(answers.map(() => [302, l.invites[0]]));
    }
    expect(await clicksOf(l.id)).toHaveLength(clicksPerVisitor);
    expect(await groupClicks(l.id)).toEqual({ 1: clicksPerVisitor, 2: 0 });
    expect((await visit(l.slug, { base: serverB.url })).status).toBe(302);
    expect(await clicksOf(l.id)).toHaveLength(clicksPerVisitor + 1);
  });

  it("link-preview fetchers get the Open Graph page (escaped) and are not counted", async () => {
    const l = await launchWith([{}], {
      name: `Turma "7" <script>alert(1)</script>`,
      description: "Aulas ao vivo & bônus",
      imageUrl: "https://cdn.example.com/capa.jpg?a=1&b=2",
    });
    for (const ua of [
      "WhatsApp/2.23.20.0 A",
      "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
      "TelegramBot (like TwitterBot)",
      "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
    ]) {
      const res = await visit(l.slug, { ua });
      expect(res.status, ua).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const body = await res.text();
      expect(body).toContain('<meta property="og:title" content="Turma &quot;7&quot; &lt;script&gt;alert(1)&lt;/script&gt;">');
      expect(body).toContain('<meta property="og:description" content="Aulas ao vivo &amp; bônus">');
      expect(body).toContain('<meta property="og:image" content="https://cdn.example.com/capa.jpg?a=1&amp;b=2">');
      expect(body).toContain(`<meta property="og:url" content="`);
      expect(body).not.toContain("<script>");
      expect(body).not.toContain(l.invites[0]);
    }
    expect(await clicksOf(l.id)).toHaveLength(0);
    expect(await groupClicks(l.id)).toEqual({ 1: 0 });
  });

  it("in-app browsers (Instagram, Facebook) are people: redirected and counted", async () => {
    const l = await launchWith([{}]);
    const instagram = `${browser} Instagram 312.0.0.32.112 (iPhone14,5; iOS 17_4; pt_BR; pt; scale=3.00; 1170x2532; 553453683)`;
    const facebook = `${browser} [FBAN/FBIOS;FBAV/455.0.0.44.105;FBBV/565011458;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.4;FBSS/3;FBID/phone;FBLC/pt_BR;FBOP/5]`;
    for (const ua of [instagram, facebook]) {
      const res = await visit(l.slug, { ua });
      expect(res.status, ua).toBe(302);
      expect(res.headers.get("location")).toBe(l.invites[0]);
    }
    expect(await clicksOf(l.id)).toHaveLength(2);
  });

  it("skips full groups: the first group below capacity − margin gets the visitor", async () => {
    const l = await launchWith([{ members: 8, status: "full" }, { members: 7 }, {}]);
    const res = await visit(l.slug);
    expect(res.headers.get("location")).toBe(l.invites[1]);
    expect(await groupClicks(l.id)).toEqual({ 1: 0, 2: 1, 3: 0 });
  });

  it("uses the last group's margin when every group is full, and does not report the link broken then", async () => {
    const l = await launchWith([
      { members: 8, status: "full" },
      { members: 9, status: "full" },
    ]);
    const res = await visit(l.slug);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(l.invites[1]);
    expect((await clicksOf(l.id))[0]?.position).toBe(2);
    expect(await linkBrokenEvents(l.id)).toHaveLength(0);
  });

  it("every group full, margins used: the closed page (200, pt-BR), no click, and one link_broken for many visits", async () => {
    const l = await launchWith(
      [
        { members: 8, status: "full" },
        { members: 10, status: "full" },
      ],
      { name: "Turma 8" },
    );
    for (let i = 0; i < 3; i++) {
      const res = await visit(l.slug);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("Os grupos estão fechados");
    }
    // As after a restart (or on another process): nothing in memory, the outbox says it was sent.
    forgetPublicLink();
    expect((await visit(l.slug)).status).toBe(200);
    expect(await clicksOf(l.id)).toHaveLength(0);
    const events = await linkBrokenEvents(l.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "group_activity", data: { event: "link_broken", id_launch: l.id, reason: "all_groups_full" } });
  });

  it("an active launch with no group to send to (none yet, or broken): the closed page and link_broken no_open_group", async () => {
    for (const groups of [[], [{ status: "broken" as const }]]) {
      const l = await launchWith(groups);
      const res = await visit(l.slug);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("Os grupos estão fechados");
      expect(await linkBrokenEvents(l.id)).toEqual([expect.objectContaining({ data: { event: "link_broken", id_launch: l.id, reason: "no_open_group" } })]);
    }
  });

  it("a paused launch with closed_url redirects there; a closed one without shows the closed page; neither counts", async () => {
    const paused = await launchWith([{}], { status: "paused", closedUrl: "https://example.com/lista-de-espera" });
    const res = await visit(paused.slug);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://example.com/lista-de-espera");

    const closed = await launchWith([{}], { status: "closed", name: "Turma <9>" });
    const page = await visit(closed.slug);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const body = await page.text();
    expect(body).toContain('<html lang="pt-BR">');
    expect(body).toContain("Os grupos estão fechados");
    expect(body).toContain("Turma &lt;9&gt;");
    expect(await clicksOf(paused.id)).toHaveLength(0);
    expect(await clicksOf(closed.id)).toHaveLength(0);
  });

  it("follows the launch's status once the cached copy is gone", async () => {
    const l = await launchWith([{}]);
    expect((await visit(l.slug)).status).toBe(302);
    const db = await getDb();
    await db.update(launches).set({ status: "closed" }).where(eq(launches.id, l.id));
    forgetPublicLink(l.slug);
    expect((await visit(l.slug)).status).toBe(200);
    expect(await clicksOf(l.id)).toHaveLength(1);
  });

  it("unknown or malformed slugs: the pt-BR 404 page", async () => {
    for (const slug of ["nao-existe-123", "ab", "x".repeat(61), "%3Cscript%3E", "turma_7"]) {
      const res = await visit(slug);
      expect(res.status, slug).toBe(404);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const body = await res.text();
      expect(body).toContain("Link não encontrado");
      expect(body).not.toContain("<script>");
    }
  });

  it("answers the slug in any case and with a trailing slash; HEAD is not counted; POST is 405", async () => {
    const l = await launchWith([{}]);
    expect((await visit(`${l.slug.toUpperCase()}/`)).headers.get("location")).toBe(l.invites[0]);
    const head = await visit(l.slug, { method: "HEAD" });
    expect(head.status).toBe(302);
    expect((await visit(l.slug, { method: "POST" })).status).toBe(405);
    expect(await clicksOf(l.id)).toHaveLength(1);
  });
});

describe("GET /g/{slug} on launches made by create-launch", () => {
  const template = { name: "Turma 9 #{n}", description: "Grupo oficial", admins_only: true, admins: [] };

  it("info-launch's clicks and unique_clicks are the link's visits; paused with closed_url after edit-launch", async () => {
    const created = await api("POST", "/api/external/create-launch", {
      name: "Turma 9",
      id_channel: [channelId],
      group_template: template,
      capacity: 10,
      margin: 2,
      initial_groups: 0,
      auto_create: false,
    });
    expect(created.status).toBe(201);
    const { id_launch: id, slug, join_url: joinUrl } = created.json;
    expect(joinUrl).toMatch(new RegExp(`/g/${slug}$`));
    // The group is written here rather than made through the provider, so this test needs no group creation.
    const invite = `https://chat.whatsapp.com/${slug}x`;
    const db = await getDb();
    await db
      .insert(launchGroups)
      .values({ launchId: id, position: 1, groupId: groupIds[5] as string, channelId, name: "Turma 9 #1", inviteUrl: invite, status: "filling" });
    forgetPublicLink(slug);

    for (const base of [server.url, server.url, serverB.url]) expect((await visit(slug, { base })).headers.get("location")).toBe(invite);
    await visit(slug, { ua: "WhatsApp/2.23.20.0 A" });
    const info = (await api("GET", `/api/external/info-launch/${id}`)).json;
    expect(info.totals).toMatchObject({ clicks: 3, unique_clicks: 2 });
    expect(info.groups[0]).toMatchObject({ position: 1, clicks: 3 });

    const edited = await api("PUT", `/api/external/edit-launch/${id}`, { status: "paused", closed_url: "https://example.com/espera" });
    expect(edited.status).toBe(200);
    // Within the link's cache (at most ~1 s) the old answer may still be given, and counted.
    let sentToGroup = 3;
    const paused = await until(
      async () => {
        const r = await visit(slug);
        if (r.headers.get("location") === invite) sentToGroup++;
        return r;
      },
      (r) => r.headers.get("location") === "https://example.com/espera",
      5000,
    );
    expect(paused.status).toBe(302);
    expect(paused.headers.get("location")).toBe("https://example.com/espera");
    // Visits of the paused launch are not clicks.
    expect((await visit(slug)).headers.get("location")).toBe("https://example.com/espera");
    expect((await api("GET", `/api/external/info-launch/${id}`)).json.totals.clicks).toBe(sentToGroup);
  });

  it("the funnel: the link sends the visitor to the group create-launch made, whose invite code lets them join", async () => {
    const created = await api("POST", "/api/external/create-launch", {
      name: "Turma 10",
      id_channel: [channelId],
      group_template: template,
      initial_groups: 1,
    });
    expect(created.status).toBe(201);
    const res = await visit(created.json.slug);
    expect(res.status).toBe(302);
    const location = res.headers.get("location") as string;
    expect(location).toBe(created.json.groups[0].invite_url);
    const code = new URL(location).pathname.slice(1);
    const join = await api("POST", `/api/simulator/invites/${encodeURIComponent(code)}/join`, { participant: "5511987654321" });
    expect(join.status).toBeLessThan(300);
    expect((await api("GET", `/api/external/info-launch/${created.json.id_launch}`)).json.totals.clicks).toBe(1);
  });
});

async function linkBrokenEvents(launchId: string) {
  const db = await getDb();
  const rows = await db
    .select({ payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(and(eq(outboxEvents.type, "group_activity"), sql`${outboxEvents.payload}->'data'->>'id_launch' = ${launchId}`));
  return rows.map((r) => r.payload as { type: string; data: Record<string, unknown> }).filter((p) => p.data.event === "link_broken");
}
