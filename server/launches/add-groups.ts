/**
 * The two ways a group joins a launch (docs/decisions.md#launches, "Groups of a launch"): created from
 * the template through the provider, or adopted as it exists. Either way the group is appended at the
 * next position, added to the launch's segment, and the statuses are brought up to date, in one
 * transaction; a created group is announced with a `group_created` group_activity event.
 */
import { and, asc, eq, inArray, max } from "drizzle-orm";
import type { Db } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { channels, launchGroups, segmentChannels, segmentGroups } from "../../db/schema";
import { BadRequest, Unavailable } from "../errors";
import { ProviderOutcomeUnknownError, ProviderSendError, ProviderUnavailableError, type MessagingProvider } from "../messaging/provider";
import { recordEvent } from "../outbox/record-event";
import { queryGroups } from "../channels/list-groups";
import type { Launch, LaunchGroup } from "./find-launch";
import { withLaunchLock } from "./launch-lock";
import { applyRestatus } from "./restatus-groups";

/** The template's name for the group at `position`. */
export const groupName = (template: string, position: number) => template.replaceAll("{n}", String(position));

/** The first of the launch's channels that is connected now (it creates the next group), or null. */
export async function creatingChannel(db: Db, launch: Pick<Launch, "tenantId" | "channelIds">): Promise<string | null> {
  if (launch.channelIds.length === 0) return null;
  const rows = await db
    .select({ id: channels.id, status: channels.status })
    .from(channels)
    .where(and(eq(channels.tenantId, launch.tenantId), inArray(channels.id, launch.channelIds)));
  return launch.channelIds.find((id) => rows.some((r) => r.id === id && r.status === "connected")) ?? null;
}

async function nextPosition(db: Db, launchId: string) {
  const [row] = await db
    .select({ value: max(launchGroups.position) })
    .from(launchGroups)
    .where(eq(launchGroups.launchId, launchId));
  return (row?.value ?? 0) + 1;
}

interface NewLaunchGroup {
  groupId: string;
  channelId: string;
  name: string;
  inviteUrl: string | null;
  members: number;
  adopted: boolean;
}

/**
 * Appends one group: launch_groups and segment_groups rows, statuses, and (created groups) the
 * `group_created` event. Another process may have taken `position` meanwhile: then the group goes to
 * the next free one (its name keeps the number it was created with).
 */
async function appendGroup(db: Db, launch: Launch, position: number, g: NewLaunchGroup, now: Date): Promise<LaunchGroup> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        const [row] = await tx
          .insert(launchGroups)
          .values({ launchId: launch.id, position, ...g, status: "reserve", createdAt: now })
          .returning();
        await tx
          .insert(segmentChannels)
          .values({ segmentId: launch.segmentId, channelId: g.channelId, position: launch.channelIds.indexOf(g.channelId) })
          .onConflictDoNothing();
        await tx
          .insert(segmentGroups)
          .values({ segmentId: launch.segmentId, groupId: g.groupId, channelId: g.channelId, name: g.name, position: position - 1 })
          .onConflictDoNothing();
        const changes = await applyRestatus(tx, launch.id, now);
        const status = changes.find((c) => c.position === position)?.to ?? row.status;
        if (!g.adopted) {
          await recordEvent(
            tx,
            launch.tenantId,
            "group_activity",
            { event: "group_created", id_launch: launch.id, id_group: g.groupId, name: g.name, position, invite_url: g.inviteUrl },
            now,
          );
        }
        return { ...row, status };
      });
    } catch (err) {
      if (!isUniqueViolation(err) || attempt >= 5) throw err;
      const [same] = await db
        .select()
        .from(launchGroups)
        .where(and(eq(launchGroups.launchId, launch.id), eq(launchGroups.groupId, g.groupId)));
      if (same) return same;
      position = await nextPosition(db, launch.id);
    }
  }
}

/** The error code of a group creation WhatsApp throttled (the launch engine makes no other group on that channel in the pass). */
export const groupCreateRateLimited = "group_create_rate_limited";

/** Did the platform throttle this creation (WhatsApp's rate-overlimit), whether or not the group was made? */
export const rateLimitedCreation = (err: unknown) =>
  ((err instanceof ProviderSendError || err instanceof ProviderOutcomeUnknownError) && err.rateLimited) ||
  (err instanceof Unavailable && err.code === groupCreateRateLimited);

/**
 * Provider failures in the API's terms: the platform throttled the number (503 `group_create_rate_limited`),
 * cannot say yet whether the group was made (503 `group_create_unknown`: it is looked up before another
 * is made), is unreachable or failed (503), or refused the request (400, naming `what`).
 */
function providerError(err: unknown, what: string): never {
  if (rateLimitedCreation(err)) throw new Unavailable(`${what}: ${(err as Error).message}`, groupCreateRateLimited);
  if (err instanceof ProviderOutcomeUnknownError) throw new Unavailable(`${what}: ${err.message}`, "group_create_unknown");
  if (err instanceof ProviderUnavailableError) throw new Unavailable(`${what}: ${err.message}`);
  if (err instanceof ProviderSendError && err.transient) throw new Unavailable(`${what}: ${err.message}`);
  if (err instanceof ProviderSendError) throw new BadRequest(`${what}: ${err.message}`, "provider_refused");
  throw err;
}

