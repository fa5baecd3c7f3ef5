import { and, count, countDistinct, desc, eq, isNotNull, sum } from "drizzle-orm";
import type { Db } from "../../db/client";
import { buyerRemovals, defaultModeration, launchGroups, launchParticipants, launches, launchWelcomes } from "../../db/schema";
import { buyersInGroupsCount } from "./funnel/buyers-in-groups";
import { toBrasiliaIso } from "../time/brasilia";
import { clickTotals } from "./funnel/click-figures";
import { leadTotals } from "./funnel/lead-figures";
import { findLaunch, groupsOfLaunch, groupsOut, joinUrl, type Launch } from "./launch/find-launch";
import { trackingOut } from "./funnel/meta-tracking";
import { pickJoinGroup } from "./launch/rotation";
import { activeTrafficAlert } from "./funnel/traffic-alerts";

/** The launch's counters: groups and members now; people, clicks, joins and leaves over its life (staff not counted as leads). */
async function totals(db: Db, launch: Launch, groups: { members: number }[]) {
  const { id: launchId, channelIds } = launch;
  const lead = and(eq(launchParticipants.launchId, launchId), eq(launchParticipants.staff, false));
  const [people] = await db
    .select({ unique: countDistinct(launchParticipants.participant), joins: count(), leaves: count(launchParticipants.leftAt) })
    .from(launchParticipants)
    .where(lead);
  // Folded days and recent raw clicks (server/launches/funnel/click-figures.ts): raw rows go after 90 days.
  const clicks = await clickTotals(db, launchId);
  const leads = await leadTotals(db, launchId, channelIds);
  const [welcomes] = await db
    .select({ sent: count() })
    .from(launchWelcomes)
    .where(and(eq(launchWelcomes.launchId, launchId), eq(launchWelcomes.state, "sent")));
  const [removed] = await db
    .select({ n: count() })
    .from(buyerRemovals)
    .where(and(eq(buyerRemovals.launchId, launchId), isNotNull(buyerRemovals.removedAt)));
  // Kept on the launch's row, counted again only after a join, a leave, a pairing or a purchase (buyers-in-groups.ts).
  const inGroups = await buyersInGroupsCount(db, launch);
  return {
    groups: groups.length,
    members: groups.reduce((n, g) => n + g.members, 0),
    unique_members: people?.unique ?? 0,
    clicks: clicks.clicks,
    unique_clicks: clicks.unique,
    joins: people?.joins ?? 0,
    leaves: people?.leaves ?? 0,
    ...leads,
    welcomes_sent: welcomes?.sent ?? 0,
    buyers_removed: removed?.n ?? 0,
    buyers_in_groups: inGroups,
  };
}

/** info-launch's answer (edit-launch answers the same). */
export async function infoLaunch(db: Db, tenantId: string, launchId: string) {
  const launch = await findLaunch(db, tenantId, launchId);
  return launchInfo(db, launch);
}

export async function launchInfo(db: Db, launch: Launch, now = new Date()) {
  const groups = await groupsOfLaunch(db, launch.id);
  const alert = await activeTrafficAlert(db, launch, now);
  // Paused or closed: the link sends nobody to a group.
  const current = launch.status === "active" ? pickJoinGroup(groups, launch) : null;
  const t = launch.groupTemplate;
  return {
    success: true as const,
    id_launch: launch.id,
    name: launch.name,
    slug: launch.slug,
    join_url: joinUrl(launch.slug),
    status: launch.status,
    id_segment: launch.segmentId,
    id_channel: launch.channelIds,
    group_template: {
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      ...(t.image_url !== undefined ? { image_url: t.image_url } : {}),
      admins_only: t.admins_only,
      admins: t.admins,
    },
    capacity: launch.capacity,
    margin: launch.margin,
    auto_create: launch.autoCreate,
    reserve: launch.reserve,
    staff_numbers: launch.staffNumbers,
    closed_url: launch.closedUrl,
    alerts: { clicks_without_joins_minutes: launch.alertMinutes, min_clicks: launch.alertMinClicks },
    buyers: { remove_from_groups: launch.buyers.remove_from_groups, dry_run: launch.buyers.dry_run },
    moderation: { ...defaultModeration, ...launch.moderation },
    tracking: trackingOut(launch),
    welcome: launch.welcome,
    traffic_alert: alert ? { ...alert, at: toBrasiliaIso(alert.at) } : null,
    totals: await totals(db, launch, groups),
    current_group: current
      ? { position: current.group.position, id_group: current.group.groupId, name: current.group.name, invite_url: current.group.inviteUrl! }
      : null,
    groups: await groupsOut(db, launch.id, groups),
    created_at: toBrasiliaIso(launch.createdAt),
  };
}

/** The dashboard's list: each launch with its group, member and click counts, newest first. */
export async function listLaunches(db: Db, tenantId: string) {
  const rows = await db
    .select({
      launch: launches,
      groups: count(launchGroups.position),
      members: sum(launchGroups.members).mapWith(Number),
      clicks: sum(launchGroups.clicks).mapWith(Number),
    })
    .from(launches)
    .leftJoin(launchGroups, eq(launchGroups.launchId, launches.id))
    .where(eq(launches.tenantId, tenantId))
    .groupBy(launches.id)
    .orderBy(desc(launches.createdAt));
  return {
    launches: rows.map((r) => ({
      id_launch: r.launch.id,
      name: r.launch.name,
      slug: r.launch.slug,
      join_url: joinUrl(r.launch.slug),
      status: r.launch.status,
      groups: r.groups,
      members: r.members ?? 0,
      clicks: r.clicks ?? 0,
      created_at: toBrasiliaIso(r.launch.createdAt),
    })),
  };
}
