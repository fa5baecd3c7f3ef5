/**
 * The two ways a group joins a launch (docs/decisions.md#launches, "Groups of a launch"): created from
 * the template through the provider, or adopted as it exists. Either way the group is appended at the
 * next position, added to the launch's segment, and the statuses are brought up to date, in one
 * transaction; a created group is announced with a `group_created` group_activity event.
 */
import { and, asc, eq, max } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { isUniqueViolation } from "../../../db/errors";
import { launches, launchGroups, segmentChannels, segmentGroups } from "../../../db/schema";
import { BadRequest, Unavailable } from "../../errors";
import {
  ProviderOutcomeUnknownError,
  ProviderSendError,
  ProviderUnavailableError,
  type MessagingProvider,
  type ParticipantOutcome,
} from "../../messaging/provider";
import { recordEvent } from "../../outbox/record-event";
import { uniquePhones } from "../../phones/phone";
import { queryGroups } from "../../channels/list-groups";
import { giveBackGroupCreation, takeGroupCreation, type GroupCreator } from "../../numbers/group-creations";
import { recordRateLimited } from "../../numbers/health";
import { addGroupReach } from "../../segments/group-reach";
import type { Launch, LaunchGroup } from "./find-launch";
import { backoffError, creationsWait, launchCreators, noCreatorError, recordCreateFailure, recordCreateSuccess } from "./group-creators";
import { confirmReach, type Reach, recordMissing } from "./group-joins";
import { withLaunchLock } from "./launch-lock";
import { applyRestatus } from "./restatus-groups";

/** The template's name for the group at `position`. */
export const groupName = (template: string, position: number) => template.replaceAll("{n}", String(position));

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

interface AppendOptions {
  /** Every channel whose number is in the group (`channelId` first): the segment's rows of the group (segment_group_channels). */
  reaching: string[];
  /** The launch's channels the platform did not put in the group (group-joins.ts: shown, and retried). */
  missing?: Reach["missing"];
  /** A group made from the template: the launch's failures in a row end (`rateLimited`: it still waits an hour). */
  made?: { rateLimited: boolean };
}

/**
 * Appends one group: launch_groups, segment_groups and segment_group_channels rows (every channel that
 * reaches it), statuses, and (created groups) the `group_created` event and the end of the launch's
 * creation backoff. Another process may have taken `position` meanwhile: then the group goes to the next
 * free one (its name keeps the number it was created with).
 */
async function appendGroup(db: Db, launch: Launch, position: number, g: NewLaunchGroup, opts: AppendOptions, now: Date): Promise<LaunchGroup> {
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
        await addGroupReach(tx, launch.segmentId, g.groupId, [g.channelId, ...opts.reaching]);
        await recordMissing(tx, launch.id, g.groupId, opts.missing ?? [], now);
        if (opts.made) await recordCreateSuccess(tx, launch.id, g.channelId, opts.made.rateLimited, now);
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
 * Creates `count` groups from the launch's template, one after the other, each through the next of the
 * launch's channels that may create (group-creators.ts: in turn, within each one's `group_create_cap`, taken
 * before the call and given back when the platform certainly made nothing), with the launch's other channels
 * and the template's admins added and promoted. Stops at the first failure (the launch's creations then wait:
 * recordCreateFailure), and after a group the platform made while throttling the number: the groups made so
 * far are kept (and returned) and the error is thrown only when none was made. A group the provider found
 * after a failure (`adopted`) is the creation's group like any other.
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
  const created: LaunchGroup[] = [];
  const stop = (error: unknown) => {
    if (created.length === 0) throw error;
    console.error("[launches] creating a group failed", launch.id, error instanceof Error ? error.message : error);
    return { created, error };
  };
  for (let i = 0; i < count; i++) {
    // Read again each time: the pin of an unknown outcome and the channels' counts change as groups are made.
    const [current] = await db.select().from(launches).where(eq(launches.id, launch.id));
    // The launch's backoff holds every caller (the engine, launch-groups, create-launch), its numbers' too (launchCreators).
    const wait = creationsWait(current ?? launch, now);
    if (wait) return stop(backoffError(wait, "The launch's"));
    const { able, all } = await launchCreators(db, current ?? launch, now);
    let creator: GroupCreator | undefined;
    for (const c of able) {
      // Taken before the call: two processes creating on one number never pass its cap.
      if (await takeGroupCreation(db, c.channelId, c.cap, now)) {
        creator = c;
        break;
      }
    }
    // Read again: a channel may have reached its cap between the look and the take (another process).
    if (!creator) return stop(noCreatorError((await launchCreators(db, current ?? launch, now)).all, now));
    const others = await otherNumbers(provider, all, creator.channelId);
    const outcome = await createOne(db, provider, launch, creator.channelId, others, now).catch((err: unknown) => ({ err }));
    if ("err" in outcome) return stop(await afterFailedCreation(db, launch, creator.channelId, outcome.err, now));
    created.push(outcome.group);
    if (outcome.rateLimited) {
      await recordRateLimited(db, creator.channelId, now, "rate-overlimit (group creation)");
      return stop(new ProviderSendError("The platform throttled group creation on this number.", true, { rateLimited: true }));
    }
  }
  return { created };
}

