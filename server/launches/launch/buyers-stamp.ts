/**
 * The stamp behind info-launch's kept `buyers_in_groups` (docs/launches.md#buyers-leave-the-groups): every statement
 * that changes who counts — a participant joining, leaving or moving to their number, a LID paired with a number, a
 * purchase or refund recorded — bumps the stamp of the launches it concerns, in its own transaction (or after it:
 * never before), and the figure is counted again at the next GET (server/launches/funnel/buyers-in-groups.ts).
 * Several launches' rows are taken in id order, as the participants' batches take them (no deadlock).
 */
import { sql } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { inJson } from "../../../db/params";

const bumpWhere = (where: ReturnType<typeof sql>) =>
  sql`update launches set buyers_stamp = buyers_stamp + 1
    where id in (select l.id from launches l where ${where} order by l.id for update)`;

/** The given launches (their rows already locked by the caller, or taken here in id order). */
export async function touchBuyers(db: Db | Tx, launchIds: string[]) {
  if (launchIds.length === 0) return;
  await db.execute(bumpWhere(inJson(sql`l.id`, launchIds)));
}

/** The launches a channel serves: a pairing it learned may make one of their LID members a buyer. */
export async function touchBuyersOfChannel(db: Db | Tx, channelId: string) {
  await db.execute(bumpWhere(sql`l.channel_ids @> jsonb_build_array(${channelId}::text)`));
}

/** The tenant's launches: a purchase or refund may count in any of them. */
export async function touchBuyersOfTenant(db: Db | Tx, tenantId: string) {
  await db.execute(bumpWhere(sql`l.tenant_id = ${tenantId}`));
}
