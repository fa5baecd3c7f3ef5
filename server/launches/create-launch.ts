import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { auditLog, launches, segmentChannels, segments } from "../../db/schema";
import type { AuditWrite } from "../audit/audited";
import { isUniqueViolation } from "../../db/errors";
import { newId } from "../ids";
import type { MessagingProvider } from "../messaging/provider";
import { requireChannels } from "../segments/resolve-groups";
import { adoptExistingGroups, checkAdoptable, createTemplateGroups } from "./launch/add-groups";
import { groupsOfLaunch, type Launch } from "./launch/find-launch";
import { launchCreators, noCreatorError } from "./launch/group-creators";
import { metaColumns } from "./funnel/meta-tracking";
import type { CreateLaunchInput } from "./launch/schema";
import { forgetPublicLink } from "./link/public-link";
import { claimSlug, freeSlug, randomSlug, slugFromName, slugTaken } from "./link/slug";
import { wakeLaunch } from "./launch/wake";

/**
 * Creates a launch (docs/decisions.md#launches): the launch and its segment (named like it) in one
 * transaction, then `initial_groups` groups from the template and the adopted ones, appended in order.
 * A slug given and taken (by any launch, now or before a rename) is 409; a generated one that is taken
 * gets `-2`, `-3`, …
 * Nothing is kept when groups are asked for and not one can be made (no channel may create: 503; the
 * provider failing or refusing: 503 / 400). Should the provider fail midway, the launch keeps the groups
 * made so far (the answer lists them; launch-groups makes more).
 */
export async function createLaunch(db: Db, provider: MessagingProvider, tenantId: string, input: CreateLaunchInput, now: Date, audit?: AuditWrite) {
  await requireChannels(db, tenantId, [...input.id_channel, ...(input.adopt ? [input.adopt.id_channel] : [])]);
  const channelIds = [...new Set(input.id_channel)];
  // Checked before anything is made: a 400 leaves nothing behind.
  if (input.adopt) await checkAdoptable(provider, channelIds, input.adopt);
  if (input.initial_groups > 0) {
    // No channel may create now (offline, throttled within the hour, at its day's cap): 503, nothing kept.
    const { able, all } = await launchCreators(db, { tenantId, channelIds }, now);
    if (able.length === 0) throw noCreatorError(all, now);
  }

  const launch = await insertLaunch(db, tenantId, input, channelIds, now, audit);
  let error: unknown;
  try {
    ({ error } = await createTemplateGroups(db, provider, launch, input.initial_groups, now));
  } catch (err) {
    // Not one group could be made: nothing is kept, so a retry starts afresh (503 or 400 from the provider); nor its
    // audit entry, written with the launch (a create that left nothing is no change to the account).
    await db.transaction(async (tx) => {
      await tx.delete(launches).where(eq(launches.id, launch.id));
      await tx.delete(segments).where(eq(segments.id, launch.segmentId));
      await tx.delete(auditLog).where(and(eq(auditLog.tenantId, tenantId), eq(auditLog.action, "launch.create"), eq(auditLog.target, launch.id)));
    });
    throw err;
  }
  if (!error && input.adopt) await adoptExistingGroups(db, provider, launch, input.adopt, now);
  // The link may hold "unknown slug" for this slug from a visit a moment ago.
  forgetPublicLink(launch.id);
  wakeLaunch(launch.id);
  return { launch, groups: await groupsOfLaunch(db, launch.id) };
}

async function insertLaunch(db: Db, tenantId: string, input: CreateLaunchInput, channelIds: string[], now: Date, audit?: AuditWrite): Promise<Launch> {
  const base = input.slug ?? slugFromName(input.name);
  for (let attempt = 0; ; attempt++) {
    const slug = input.slug ?? (base ? await freeSlug(db, base) : randomSlug());
    try {
      return await db.transaction(async (tx) => {
        const segmentId = newId("segment");
        await tx.insert(segments).values({ id: segmentId, tenantId, name: input.name, createdAt: now, updatedAt: now });
        await tx.insert(segmentChannels).values(channelIds.map((channelId, position) => ({ segmentId, channelId, position })));
        const [row] = await tx
          .insert(launches)
          .values({
            id: newId("launch"),
            tenantId,
            name: input.name,
            slug,
            segmentId,
            channelIds,
            groupTemplate: input.group_template,
            capacity: input.capacity,
            margin: input.margin,
            autoCreate: input.auto_create,
            reserve: input.reserve,
            staffNumbers: input.staff_numbers,
            status: input.status,
            closedUrl: input.closed_url ?? null,
            alertMinutes: input.alerts.clicks_without_joins_minutes,
            alertMinClicks: input.alerts.min_clicks,
            buyers: input.buyers,
            ...(input.moderation ? { moderation: input.moderation } : {}),
            ...metaColumns(input.tracking?.meta),
            welcome: input.welcome ?? null,
            welcomeSince: input.welcome ? now : null,
            createdAt: now,
            updatedAt: now,
          })
          .returning();
        if (!(await claimSlug(tx, row.id, slug, now))) throw new SlugLost();
        await audit?.(tx, row.id);
        return row;
      });
    } catch (err) {
      if (!isUniqueViolation(err) && !(err instanceof SlugLost)) throw err;
      if (input.slug) throw slugTaken(input.slug);
      if (attempt >= 5) throw err;
    }
  }
}

/** The slug went to another launch between freeSlug and the insert (or was one's before a rename). */
class SlugLost extends Error {}
