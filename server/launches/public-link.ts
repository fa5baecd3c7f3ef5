import type { IncomingMessage, ServerResponse } from "node:http";
import { and, asc, eq, gt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type LaunchGroupTemplate, launches, launchGroups, type launchStatuses, outboxEvents } from "../../db/schema";
import { serverDb } from "../database";
import { env } from "../env";
import { clientAddressHeader, clientIp } from "../http/client-address";
import { securityHeaders } from "../http/security-headers";
import { recordEvent } from "../outbox/record-event";
import { processWide } from "../process-state";
import { brasiliaParts } from "../time/brasilia";
import { isLinkPreviewBot } from "./bot-agents";
import { ClickWriter, utmValue, visitorId } from "./click-counter";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { closedPage, notFoundPage, previewPage } from "./link-pages";
import { pickJoinGroup, type RotationGroup } from "./rotation";
import { wakeLaunch } from "./wake";

/**
 * The public join link `GET /g/{slug}` (docs/decisions.md#launches, "The link"; docs/launches.md, "O link
 * público"). Served by the front server before Next.js (server/http/app-server.ts, and the test server):
 * no page render, no provider call; a cached read, and the click committed before the redirect (group commit).
 */
export const publicLinkPrefix = "/g/";

/**
 * How long a launch and its groups are served from memory. The p99 target (< 20 ms) needs no read per
 * visit; a group that fills is left at most this long after its members were recorded (the margin,
 * `capacity − margin`, absorbs those visitors). Edits of the launch (status, closed_url) show as late.
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
  closedUrl: string | null;
  capacity: number;
  margin: number;
  template: LaunchGroupTemplate;
  groups: RotationGroup[];
}

interface LinkState {
  cache: Map<string, { expires: number; launch: Promise<LinkLaunch | null> }>;
  /** Launch id → when this process last made sure `link_broken` was sent (the outbox holds the truth). */
  brokenCheckedAt: Map<string, number>;
  /** Launch id → when this process last woke the engine because the link was using the last group's margin. */
  wokenAt: Map<string, number>;
  /** The clicks being written (group commit: server/launches/click-counter.ts). */
  clicks: ClickWriter;
  /** Counted clicks per visitor id (an address on a launch and day): a flood from one address is not people. */
  perVisitor: RateLimiterMemory;
}

/**
 * At most this many clicks of one address on one launch are counted in `perVisitorWindowSeconds`; the
 * visits past it are still sent to their group. Generous, because many people can share an address
 * (mobile carriers' NAT); a script sending the link in a loop is not counted past it.
 */
export const clicksPerVisitor = 60;
const perVisitorWindowSeconds = 600;

const state = () =>
  processWide<LinkState>("launchLinks", () => ({
    cache: new Map(),
    brokenCheckedAt: new Map(),
    wokenAt: new Map(),
    clicks: new ClickWriter(),
    perVisitor: new RateLimiterMemory({ points: clicksPerVisitor, duration: perVisitorWindowSeconds }),
  }));

/**
 * Drops the cached launch: after an edit, the link answers from the database at once. Without a slug,
 * everything this process remembers (as after a restart: `link_broken` is then deduplicated by the outbox).
 */
export function forgetPublicLink(slug?: string) {
  const s = state();
  if (slug !== undefined) {
    s.cache.delete(slug);
    return;
  }
  s.cache.clear();
  s.brokenCheckedAt.clear();
  s.wokenAt.clear();
}

async function loadLaunch(db: Db, slug: string): Promise<LinkLaunch | null> {
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
    })
    .from(launches)
    .where(eq(launches.slug, slug))
    .limit(1);
  if (!launch) return null;
  const groups = await db
    .select({ position: launchGroups.position, status: launchGroups.status, members: launchGroups.members, inviteUrl: launchGroups.inviteUrl })
    .from(launchGroups)
    .where(eq(launchGroups.launchId, launch.id))
    .orderBy(asc(launchGroups.position));
  return { ...launch, groups };
}

function cachedLaunch(db: Db, slug: string, nowMs: number): Promise<LinkLaunch | null> {
  const { cache } = state();
  const hit = cache.get(slug);
  if (hit && hit.expires > nowMs) return hit.launch;
  // Concurrent visits of a slug share one read; a failed read is not kept.
  const launch = loadLaunch(db, slug);
  if (cache.size >= 10_000) cache.clear();
  cache.set(slug, { expires: nowMs + linkCacheMs, launch });
  launch.catch(() => cache.delete(slug));
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
 * Sends `link_broken` (`reason` from brokenReason) unless one was sent for this launch within the period:
 * checked in the outbox under a lock per launch, so several processes and restarts still send one.
 */
async function reportLinkBroken(db: Db, launch: LinkLaunch, now: Date) {
  const reason = brokenReason(launch);
  const { brokenCheckedAt } = state();
  const last = brokenCheckedAt.get(launch.id);
  if (last !== undefined && now.getTime() - last < linkBrokenPeriodMs) return;
  brokenCheckedAt.set(launch.id, now.getTime());
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

const html = (status: number, body: string, cache = "no-store"): LinkAnswer => ({
  status,
  headers: { "content-type": "text/html; charset=utf-8", "cache-control": cache },
  body,
});
const redirect = (location: string): LinkAnswer => ({ status: 302, headers: { location, "cache-control": "no-store" }, body: "" });

const slugPattern = /^[a-z0-9-]{3,60}$/;

/**
 * What the link answers to one visit (no I/O but the cached read, the click and, rarely, `link_broken`):
 *  - a preview fetcher (server/launches/bot-agents.ts): 200, the Open Graph page; not counted;
 *  - a paused or closed launch: 302 to `closed_url`, or 200 with the closed page; not counted;
 *  - otherwise 302 to the invite link of the group `pickJoinGroup` chooses, and the click is stored
 *    (up to `clicksPerVisitor` per address and launch in 10 minutes);
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
    return html(200, page, "public, max-age=60");
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
  const visitor = visitorId(visit.clientAddress, launch.id, day);
  const counted = await state()
    .perVisitor.consume(visitor)
    .then(
      () => true,
      () => false,
    );
  if (!counted) return redirect(inviteUrl);
  try {
    await state().clicks.record(db, {
      launchId: launch.id,
      at: now,
      day,
      position: pick.group.position,
      utmSource: utmValue(url.searchParams.get("utm_source")),
      utmMedium: utmValue(url.searchParams.get("utm_medium")),
      utmCampaign: utmValue(url.searchParams.get("utm_campaign")),
      visitor,
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
 * client-address header (server/http/client-address.ts `applyClientHeaders`) before calling it.
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
  const pathname = (req.url ?? "/").split("?")[0] as string;
  for (const [name, value] of Object.entries({ ...securityHeaders(pathname), ...answer.headers })) res.setHeader(name, value);
  res.statusCode = answer.status;
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
