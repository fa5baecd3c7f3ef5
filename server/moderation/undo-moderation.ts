/**
 * Undoing a removal made by mistake (docs/moderation.md#undo): the person's strikes in the launch and their entry on
 * the account's blocklist are cleared, and the group's invite link is answered for the team to send them. No one is
 * re-added: the platform adds no one without their consent.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Tx } from "../../db/client";
import { blocklistNumbers, launchGroups, moderationStrikes } from "../../db/schema";
import { NotFound } from "../errors";
import { phoneOfLid } from "../groups/members/lid-phones";
import { findOwnedLaunch } from "../launches/launch/find-launch-owned";
import { isLid, participantKey } from "../phones/phone";

export interface UndoModeration {
  id_launch: string;
  id_group: string;
  /** As the moderation event shows them: a number, or a LID. */
  participant: string;
}

/** In the caller's transaction (the audited call's: its entry is written beside the change). */
export async function undoModeration(tx: Tx, tenantId: string, input: UndoModeration): Promise<{ invite_link: string | null }> {
  const launch = await findOwnedLaunch(tx, tenantId, input.id_launch);
  const [group] = await tx
    .select({ inviteUrl: launchGroups.inviteUrl })
    .from(launchGroups)
    .where(and(eq(launchGroups.launchId, launch.id), eq(launchGroups.groupId, input.id_group)));
  if (!group) throw new NotFound(`Group ${input.id_group} is not one of launch ${launch.id}'s groups`);
  const paired = isLid(input.participant) ? await phoneOfLid(tx, launch.channelIds, input.participant) : undefined;
  const key = participantKey(input.participant, () => paired);
  await tx
    .delete(moderationStrikes)
    .where(and(eq(moderationStrikes.launchId, launch.id), inArray(moderationStrikes.person, [...new Set([key, input.participant])])));
  if (!key.includes("@")) await tx.delete(blocklistNumbers).where(and(eq(blocklistNumbers.tenantId, tenantId), eq(blocklistNumbers.phoneKey, key)));
  return { invite_link: group.inviteUrl };
}
