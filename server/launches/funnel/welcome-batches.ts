/**
 * A launch's welcome batches (CONTRACT §8 "Welcome"; docs/launches.md#welcome): per group, the newcomers not yet welcomed
 * — leads whose join is recorded since the welcome was turned on, still in the group — make a batch once `after_joins` of
 * them are waiting, or `max_wait_minutes` after the first of them. A batch is one launch_welcomes row, its text rendered
 * and its mentions written, made with its joins marked (`welcome_id`) in one transaction under the launch's row lock (the
 * lock recording joins takes too): two processes never put a join in two batches, and a batch once made is never lost.
 * The staff (the launch's own numbers, the template's admins, staff_numbers) are recorded `staff` at their join
 * (server/groups/members/members.ts) and never welcomed; the tenant's other numbers (phone codec) are set aside here.
 */
import { and, asc, eq, gte, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { channels, launches, launchGroups, launchParticipants, launchWelcomes, type LaunchWelcome } from "../../../db/schema";
import { renderForGroup } from "../../dispatch/variations";
import { phoneSet } from "../../phones/phone";

/** Groups with a due batch looked at per pass (the next pass takes the rest). */
const groupsPerPass = 200;

interface Waiting {
  launchId: string;
  groupId: string;
  waiting: number;
  first: Date;
  welcome: LaunchWelcome;
}

/** launch_participants.welcome_id of a join that is never welcomed (one of the tenant's own numbers), so it waits no more. */
const notWelcomed = 0;

/** A join waiting for its welcome. */
interface Newcomer {
  id: number;
  participant: string;
  joinedAt: Date;
}

const waitingJoins = (launchId?: string) =>
  and(
    isNotNull(launches.welcome),
    eq(launchParticipants.staff, false),
    isNull(launchParticipants.welcomeId),
    isNull(launchParticipants.leftAt),
    gte(launchParticipants.joinedAt, launches.welcomeSince),
    launchId ? eq(launchParticipants.launchId, launchId) : undefined,
  );

/** Whether a group's waiting newcomers make a batch at `now`. */
const isDue = (w: Pick<Waiting, "waiting" | "first" | "welcome">, now: Date) =>
  w.waiting >= w.welcome.after_joins || w.first.getTime() + w.welcome.max_wait_minutes * 60_000 <= now.getTime();

/** Makes the batches due at `now` (of every launch, or `launchId`'s); answers how many were made. */
export async function makeWelcomeBatches(db: Db, now: Date, launchId?: string): Promise<number> {
  const waiting: Waiting[] = await db
    .select({
      launchId: launchParticipants.launchId,
      groupId: launchParticipants.groupId,
      waiting: sql<number>`count(*)::int`,
      first: sql<Date>`min(${launchParticipants.joinedAt})`.mapWith((v) => new Date(v)),
      welcome: sql<LaunchWelcome>`${launches.welcome}`,
    })
    .from(launchParticipants)
    .innerJoin(launches, eq(launches.id, launchParticipants.launchId))
    .where(waitingJoins(launchId))
    .groupBy(launchParticipants.launchId, launchParticipants.groupId, launches.welcome);
  const due = waiting.filter((w) => isDue(w, now)).slice(0, groupsPerPass);
  let made = 0;
  for (const id of [...new Set(due.map((w) => w.launchId))].sort()) {
    const groups = due.filter((w) => w.launchId === id).map((w) => w.groupId);
    made += await db.transaction((tx) => batchLaunch(tx, id, groups, now));
  }
  return made;
}

/** The launch's due groups, looked at again under its row lock (a batch may have been made meanwhile). */
async function batchLaunch(tx: Tx, launchId: string, groupIds: string[], now: Date): Promise<number> {
  const [launch] = await tx.select().from(launches).where(eq(launches.id, launchId)).for("update");
  const welcome = launch?.welcome;
  if (!welcome || !launch.welcomeSince) return 0;
  const rows = await tx
    .select({
      id: launchParticipants.id,
      groupId: launchParticipants.groupId,
      participant: launchParticipants.participant,
      joinedAt: launchParticipants.joinedAt,
    })
    .from(launchParticipants)
    .innerJoin(launches, eq(launches.id, launchParticipants.launchId))
    .where(and(waitingJoins(launchId), inArray(launchParticipants.groupId, groupIds)))
    .orderBy(asc(launchParticipants.joinedAt), asc(launchParticipants.id));
  // The tenant's numbers outside the launch (a backup number joined by hand) are recorded as leads: never welcomed either.
  const own = phoneSet(
    (await tx.select({ phone: channels.phone }).from(channels).where(eq(channels.tenantId, launch.tenantId))).flatMap((c) => (c.phone ? [c.phone] : [])),
  );
  const ownJoins = rows.filter((r) => own.has(r.participant)).map((r) => r.id);
  if (ownJoins.length > 0)
    await tx
      .update(launchParticipants)
      .set({ welcomeId: notWelcomed })
      .where(and(inArray(launchParticipants.id, ownJoins), isNull(launchParticipants.welcomeId)));
  const names = await tx
    .select({ groupId: launchGroups.groupId, name: launchGroups.name })
    .from(launchGroups)
    .where(and(eq(launchGroups.launchId, launchId), inArray(launchGroups.groupId, groupIds)));
  let made = 0;
  for (const groupId of groupIds) {
    const newcomers = rows.filter((r) => r.groupId === groupId && !ownJoins.includes(r.id));
    // Full batches first; what is left goes once its first join has waited max_wait_minutes.
    for (let i = 0; i < newcomers.length; i += welcome.after_joins) {
      const batch = newcomers.slice(i, i + welcome.after_joins);
      if (!isDue({ waiting: batch.length, first: batch[0].joinedAt, welcome }, now)) break;
      await insertBatch(tx, launchId, groupId, names.find((n) => n.groupId === groupId)?.name ?? "", welcome, batch, now);
      made++;
    }
  }
  return made;
}

async function insertBatch(tx: Tx, launchId: string, groupId: string, groupName: string, welcome: LaunchWelcome, batch: Newcomer[], now: Date) {
  const participants = [...new Set(batch.map((b) => b.participant))];
  // The variant is chosen by the batch's first join (stable: the same batch, the same text).
  const rendered = renderForGroup(welcome.text, `welcome:${launchId}:${batch[0].id}`, { groupName, at: now });
  const mentions = welcome.mention_new ? participants : [];
  const text = mentions.length > 0 ? `${rendered}\n\n${mentions.map(mentionTag).join(" ")}` : rendered;
  const [row] = await tx
    .insert(launchWelcomes)
    .values({ launchId, groupId, participants, text, mentions, createdAt: now })
    .returning({ id: launchWelcomes.id });
  await tx
    .update(launchParticipants)
    .set({ welcomeId: row.id })
    .where(
      and(
        inArray(
          launchParticipants.id,
          batch.map((b) => b.id),
        ),
        isNull(launchParticipants.welcomeId),
      ),
    );
}

/** `@<number>` as WhatsApp writes a mention in the text: the id's digits (a platform id `…@lid` by its own digits). */
export const mentionTag = (participant: string) => `@${participant.split("@")[0].replace(/\D+/g, "")}`;
