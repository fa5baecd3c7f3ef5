/**
 * Undoing a removal made by mistake (docs/moderation.md#undo): the person's strikes in the launch and their entry on
 * the account's blocklist are cleared, and the group's invite link is answered for the team to send them. No one is
 * re-added: the platform adds no one without their consent.
 */
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { blocklistNumbers, channelLidPhones, launchGroups, moderationStrikes } from "../../db/schema";
import { NotFound } from "../errors";
import { findOwnedLaunch } from "../launches/launch/find-launch-owned";
import { isLid, participantKey } from "../phones/phone";

export interface UndoModeration {
  id_launch: string;
  id_group: string;
  /** As the moderation event shows them: a number, or a LID. */
  participant: string;
}

export async function undoModeration(db: Db, tenantId: string, input: UndoModeration): Promise<{ invite_link: string | null }> {
  const launch = await findOwnedLaunch(db, tenantId, input.id_launch);
  const [group] = await db
    .select({ inviteUrl: launchGroups.inviteUrl })
    .from(launchGroups)
    .where(and(eq(launchGroups.launchId, launch.id), eq(launchGroups.groupId, input.id_group)));
  if (!group) throw new NotFound(`Group ${input.id_group} is not one of launch ${launch.id}'s groups`);
  const paired = isLid(input.participant) && launch.channelIds.length > 0 ? await phoneOfLid(db, launch.channelIds, input.participant) : undefined;
  const key = participantKey(input.participant, () => paired);
  await db.transaction(async (tx) => {
    await tx
      .delete(moderationStrikes)
      .where(and(eq(moderationStrikes.launchId, launch.id), inArray(moderationStrikes.person, [...new Set([key, input.participant])])));
    if (!key.includes("@")) await tx.delete(blocklistNumbers).where(and(eq(blocklistNumbers.tenantId, tenantId), eq(blocklistNumbers.phoneKey, key)));
  });
  return { invite_link: group.inviteUrl };
}

/** The phone the launch's channels last paired this LID with. */
async function phoneOfLid(db: Db, channelIds: string[], lid: string): Promise<string | undefined> {
  const [row] = await db
    .select({ phone: channelLidPhones.phone })
    .from(channelLidPhones)
    .where(and(eq(channelLidPhones.lid, lid), inArray(channelLidPhones.channelId, channelIds)))
    .orderBy(desc(channelLidPhones.learnedAt))
    .limit(1);
  return row?.phone;
}
