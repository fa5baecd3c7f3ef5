import type { IncomingMessage, ServerResponse } from "node:http";
import { and, asc, eq, gt, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { type LaunchGroupTemplate, launches, launchGroups, launchSlugs, type launchStatuses, outboxEvents } from "../../../db/schema";
import { serverDb } from "../../database";
import { env } from "../../env";
import { urlMaxLength } from "../../text-limits";
import { clientAddressHeader, clientIp } from "../../http/client-address";
import { securityHeaders } from "../../http/security-headers";
import { recordEvent } from "../../outbox/record-event";
import type { LinkBrokenReason } from "../../webhooks/events";
import { processWide } from "../../process-state";
import { brasiliaParts } from "../../time/brasilia";
import { isLinkPreviewBot } from "./bot-agents";
import { ClickWriter, clickCapKey, clickTags, visitorId } from "./click-counter";
import { closedPage, notFoundPage, previewPage } from "./link-pages";
import { metaClickEvent } from "./meta-event";
import { launchCreators, whyNoCreator } from "../launch/group-creators";
import { pickJoinGroup, type RotationGroup } from "../launch/rotation";
import { wakeLaunch } from "../launch/wake";

/**
 * The public join link `GET /g/{slug}` (docs/decisions.md#launches, "The link"; docs/launches.md, "O link
 * público"). Served by the front server before Next.js (server/http/app-server.ts, and the test server):
 * no page render, no provider call; a cached read, and the click committed before the redirect (group commit).
 */
export const publicLinkPrefix = "/g/";

/**
 * How long a launch and its groups are served from memory. The p99 target (< 20 ms) needs no read per
 * visit; a group that fills is left at most this long after its members were recorded (the margin,
 * `capacity − margin`, absorbs those visitors). An edit of the launch is seen at once in the process that
 * made it (`forgetPublicLink`) and within this long in the others.
 */
export const linkCacheMs = 1000;

/** One period per launch in which `link_broken` (every group full, none can be made) is sent at most once. */
export const linkBrokenPeriodMs = 60 * 60 * 1000;

interface LinkLaunch {
  id: string;
  tenantId: string;
  slug: string;
  name: string;
  status: (typeof launchStatuses)[number];
  /** Where a paused or closed link sends people, as `safeClosedUrl` allows it; null: the closed page. */
  closedUrl: string | null;
  capacity: number;
  margin: number;
  template: LaunchGroupTemplate;
  groups: RotationGroup[];
  /** The Meta Conversions API event each counted click sends; null: the launch has no `tracking.meta`. */
  metaEventName: string | null;
}

interface CachedLaunch {
  expires: number;
  launch: Promise<LinkLaunch | null>;
  /** Once read: the launch's id, or null for an unknown slug. */
  launchId?: string | null;
}

interface LinkState {
  /** By the slug visited (a launch's current slug or an old one). */
  cache: Map<string, CachedLaunch>;
  /** Launch id → when this process last made sure `link_broken` was sent (the outbox holds the truth). */
  brokenCheckedAt: Map<string, number>;
  /** Launch id → when this process last woke the engine because the link was using the last group's margin. */
  wokenAt: Map<string, number>;
  /** The clicks being written, under their addresses' cap (group commit: server/launches/link/click-counter.ts). */
  clicks: ClickWriter;
}

export { clicksPerVisitor } from "./click-counter";

const state = () =>
  processWide<LinkState>("launchLinks", () => ({
    cache: new Map(),
    brokenCheckedAt: new Map(),
    wokenAt: new Map(),
    clicks: new ClickWriter(),
  }));

/**
 * Drops what this process's link remembers of a launch, once an edit of it is committed (edit-launch,
 * create-launch): the next visit, by any of its slugs, reads the database. Reads still in flight and
 * unknown slugs go too (a read that began before the commit may hold the old launch; a new launch may
 * take a slug just seen as unknown). Without a launch, everything (as after a restart: `link_broken` is
 * then deduplicated by the outbox).
 */
export function forgetPublicLink(launchId?: string) {
  const s = state();
  if (launchId !== undefined) {
    for (const [slug, entry] of s.cache) if (entry.launchId === undefined || entry.launchId === null || entry.launchId === launchId) s.cache.delete(slug);
    return;
  }
  s.cache.clear();
  s.brokenCheckedAt.clear();
  s.wokenAt.clear();
}

/**
 * The redirect target of a stored `closed_url`: its normalised form when it is https and fits 2,048
 * characters (what create-launch and edit-launch store), else null and the closed page is shown. Rows
 * written before that rule may hold an `http://` URL (never followed: the link is no open redirector) or
 * non-ASCII characters (percent-encoded here: a header holds ASCII only, and throwing while writing it
 * ended the visit with an empty reply). Decided in docs/decisions.md#the-join-link-in-detail, "closed_url".
 */
export function safeClosedUrl(stored: string | null): string | null {
  const url = stored ? URL.parse(stored) : null;
  return url?.protocol === "https:" && url.href.length <= urlMaxLength ? url.href : null;
}

async function loadLaunch(db: Db, slug: string): Promise<LinkLaunch | null> {
  // Any slug the launch ever had (launch_slugs), or its current one (a row written straight into launches).
  const owner = sql`coalesce((select ${launchSlugs.launchId} from ${launchSlugs} where ${launchSlugs.slug} = ${slug}), (select l.id from launches l where l.slug = ${slug}))`;
  const [launch] = await db
    .select({
      id: launches.id,
      tenantId: launches.tenantId,
      slug: launches.slug,
      name: launches.name,
      status: launches.status,
      closedUrl: launches.closedUrl,
      capacity: launches.capacity,
      margin: launches.margin,
      template: launches.groupTemplate,
      metaPixelId: launches.metaPixelId,
      metaEventName: launches.metaEventName,
    })
    .from(launches)
    .where(eq(launches.id, owner))
    .limit(1);
  if (!launch) return null;
  const groups = await db
    .select({ position: launchGroups.position, status: launchGroups.status, members: launchGroups.members, inviteUrl: launchGroups.inviteUrl })
    .from(launchGroups)
    .where(eq(launchGroups.launchId, launch.id))
    .orderBy(asc(launchGroups.position));
  const { metaPixelId, metaEventName, ...rest } = launch;
  return { ...rest, closedUrl: safeClosedUrl(launch.closedUrl), groups, metaEventName: metaPixelId === null ? null : (metaEventName ?? "Lead") };
}

function cachedLaunch(db: Db, slug: string, nowMs: number): Promise<LinkLaunch | null> {
  const { cache } = state();
  const hit = cache.get(slug);
  if (hit && hit.expires > nowMs) return hit.launch;
  // Concurrent visits of a slug share one read; a failed read is not kept.
  const launch = loadLaunch(db, slug);
  if (cache.size >= 10_000) cache.clear();
  const entry: CachedLaunch = { expires: nowMs + linkCacheMs, launch };
  cache.set(slug, entry);
  launch.then(
    (l) => {
      entry.launchId = l?.id ?? null;
    },
    () => {
      if (cache.get(slug) === entry) cache.delete(slug);
    },
  );
  return launch;
}

/**
 * Why the link has no group to send a visitor to: every group is full (margins included), or there is
 * none that could take them (no group yet, every one broken or without an invite link).
 */
const brokenReason = (launch: LinkLaunch) =>
  launch.groups.length > 0 && launch.groups.every((g) => g.status === "full" || (g.status !== "broken" && g.inviteUrl !== null))
    ? "all_groups_full"
    : "no_open_group";

/**
 * Every group is full and the launch would make the next one, but none of its channels may create today:
 * each is at its `group_create_cap` or out of action, and at least one is at its cap (CONTRACT §7).
 */
async function capStopsCreation(db: Db, launchId: string, now: Date): Promise<boolean> {
  const [row] = await db
    .select({ tenantId: launches.tenantId, channelIds: launches.channelIds, autoCreate: launches.autoCreate })
    .from(launches)
    .where(eq(launches.id, launchId));
  if (!row?.autoCreate) return false;
  const { able, all } = await launchCreators(db, row, now);
  return able.length === 0 && whyNoCreator(all) === "group_create_cap";
}

/**
 * Sends `link_broken` (`reason` from brokenReason, or `group_create_cap` when that is what keeps the next
 * group from being made) unless one was sent for this launch within the period: checked in the outbox under
 * a lock per launch, so several processes and restarts still send one.
 */
async function reportLinkBroken(db: Db, launch: LinkLaunch, now: Date) {
  const { brokenCheckedAt } = state();
  const last = brokenCheckedAt.get(launch.id);
  if (last !== undefined && now.getTime() - last < linkBrokenPeriodMs) return;
  brokenCheckedAt.set(launch.id, now.getTime());
  let reason: LinkBrokenReason = brokenReason(launch);
  if (reason === "all_groups_full" && (await capStopsCreation(db, launch.id, now))) reason = "group_create_cap";
  const since = new Date(now.getTime() - linkBrokenPeriodMs);
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`link_broken:${launch.id}`}))`);
    const [recent] = await tx
      .select({ id: outboxEvents.id })
      .from(outboxEvents)
      .where(
        and(
          eq(outboxEvents.tenantId, launch.tenantId),
          eq(outboxEvents.type, "group_activity"),
          gt(outboxEvents.createdAt, since),
          sql`${outboxEvents.payload}->'data'->>'event' = 'link_broken'`,
          sql`${outboxEvents.payload}->'data'->>'id_launch' = ${launch.id}`,
          // The invite-health job's link_broken names a group; this one is the launch's link as a whole.
          sql`${outboxEvents.payload}->'data'->>'id_group' is null`,
        ),
      )
      .limit(1);
    if (recent) return;
    await recordEvent(tx, launch.tenantId, "group_activity", { event: "link_broken", id_launch: launch.id, reason }, now);
  });
}

/** At most once a second per launch: the engine is told the link is living on the last group's margin. */
function wakeEngine(launchId: string, nowMs: number) {
  const { wokenAt } = state();
  const last = wokenAt.get(launchId);
  if (last !== undefined && nowMs - last < linkCacheMs) return;
  if (wokenAt.size >= 10_000) wokenAt.clear();
  wokenAt.set(launchId, nowMs);
  wakeLaunch(launchId);
}

export interface LinkVisit {
  method: string;
  /** Path and query, as in the request line. */
  url: string;
  userAgent: string | undefined;
  clientAddress: string;
}

export interface LinkAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const html = (status: number, body: string, headers: Record<string, string> = { "cache-control": "no-store" }): LinkAnswer => ({
  status,
  headers: { "content-type": "text/html; charset=utf-8", ...headers },
  body,
});
const redirect = (location: string): LinkAnswer => ({ status: 302, headers: { location, "cache-control": "no-store" }, body: "" });

const slugPattern = /^[a-z0-9-]{3,60}$/;

/**
 * What the link answers to one visit (no I/O but the cached read, the click and, rarely, `link_broken`):
 *  - a preview fetcher (server/launches/link/bot-agents.ts): 200, the Open Graph page; not counted;
 *  - a paused or closed launch: 302 to `closed_url`, or 200 with the closed page; not counted;
 *  - otherwise 302 to the invite link of the group `pickJoinGroup` chooses, and the click is stored
 *    (up to `clicksPerVisitor` per address and launch in 10 minutes), with its Meta server event when the
 *    launch has `tracking.meta` (server/launches/funnel/deliver-meta-events.ts sends it later);
 *    when every group is full (margins included): 200 with the closed page, `link_broken`, not counted;
 *  - an unknown slug: 404 page. HEAD answers as GET would, without a body and without counting.
 */
export async function answerPublicLink(db: Db, visit: LinkVisit, now: Date): Promise<LinkAnswer> {
  if (visit.method !== "GET" && visit.method !== "HEAD") {
    return { status: 405, headers: { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }, body: "Method Not Allowed" };
  }
  const url = new URL(visit.url, "http://link");
  const slug = url.pathname.slice(publicLinkPrefix.length).replace(/\/$/, "").toLowerCase();
  const launch = slugPattern.test(slug) ? await cachedLaunch(db, slug, now.getTime()) : null;
  if (!launch) return html(404, notFoundPage());

  if (isLinkPreviewBot(visit.userAgent)) {
    const page = previewPage({
      name: launch.name,
      description: launch.template.description,
      imageUrl: launch.template.image_url,
      joinUrl: `${env.appUrl}${publicLinkPrefix}${launch.slug}`,
    });
    // private: a shared cache (a CDN in front) must never hand this page to a person, who gets the redirect.
    return html(200, page, { "cache-control": "private, max-age=60", vary: "User-Agent" });
  }
  if (launch.status !== "active") return launch.closedUrl ? redirect(launch.closedUrl) : html(200, closedPage(launch.name));

  const pick = pickJoinGroup(launch.groups, launch);
  if (!pick) {
    wakeEngine(launch.id, now.getTime());
    if (visit.method === "GET") await reportLinkBroken(db, launch, now).catch((err) => console.error("[launch-link] link_broken not recorded", err));
    return html(200, closedPage(launch.name));
  }
  if (pick.usingMargin) wakeEngine(launch.id, now.getTime());
  const inviteUrl = pick.group.inviteUrl as string;
  if (visit.method === "HEAD") return redirect(inviteUrl);

  const day = brasiliaParts(now).date;
  try {
    await state().clicks.record(db, {
      launchId: launch.id,
      at: now,
      day,
      position: pick.group.position,
      ...clickTags(url.searchParams),
      visitor: visitorId(visit.clientAddress, launch.id, day),
      capKey: clickCapKey(visit.clientAddress, launch.id),
      // Meta's server event goes to the outbox in the click's own statement, only if the click is counted.
      meta: launch.metaEventName
        ? metaClickEvent({ eventName: launch.metaEventName, at: now, url, clientAddress: visit.clientAddress, userAgent: visit.userAgent })
        : undefined,
    });
  } catch (err) {
    // The visitor still gets their group: a lost click costs a count, a failed redirect costs a lead.
    console.error("[launch-link] click not recorded", err);
  }
  return redirect(inviteUrl);
}

const unavailable = (): LinkAnswer => ({
  status: 503,
  headers: { "content-type": "text/plain; charset=utf-8", "retry-after": "1", "cache-control": "no-store" },
  body: "Serviço indisponível. Tente de novo em instantes.",
});

/**
 * node:http: for the front server (server/http/app-server.ts) and the test server, which have set the
 * client-address header (server/http/client-address.ts `applyClientHeaders`) and the security headers
 * (server/http/security-headers.ts) before calling it.
 */
export async function servePublicLink(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let answer: LinkAnswer;
  try {
    const address = req.headers[clientAddressHeader];
    answer = await answerPublicLink(
      await serverDb(),
      {
        method: req.method ?? "GET",
        url: req.url ?? "/",
        userAgent: req.headers["user-agent"],
        clientAddress: typeof address === "string" ? address : "unknown",
      },
      new Date(),
    );
  } catch (err) {
    console.error("[launch-link]", err);
    answer = unavailable();
  }
  // The front server has set the security headers already; they are set again only after the headers were cleared.
  const write = (a: LinkAnswer) => {
    for (const name in a.headers) res.setHeader(name, a.headers[name] as string);
    res.statusCode = a.status;
  };
  try {
    write(answer);
  } catch (err) {
    // A header value Node refuses (a character outside Latin-1) would otherwise end in an empty reply.
    console.error("[launch-link] answer not writable", err);
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    for (const [name, value] of Object.entries(securityHeaders((req.url ?? "/").split("?")[0] as string))) res.setHeader(name, value);
    answer = unavailable();
    write(answer);
  }
  res.end(req.method === "HEAD" ? undefined : answer.body);
}

/** Fetch API: app/g/[slug]/route.ts, for `next dev` (the production server answers before Next.js). */
export async function publicLinkResponse(req: Request): Promise<Response> {
  let answer: LinkAnswer;
  try {
    const url = new URL(req.url);
    answer = await answerPublicLink(
      await serverDb(),
      { method: req.method, url: url.pathname + url.search, userAgent: req.headers.get("user-agent") ?? undefined, clientAddress: clientIp(req.headers) },
      new Date(),
    );
  } catch (err) {
    console.error("[launch-link]", err);
    answer = unavailable();
  }
  return new Response(req.method === "HEAD" || answer.status === 302 ? null : answer.body, { status: answer.status, headers: answer.headers });
}
