import { and, eq, notInArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { AuditWrite } from "../audit/audited";
import { isUniqueViolation } from "../../db/errors";
import { launchGroups, launches, segmentChannels, segments } from "../../db/schema";
import { BadRequest } from "../errors";
import { requireChannels } from "../segments/resolve-groups";
import { findLaunch } from "./launch/find-launch";
import { editedMetaColumns } from "./funnel/meta-tracking";
import { applyRestatus } from "./launch/restatus-groups";
import { forgetPublicLink } from "./link/public-link";
import type { LaunchChanges } from "./launch/schema";
import { claimSlug, slugTaken } from "./link/slug";
import { wakeLaunch } from "./launch/wake";

/**
 * Partial edit of a launch (docs/decisions.md#launches): any field but id_launch, join_url and id_segment
 * (the schema refuses those, naming them). The segment keeps the launch's name and channels; a new
 * capacity or margin re-evaluates which groups are full. A new slug changes the join link at once, and
 * the old one keeps leading to this launch (launch_slugs): it is 409 for every other launch. The link
 * of this process forgets the launch once the edit is committed (docs/decisions.md#the-join-link-in-detail, "The
 * link's cache"); other processes see it within their cache's second.
 */
export async function editLaunch(db: Db, tenantId: string, launchId: string, input: LaunchChanges, now: Date, audit?: AuditWrite) {
  const launch = await findLaunch(db, tenantId, launchId);
  const capacity = input.capacity ?? launch.capacity;
  const margin = input.margin ?? launch.margin;
  if (margin >= capacity) throw new BadRequest(`margin: must be less than capacity (${capacity}).`);
  let channelIds = launch.channelIds;
  if (input.id_channel) {
    await requireChannels(db, tenantId, input.id_channel);
    channelIds = [...new Set(input.id_channel)];
    // A group's channel administers it: it cannot leave the launch while it has groups there.
    const used = await db
      .selectDistinct({ channelId: launchGroups.channelId })
      .from(launchGroups)
      .where(and(eq(launchGroups.launchId, launchId), notInArray(launchGroups.channelId, channelIds)));
    if (used.length > 0) throw new BadRequest(`id_channel: ${used[0].channelId} administers groups of this launch and must stay in the list.`);
  }
  const template = input.group_template ? { ...launch.groupTemplate, ...stripUndefined(input.group_template) } : launch.groupTemplate;
  const meta = editedMetaColumns(launch, input.tracking?.meta);
  const newSlug = input.slug !== undefined && input.slug !== launch.slug ? input.slug : undefined;
  try {
    await db.transaction(async (tx) => {
      if (newSlug) {
        // The current slug is registered too (a launch written before launch_slugs existed may lack it).
        await claimSlug(tx, launchId, launch.slug, now);
        if (!(await claimSlug(tx, launchId, newSlug, now))) throw slugTaken(newSlug);
      }
      await tx
        .update(launches)
        .set({
          name: input.name ?? launch.name,
          slug: input.slug ?? launch.slug,
          channelIds,
          groupTemplate: template,
          capacity,
          margin,
          autoCreate: input.auto_create ?? launch.autoCreate,
          reserve: input.reserve ?? launch.reserve,
          staffNumbers: input.staff_numbers ?? launch.staffNumbers,
          status: input.status ?? launch.status,
          closedUrl: input.closed_url === undefined ? launch.closedUrl : input.closed_url,
          alertMinutes: input.alerts?.clicks_without_joins_minutes ?? launch.alertMinutes,
          alertMinClicks: input.alerts?.min_clicks ?? launch.alertMinClicks,
          buyers: { ...launch.buyers, ...stripUndefined(input.buyers ?? {}) },
          moderation: { ...launch.moderation, ...stripUndefined(input.moderation ?? {}) },
          ...meta,
          ...(input.welcome === undefined ? {} : { welcome: input.welcome, welcomeSince: input.welcome ? (launch.welcomeSince ?? now) : null }),
          updatedAt: now,
        })
        .where(eq(launches.id, launchId));
      if (input.name !== undefined) await tx.update(segments).set({ name: input.name, updatedAt: now }).where(eq(segments.id, launch.segmentId));
      if (input.id_channel) {
        await tx.delete(segmentChannels).where(eq(segmentChannels.segmentId, launch.segmentId));
        await tx.insert(segmentChannels).values(channelIds.map((channelId, position) => ({ segmentId: launch.segmentId, channelId, position })));
      }
      if (input.capacity !== undefined || input.margin !== undefined) await applyRestatus(tx, launchId, now);
      await audit?.(tx, launchId);
    });
  } catch (err) {
    if (isUniqueViolation(err) && newSlug) throw slugTaken(newSlug);
    throw err;
  }
  forgetPublicLink(launchId);
  wakeLaunch(launchId);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
