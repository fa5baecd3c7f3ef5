import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, getDb } from "../../db/client";
import { rowsOf } from "../../db/params";
import { launchClickDays, launchClicks, launches, launchGroups, outboxEvents, segments } from "../../db/schema";
import { bucketsInDatabase } from "../../server/http/rate-limit";
import { clickCapKey, clickTags, recordClicks, visitorId } from "../../server/launches/link/click-counter";
import { clickRetentionDays } from "../../server/launches/link/fold-clicks";
import { clicksPerVisitor, forgetPublicLink } from "../../server/launches/link/public-link";
import { runMaintenance } from "../../server/maintenance/purge-expired";
import { brasiliaParts } from "../../server/time/brasilia";
import { startChildServer, type ChildServer } from "../child-server";
import { newTenant, until, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { baseDatabaseUrl } from "../postgres-databases";

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

/** `n` visits through each server (20 at a time), every one sent to the launch's first group. */
async function visitEach(l: { slug: string; invites: string[] }, bases: string[], n: number) {
  for (const base of bases) {
    for (let i = 0; i < n; i += 20) {
      const answers = await Promise.all(Array.from({ length: Math.min(20, n - i) }, () => visit(l.slug, { base })));
      expect(answers.map((r) => [r.status, r.headers.get("location")])).toEqual(answers.map(() => [302, l.invites[0]]));
    }
  }
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

  it("on PostgreSQL a click commits without waiting for the WAL flush, and is stored with its group's count", async () => {
    const db = await getDb();
    if (!bucketsInDatabase(db)) return; // PGlite: the plain statement, no shared cap
    const l = await launchWith([{}, {}]);
    const now = new Date();
    const day = brasiliaParts(now).date;
    const click = {
      launchId: l.id,
      at: now,
      day,
      position: 1,
      ...clickTags(new URLSearchParams()),
      visitor: visitorId(peerA, l.id, day),
      capKey: clickCapKey(peerA, l.id),
    };
    // In a transaction of its own, the statement's setting is still readable after it.
    const commit = await db.transaction(async (tx) => {
      await recordClicks(tx as unknown as Db, [click], true);
      return rowsOf<{ synchronous_commit: string }>(await tx.execute(sql`show synchronous_commit`))[0].synchronous_commit;
    });
    expect(commit).toBe("off");
    expect(await clicksOf(l.id)).toHaveLength(1);
    expect(await groupClicks(l.id)).toEqual({ 1: 1, 2: 0 });
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
      // Never a shared cache's copy: a CDN must not hand the preview to a person, who gets the redirect.
      expect(res.headers.get("cache-control")).toBe("private, max-age=60");
      expect(res.headers.get("vary")).toBe("User-Agent");
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

  it("closed_url rows from before the https rule: an http:// one is never followed (the closed page), a non-ASCII one is sent percent-encoded", async () => {
    // Written straight into the table: the API has refused such values since the rule (test/api/launches.test.ts).
    const http = await launchWith([{}], { status: "paused", closedUrl: "http://example.com/espera" });
    const page = await visit(http.slug);
    expect(page.status).toBe(200);
    expect(page.headers.get("location")).toBeNull();
    expect(await page.text()).toContain("Os grupos estão fechados");
    for (const stored of ["javascript:alert(1)", "//example.com/x", "não é url"]) {
      const l = await launchWith([{}], { status: "closed", closedUrl: stored });
      const res = await visit(l.slug);
      expect([res.status, res.headers.get("location")], stored).toEqual([200, null]);
    }

    // A header holds no "€": written as it was stored, the visit ended in an empty reply.
    const accents = await launchWith([{}], { status: "paused", closedUrl: "https://Exemplo.com/espera/€?turma=ção" });
    const res = await visit(accents.slug);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://exemplo.com/espera/%E2%82%AC?turma=%C3%A7%C3%A3o");
    expect(await clicksOf(accents.id)).toHaveLength(0);
  });

  it("the click cap keys an IPv6 client by its /64: every address of one /64 shares the 60 clicks, another /64 counts apart", async () => {
    const l = await launchWith([{}, {}]);
    // Two addresses of one /64 (a phone's privacy addresses rotate within it), one of the next /64.
    const sameA = await startTestServer({ peerAddress: "2001:db8:5:6::1" });
    const sameB = await startTestServer({ peerAddress: "2001:db8:5:6:a:b:c:d" });
    const next = await startTestServer({ peerAddress: "2001:db8:5:7::1" });
    try {
      await visitEach(l, [sameA.url, sameB.url], 40);
      const clicks = await clicksOf(l.id);
      expect(clicks).toHaveLength(clicksPerVisitor);
      // One visitor too (unique_clicks): the /64 is the client.
      expect(new Set(clicks.map((c) => c.visitor)).size).toBe(1);
      expect(await groupClicks(l.id)).toEqual({ 1: clicksPerVisitor, 2: 0 });
      expect((await visit(l.slug, { base: next.url })).status).toBe(302);
      expect(await clicksOf(l.id)).toHaveLength(clicksPerVisitor + 1);
    } finally {
      await Promise.all([sameA.close(), sameB.close(), next.close()]);
    }
  });

  it("follows the launch's status once the cached copy is gone", async () => {
    const l = await launchWith([{}]);
    expect((await visit(l.slug)).status).toBe(302);
    const db = await getDb();
    await db.update(launches).set({ status: "closed" }).where(eq(launches.id, l.id));
    forgetPublicLink(l.id);
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

  it("info-launch's clicks and unique_clicks are the link's visits; an edit of status or closed_url reaches the link at the next visit", async () => {
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
    forgetPublicLink(id);

    for (const base of [server.url, server.url, serverB.url]) expect((await visit(slug, { base })).headers.get("location")).toBe(invite);
    await visit(slug, { ua: "WhatsApp/2.23.20.0 A" });
    const info = (await api("GET", `/api/external/info-launch/${id}`)).json;
    expect(info.totals).toMatchObject({ clicks: 3, unique_clicks: 2 });
    expect(info.groups[0]).toMatchObject({ position: 1, clicks: 3 });

    // Each edit below lands while the link holds the launch in memory (read by the visit just before it,
    // well within its second): the very next visit must follow the edit all the same.
    const edit = async (body: Record<string, unknown>) => {
      const res = await api("PUT", `/api/external/edit-launch/${id}`, body);
      expect(res.status, res.text).toBe(200);
    };
    await edit({ status: "paused", closed_url: "https://example.com/espera" });
    expect((await visit(slug)).headers.get("location")).toBe("https://example.com/espera");
    await edit({ closed_url: "https://example.com/outra-espera" });
    expect((await visit(slug)).headers.get("location")).toBe("https://example.com/outra-espera");
    await edit({ closed_url: null });
    const closedPage = await visit(slug);
    expect(closedPage.status).toBe(200);
    expect(await closedPage.text()).toContain("Os grupos estão fechados");
    await edit({ status: "active" });
    expect((await visit(slug)).headers.get("location")).toBe(invite);
    await edit({ status: "closed", closed_url: "https://example.com/encerrado" });
    expect((await visit(slug)).headers.get("location")).toBe("https://example.com/encerrado");
    // Visits of the paused or closed launch are not clicks: the three before, and the one while active.
    expect((await api("GET", `/api/external/info-launch/${id}`)).json.totals.clicks).toBe(4);
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

// Two processes on one PostgreSQL database: this file's test server and test/child-server.ts in a process of its own.
const onPostgres = Boolean(baseDatabaseUrl());
if (!onPostgres) console.log("[launch-link] two processes: skipped on PGlite (one process owns an embedded database; set DATABASE_URL to run it)");

describe("GET /g/{slug} served by two processes on one PostgreSQL database", () => {
  let child: ChildServer;
  let here: TestServer;
  beforeAll(async () => {
    if (!onPostgres) return;
    // One client reaching both processes (a load balancer in front): only the shared store can hold its cap
    // (the keying by /64 is the test above).
    child = await startChildServer("2001:db8:9:9::1");
    here = await startTestServer({ peerAddress: "2001:db8:9:9::1" });
  }, 90_000);
  afterAll(async () => {
    if (!onPostgres) return;
    await child.close();
    await here.close();
  });

  it.skipIf(!onPostgres)(
    "the click cap is one for both (60 in all, not 60 each); an edit made through one reaches the other's link within its 1 s cache",
    async () => {
      const l = await launchWith([{}, {}]);
      await visitEach(l, [here.url, child.url], 40);
      expect(await clicksOf(l.id)).toHaveLength(clicksPerVisitor);
      expect(await groupClicks(l.id)).toEqual({ 1: clicksPerVisitor, 2: 0 });

      // The other process holds the launch in memory (just read); the edit is made through this one.
      expect((await visit(l.slug, { base: child.url })).headers.get("location")).toBe(l.invites[0]);
      const edited = await api("PUT", `/api/external/edit-launch/${l.id}`, { status: "paused", closed_url: "https://example.com/espera" });
      expect(edited.status, edited.text).toBe(200);
      const start = Date.now();
      expect((await visit(l.slug, { base: here.url })).headers.get("location")).toBe("https://example.com/espera");
      const seen = await until(
        () => visit(l.slug, { base: child.url }),
        (r) => r.headers.get("location") === "https://example.com/espera",
        5000,
      );
      const elapsed = Date.now() - start;
      console.log(`[launch-link] the other process followed the edit after ${elapsed} ms`);
      expect(seen.headers.get("location")).toBe("https://example.com/espera");
      // 1 s of cache, plus the requests' own time on a loaded machine.
      expect(elapsed).toBeLessThan(1500);
    },
    120_000,
  );
});

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;
const daysAgo = (now: Date, n: number) => brasiliaParts(new Date(now.getTime() - n * dayMs)).date;

/** Raw click rows straight into launch_clicks, as the link writes them, at noon (Brasília) of their day. */
async function insertClicks(launchId: string, rows: { day: string; position: number | null; utmSource: string | null; visitor: string }[]) {
  const db = await getDb();
  await db.insert(launchClicks).values(rows.map((r) => ({ launchId, at: new Date(`${r.day}T12:00:00-03:00`), ...r })));
}

describe("clicks over time: raw rows folded into daily figures, then deleted past 90 days", () => {
  it("the maintenance job folds each finished day and deletes rows older than 90 days in batches; launch-analytics answers 365 days as before", async () => {
    const l = await launchWith([{}, {}]);
    const now = new Date();
    // Days 200, 120 and 95 days ago go; 89 and 30 stay; today is neither folded nor deleted.
    const rows: Parameters<typeof insertClicks>[1] = [];
    for (const [ago, n] of [
      [200, 5],
      [120, 4],
      [95, 6],
      [89, 3],
      [30, 2],
    ] as const) {
      for (let i = 0; i < n; i++) {
        rows.push({ day: daysAgo(now, ago), position: 1 + (i % 2), utmSource: i % 3 === 0 ? null : `fonte-${ago % 7}`, visitor: `v${ago}-${i % 2}` });
      }
    }
    await insertClicks(l.id, rows);
    // And today's, through the link.
    expect((await visit(l.slug, { query: "?utm_source=hoje" })).status).toBe(302);

    const analytics = async () => {
      const res = await api("GET", `/api/external/launch-analytics/${l.id}?days=365`);
      expect(res.status, res.text).toBe(200);
      return res.json;
    };
    const totals = async () => (await api("GET", `/api/external/info-launch/${l.id}`)).json.totals;
    const before = await analytics();
    const totalsBefore = await totals();
    expect(before.days.reduce((n: number, d: { clicks: number }) => n + d.clicks, 0)).toBe(rows.length + 1);
    expect(totalsBefore).toMatchObject({ clicks: rows.length + 1, unique_clicks: 11 });

    const db = await getDb();
    const old = rows.filter((r) => r.day < daysAgo(now, clickRetentionDays)).length;
    expect(old).toBe(15);
    // Batches of 4: 15 rows go in four statements.
    const counts = await runMaintenance(db, now, { batch: 4 });
    expect(counts.launchClickDaysFolded).toBe(5);
    expect(counts.launchClicks).toBe(old);
    const left = await clicksOf(l.id);
    expect(left).toHaveLength(rows.length + 1 - old);
    expect(left.every((c) => c.day >= daysAgo(now, 89))).toBe(true);

    // Same answer from the fold for the old days (clicks, unique_clicks, by_source, per-group clicks).
    expect(await analytics()).toEqual(before);
    expect(await totals()).toEqual(totalsBefore);

    // Run again: nothing more to fold or delete; a visit today still counts on top.
    const again = await runMaintenance(db, now, { batch: 4 });
    expect([again.launchClickDaysFolded, again.launchClicks]).toEqual([0, 0]);
    expect((await visit(l.slug, { base: serverB.url, query: "?utm_source=hoje" })).status).toBe(302);
    const after = await analytics();
    expect(after.days.at(-1).clicks).toBe(before.days.at(-1).clicks + 1);
    expect(after.by_source.find((s: { utm_source: string }) => s.utm_source === "hoje").clicks).toBe(2);
    expect((await totals()).clicks).toBe(totalsBefore.clicks + 1);
  });
});

describe("launch-analytics by_source", () => {
  it('lists the 20 largest sources, most first, and one utm_source "(outros)" row for the rest, over raw and folded days', async () => {
    const l = await launchWith([{}]);
    const now = new Date();
    const today = daysAgo(now, 0);
    const old = daysAgo(now, 10);
    const rows: Parameters<typeof insertClicks>[1] = [];
    const add = (source: string | null, n: number, day = today) => {
      for (let i = 0; i < n; i++) rows.push({ day, position: 1, utmSource: source, visitor: `v-${i}` });
    };
    add(null, 40);
    // fonte-01 … fonte-25 with 29 … 5 clicks, fonte-01 half of it on a day that gets folded.
    for (let i = 1; i <= 25; i++) add(`fonte-${String(i).padStart(2, "0")}`, 30 - i, i === 1 ? old : today);
    // A visitor's own "(outros)" is counted with the rest, not as a 22nd row.
    add("(outros)", 2);
    await insertClicks(l.id, rows);
    const db = await getDb();
    await runMaintenance(db, now);

    const res = await api("GET", `/api/external/launch-analytics/${l.id}?days=30`);
    expect(res.status, res.text).toBe(200);
    const expected = [
      { utm_source: null, clicks: 40 },
      ...Array.from({ length: 19 }, (_, k) => ({ utm_source: `fonte-${String(k + 1).padStart(2, "0")}`, clicks: 29 - k })),
      // fonte-20 … fonte-25 (10 + 9 + 8 + 7 + 6 + 5) and the 2 of "(outros)".
      { utm_source: "(outros)", clicks: 47 },
    ];
    expect(res.json.by_source).toEqual(expected);
    // fonte-01's day was read from the fold.
    expect(await db.select().from(launchClickDays).where(eq(launchClickDays.launchId, l.id))).toEqual([
      { launchId: l.id, day: old, clicks: 29, uniqueClicks: 29 },
    ]);
    // With no source past the 20th there is no "(outros)" row.
    const few = await launchWith([{}]);
    await insertClicks(few.id, [{ day: today, position: 1, utmSource: "instagram", visitor: "a" }]);
    expect((await api("GET", `/api/external/launch-analytics/${few.id}?days=30`)).json.by_source).toEqual([{ utm_source: "instagram", clicks: 1 }]);
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