/**
 * Creates `count` groups from the launch's template through its first connected channel, one after the
 * other. Stops at the first failure, and after a group the platform made while throttling the number:
 * the groups made so far are kept (and returned) and the error is thrown only when none was made. A
 * group the provider found after a failure (`adopted`) is the creation's group like any other.
 */
export function createTemplateGroups(
  db: Db,
  provider: MessagingProvider,
  launch: Launch,
  count: number,
  now: Date,
): Promise<{ created: LaunchGroup[]; error?: unknown }> {
  return withLaunchLock(launch.id, () => createTemplateGroupsLocked(db, provider, launch, count, now));
}

/** createTemplateGroups for a caller that already holds the launch's lock (the engine decides how many under it). */
export async function createTemplateGroupsLocked(
  db: Db,
  provider: MessagingProvider,
  launch: Launch,
  count: number,
  now: Date,
): Promise<{ created: LaunchGroup[]; error?: unknown }> {
  {
    const created: LaunchGroup[] = [];
    if (count <= 0) return { created };
    const channelId = await creatingChannel(db, launch);
    if (!channelId) throw new Unavailable("None of the launch's channels (id_channel) is connected: no group can be created now.", "channel_offline");
    const t = launch.groupTemplate;
    for (let i = 0; i < count; i++) {
      try {
        const position = await nextPosition(db, launch.id);
        const name = groupName(t.name, position);
        const made = await provider.createGroup(channelId, {
          // The launch's slot: asked again (a crash before it was recorded), the provider answers the group it made.
          key: `launch:${launch.id}:${position}`,
          name,
          description: t.description,
          pictureUrl: t.image_url,
          adminsOnly: t.admins_only,
          admins: t.admins,
        });
        if (t.admins.length > 0) {
          // createGroup adds and promotes them where the platform allows; promoting again is harmless.
          await provider
            .promoteParticipants(channelId, made.id_group, t.admins)
            .catch((err) => console.error("[launches] promoting admins failed", launch.id, made.id_group, err));
        }
        const inviteUrl = await provider.inviteUrl(channelId, made.id_group).catch((err) => {
          console.error("[launches] reading the invite link failed", launch.id, made.id_group, err);
          return null;
        });
        // Everyone in it now: the channel's number and the admins it could add.
        const members = (await provider.groupState(channelId, made.id_group).catch(() => null))?.size ?? 1 + t.admins.length;
        // `adopted: false` here means made for the launch (group_created is sent), even when the provider found it after a failure.
        created.push(
          await appendGroup(db, launch, position, { groupId: made.id_group, channelId, name: made.name || name, inviteUrl, members, adopted: false }, now),
        );
        if (made.adopted)
          console.warn(`[launches] launch ${launch.id}: group ${made.id_group} was found after the platform failed making it (kept, not made again)`);
        if (made.rateLimited)
          return { created, error: new ProviderSendError("The platform throttled group creation on this number.", true, { rateLimited: true }) };
      } catch (err) {
        if (created.length === 0) providerError(err, "The group could not be created");
        console.error("[launches] creating a group failed", launch.id, err);
        return { created, error: err };
      }
    }
    return { created };
  }
}

/**
 * Checks an `adopt` before anything is made (so a 400 leaves the launch as it was): the channel is one
 * of the launch's and has every group. Returns the channel's groups.
 */
export async function checkAdoptable(provider: MessagingProvider, channelIds: string[], adopt: { id_channel: string; groups: string[] }) {
  if (!channelIds.includes(adopt.id_channel)) {
    throw new BadRequest(`adopt.id_channel: ${adopt.id_channel} is not one of the launch's channels (id_channel).`);
  }
  const available = new Map((await queryGroups(provider, adopt.id_channel)).map((g) => [g.id_group, g]));
  const missing = adopt.groups.filter((id) => !available.has(id));
  if (missing.length > 0) throw new BadRequest(`adopt.groups: ${missing.slice(0, 5).join(", ")} not found in channel ${adopt.id_channel}.`);
  return available;
}

/**
 * Adopts existing groups of one of the launch's channels, in the order given (groups already in the
 * launch are skipped). Each must be a group of that channel (400 naming it); its invite link is read
 * (the channel's number must be an admin: 400 naming the group) and its size becomes `members`.
 */
export function adoptExistingGroups(db: Db, provider: MessagingProvider, launch: Launch, adopt: { id_channel: string; groups: string[] }, now: Date) {
  return withLaunchLock(launch.id, async () => {
    const available = await checkAdoptable(provider, launch.channelIds, adopt);
    const existing = await db
      .select({ groupId: launchGroups.groupId })
      .from(launchGroups)
      .where(eq(launchGroups.launchId, launch.id))
      .orderBy(asc(launchGroups.position));
    const known = new Set(existing.map((r) => r.groupId));
    const wanted = [...new Set(adopt.groups)].filter((id) => !known.has(id));
    if (wanted.length === 0) return [];
    const adopted: LaunchGroup[] = [];
    for (const groupId of wanted) {
      const inviteUrl = await provider
        .inviteUrl(adopt.id_channel, groupId)
        .catch((err) => providerError(err, `adopt.groups: the invite link of ${groupId} cannot be read`));
      const state = await provider.groupState(adopt.id_channel, groupId).catch(() => null);
      const position = await nextPosition(db, launch.id);
      const name = available.get(groupId)!.name;
      adopted.push(
        await appendGroup(db, launch, position, { groupId, channelId: adopt.id_channel, name, inviteUrl, members: state?.size ?? 0, adopted: true }, now),
      );
    }
    return adopted;
  });
}
