/**
 * Which of a launch's leads joined (docs/launches.md#leads): a lead joined when one of the launch's
 * participant rows (any group, staff or not, left since or not) is their phone, or a LID one of the launch's
 * channels paired with their phone (the LID ⇄ phone map of server/groups/members/lid-phones.ts; a row still under a LID is
 * resolved here, before the launch's rows are moved to the number). Phones meet by their match key (the phone codec: server/phones/phone.ts).
 */
import { count, eq, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { inJson } from "../../../db/params";
import { launchLeads } from "../../../db/schema";
import { phoneKeySql as keyOf } from "../../phones/phone-sql";

/** The match keys of everyone who ever joined a group of the launch, LIDs resolved through its channels' pairings. */
function joinedKeys(launchId: string, channelIds: string[]) {
  return sql`select ${keyOf(sql`p.participant`)} as k from launch_participants p
      where p.launch_id = ${launchId} and p.participant not like '%@lid'
    union
    select ${keyOf(sql`c.phone`)} from launch_participants p join channel_lid_phones c on c.lid = p.participant
      where p.launch_id = ${launchId} and p.participant like '%@lid' and ${inJson(sql`c.channel_id`, channelIds)}`;
}

/** Whether a launch_leads row joined, as a boolean expression. */
export const leadJoined = (launchId: string, channelIds: string[]) => sql<boolean>`${launchLeads.matchKey} in (${joinedKeys(launchId, channelIds)})`;

/** The launch's leads and how many of them joined. */
export async function leadTotals(db: Db, launchId: string, channelIds: string[]) {
  const [row] = await db
    .select({ leads: count(), joined: sql<number>`count(*) filter (where ${leadJoined(launchId, channelIds)})`.mapWith(Number) })
    .from(launchLeads)
    .where(eq(launchLeads.launchId, launchId));
  return { leads: row?.leads ?? 0, leads_joined: row?.joined ?? 0 };
}