/** The launch's other channels whose number is known (the banned ones left out: WhatsApp has no such account to add). */
async function otherNumbers(provider: MessagingProvider, all: readonly GroupCreator[], creatorId: string) {
  const out: { channelId: string; phone: string }[] = [];
  for (const c of all) {
    if (c.channelId === creatorId || c.healthState === "banned") continue;
    const phone = c.phone ?? (await provider.ownNumber(c.channelId).catch(() => null));
    if (phone) out.push({ channelId: c.channelId, phone });
  }
  return out;
}

/** One creation through `channelId`: the group made (or found after a failure), its admins promoted, its invite link read, appended. */
async function createOne(
  db: Db,
  provider: MessagingProvider,
  launch: Launch,
  channelId: string,
  others: { channelId: string; phone: string }[],
  now: Date,
): Promise<{ group: LaunchGroup; rateLimited: boolean }> {
  const t = launch.groupTemplate;
  const position = await nextPosition(db, launch.id);
  const name = groupName(t.name, position);
  // The other channels' numbers join as admins, so that every channel of the launch reaches the group.
  const admins = uniquePhones([...t.admins, ...others.map((o) => o.phone)]);
  const made = await provider.createGroup(channelId, {
    // The launch's slot: asked again (a crash before it was recorded), the provider answers the group it made.
    key: `launch:${launch.id}:${position}`,
    name,
    description: t.description,
    pictureUrl: t.image_url,
    adminsOnly: t.admins_only,
    admins,
  });
  // What the platform says of each number: the creation's list, then the promotion's answer (a refusal is an outcome).
  let outcomes: ParticipantOutcome[] | null = made.participants ?? null;
  if (admins.length > 0) {
    // createGroup adds and promotes them where the platform allows; promoting again is harmless.
    const promoted = await provider.promoteParticipants(channelId, made.id_group, admins).catch((err) => {
      console.error("[launches] promoting admins failed", launch.id, made.id_group, err);
      return null;
    });
    if (promoted) {
      // The promotion's answer is the later word, but for a number it could not name.
      const listed = outcomes ?? [];
      outcomes = admins.flatMap((a) => {
        const o = promoted.find((p) => p.phone === a && p.state !== "unknown") ?? listed.find((p) => p.phone === a) ?? promoted.find((p) => p.phone === a);
        return o ? [o] : [];
      });
    }
  }
  // A launch channel reaches the group only when the platform lists its number there (an admin where only admins post).
  const reach = await confirmReach(provider, made.id_group, t.admins_only, others, outcomes);
  if (reach.missing.length > 0)
    console.warn(
      `[launches] launch ${launch.id}: ${reach.missing.map((m) => `${m.channelId} (${m.reason})`).join(", ")} not in ${made.id_group}; retried later`,
    );
  const inviteUrl = await provider.inviteUrl(channelId, made.id_group).catch((err) => {
    console.error("[launches] reading the invite link failed", launch.id, made.id_group, err);
    return null;
  });
  // Everyone in it now: the channel's number and the admins it could add.
  const members = (await provider.groupState(channelId, made.id_group).catch(() => null))?.size ?? 1 + admins.length;
  // `adopted: false` here means made for the launch (group_created is sent), even when the provider found it after a failure.
  const group = await appendGroup(
    db,
    launch,
    position,
    { groupId: made.id_group, channelId, name: made.name || name, inviteUrl, members, adopted: false },
    { reaching: [channelId, ...reach.reaching], missing: reach.missing, made: { rateLimited: made.rateLimited === true } },
    now,
  );
  if (made.adopted) console.warn(`[launches] launch ${launch.id}: group ${made.id_group} was found after the platform failed making it (kept, not made again)`);
  return { group, rateLimited: made.rateLimited === true };
}

/**
 * A creation through `channelId` failed: the day's creation is given back when the platform certainly made
 * nothing (refused, unreachable, throttled before making it), a rate-limit answer cools the number, and the
 * launch's creations wait (pinned to the channel while the outcome is unknown). Returns the error in the API's terms.
 */
async function afterFailedCreation(db: Db, launch: Launch, channelId: string, err: unknown, now: Date): Promise<unknown> {
  const unknown = err instanceof ProviderOutcomeUnknownError;
  const rateLimited = rateLimitedCreation(err);
  if (err instanceof ProviderSendError || err instanceof ProviderUnavailableError) await giveBackGroupCreation(db, channelId, now);
  if (rateLimited) await recordRateLimited(db, channelId, now, "rate-overlimit (group creation)");
  if (err instanceof ProviderSendError || err instanceof ProviderUnavailableError || unknown)
    await recordCreateFailure(
      db,
      launch.id,
      channelId,
      { unknown, rateLimited, refused: err instanceof ProviderSendError && !err.transient && !rateLimited },
      now,
    );
  try {
    providerError(err, "The group could not be created");
  } catch (mapped) {
    return mapped;
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
        await appendGroup(
          db,
          launch,
          position,
          { groupId, channelId: adopt.id_channel, name, inviteUrl, members: state?.size ?? 0, adopted: true },
          { reaching: [adopt.id_channel] },
          now,
        ),
      );
    }
    return adopted;
  });
}
