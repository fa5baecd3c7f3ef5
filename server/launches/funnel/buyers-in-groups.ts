/**
 * The launch's buyers still in its groups (docs/launches.md#buyers-leave-the-groups): a member now (not left) of one of
 * its groups whose phone — or the phone a LID was paired with — is a buyer's (buyer-figures.ts: approved, never
 * refunded), never the launch's staff, the template's admins or the tenant's own numbers (compared by match key, so
 * the Brazilian ninth digit is tolerated). One row per person and group, with the purchase that made them a buyer.
 */
import { createHash } from "node:crypto";
import { and, eq, isNotNull, sql } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { inJson, rowsOf } from "../../../db/params";
import { channels, launches } from "../../../db/schema";
import { phoneKey } from "../../phones/phone";
import { anyPurchases, launchPurchases, participantKey } from "./buyer-figures";
import type { Launch } from "../launch/find-launch";

export interface BuyerInGroup {
  participant: string;
  groupId: string;
  groupName: string;
  /** The person's match key (server/phones). */
  personKey: string;
  /** The latest approved purchase that counts for the launch. */
  platform: string;
  transaction: string;
}

/** The match keys never removed: the launch's staff, the template's admins and the tenant's channels' numbers. */
export async function protectedKeys(db: Db | Tx, launch: Launch): Promise<string[]> {
  const own = await db
    .select({ phone: channels.phone })
    .from(channels)
    .where(and(eq(channels.tenantId, launch.tenantId), isNotNull(channels.phone)));
  const phones = [...launch.staffNumbers, ...launch.groupTemplate.admins, ...own.map((c) => c.phone as string)];
  return [...new Set(phones.map(phoneKey))];
}

/** The buyers in the launch's groups now; `personKey` narrows it to one person. */
export async function buyersInGroups(db: Db | Tx, launch: Launch, personKey?: string, protectedOnes?: string[]): Promise<BuyerInGroup[]> {
  const scope = { tenantId: launch.tenantId, launchId: launch.id, channelIds: launch.channelIds, createdAt: launch.createdAt };
  const excluded = protectedOnes ?? (await protectedKeys(db, launch));
  const rows = rowsOf<{ participant: string; id_group: string; group_name: string; person_key: string; platform: string; transaction: string }>(
    await db.execute(sql`select distinct on (q.id_group, q.person_key, q.participant)
        q.participant, q.id_group, g.name as group_name, q.person_key, b.platform, b.transaction
      from (select p.participant, p.id_group, (${participantKey(launch.channelIds)}) as person_key from launch_participants p
        where p.launch_id = ${launch.id} and p.left_at is null and not p.staff) q
      join launch_groups g on g.launch_id = ${launch.id} and g.id_group = q.id_group
      join lateral (select pu.platform, pu.transaction from (${launchPurchases(scope)}) pu where pu.match_key = q.person_key
        order by pu.occurred_at desc limit 1) b on true
      where q.person_key is not null and not ${inJson(sql`q.person_key`, excluded)}
        ${personKey ? sql`and q.person_key = ${personKey}` : sql``}
      order by q.id_group, q.person_key, q.participant`),
  );
  return rows.map((r) => ({
    participant: r.participant,
    groupId: r.id_group,
    groupName: r.group_name,
    personKey: r.person_key,
    platform: r.platform,
    transaction: r.transaction,
  }));
}

/**
 * info-launch's `buyers_in_groups` (people, whatever the number of their groups), kept on the launch's row: counted
 * again only when its stamp moved (server/launches/launch/buyers-stamp.ts: joins, leaves, pairings, purchases) or the
 * protected numbers or the launch's channels changed (they are part of the key), else one read of the row the caller
 * already holds. The count is stored only if the stamp is still the one it was counted at: a change that committed
 * meanwhile leaves it to the next GET.
 */
export async function buyersInGroupsCount(db: Db, launch: Launch): Promise<number> {
  const excluded = await protectedKeys(db, launch);
  const key = `${launch.buyersStamp}:${createHash("sha1")
    .update(JSON.stringify([excluded.sort(), launch.channelIds]))
    .digest("base64url")}`;
  if (launch.buyersCountedKey === key && launch.buyersInGroupsCount !== null) return launch.buyersInGroupsCount;
  // Most accounts have no marketplace webhook: no purchase, no buyer to look for.
  const n = (await anyPurchases(db, launch.tenantId)) ? new Set((await buyersInGroups(db, launch, undefined, excluded)).map((b) => b.personKey)).size : 0;
  await db
    .update(launches)
    .set({ buyersInGroupsCount: n, buyersCountedKey: key })
    .where(and(eq(launches.id, launch.id), eq(launches.buyersStamp, launch.buyersStamp)));
  return n;
}
