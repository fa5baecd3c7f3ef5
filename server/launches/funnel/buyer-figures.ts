/**
 * A launch's buyers (docs/launches.md#buyers): the people of the launch — its leads and everyone who joined one
 * of its groups (by phone, or by a LID one of its channels paired with a phone) — with a purchase the tenant's
 * marketplaces approved at or after the launch was created and never refunded (purchases, server/integrations/
 * inbound-hook.ts). Phones meet by their match key, as leads and members do (lead-figures.ts).
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { inJson } from "../../../db/params";
import { purchases } from "../../../db/schema";
import { phoneKeySql as keyOf } from "../../phones/phone-sql";

export interface BuyerScope {
  tenantId: string;
  launchId: string;
  channelIds: string[];
  createdAt: Date;
}

/**
 * The match key of a launch_participants row aliased `p`: its phone's, or for a LID the phone the launch's
 * channels paired it with (the latest pairing); null for a LID no channel of the launch paired.
 */
export const participantKey = (channelIds: string[]) => sql`case when p.participant like '%@lid' then (
    select ${keyOf(sql`c.phone`)} from channel_lid_phones c where c.lid = p.participant and ${inJson(sql`c.channel_id`, channelIds)}
    order by c.learned_at desc limit 1)
  else ${keyOf(sql`p.participant`)} end`;

/** The match keys of the launch's people: its leads and everyone who ever joined one of its groups. */
const peopleKeys = (s: BuyerScope) => sql`select l.match_key from launch_leads l where l.launch_id = ${s.launchId}
  union select ${participantKey(s.channelIds)} from launch_participants p where p.launch_id = ${s.launchId}`;

/** The Brasília day of a purchase (`pu.occurred_at`), YYYY-MM-DD. */
export const purchaseDay = sql<string>`to_char(pu.occurred_at at time zone 'America/Sao_Paulo', 'YYYY-MM-DD')`;

/**
 * The approved, never refunded purchases that count for the launch (aliased `pu`; `pu.match_key`, `pu.occurred_at`, `pu.platform`, `pu.transaction`),
 * from the Brasília day `fromDay` on when given.
 */
export function launchPurchases(s: BuyerScope, fromDay?: string): SQL {
  return sql`select pu.match_key, pu.occurred_at, pu.platform, pu.transaction from purchases pu
    where pu.tenant_id = ${s.tenantId} and pu.status = 'approved' and pu.match_key is not null
      and pu.occurred_at >= ${tsParam(s.createdAt)}
      ${fromDay ? sql`and ${purchaseDay} >= ${fromDay}` : sql``}
      and not exists (select 1 from purchases r where r.tenant_id = pu.tenant_id and r.platform = pu.platform
        and r.transaction = pu.transaction and r.status = 'refunded')
      and pu.match_key in (${peopleKeys(s)})`;
}

/** The match keys of the launch's buyers (from `fromDay` on when given), for `<key> in (…)`. */
export const buyerKeys = (s: BuyerScope, fromDay?: string) => sql`select b.match_key from (${launchPurchases(s, fromDay)}) b`;

/** Whether a launch_participants row aliased `p` is one of the launch's buyers, as a boolean expression. */
export const participantBought = (s: BuyerScope) => sql<boolean>`coalesce((${participantKey(s.channelIds)}) in (${buyerKeys(s)}), false)`;

/**
 * Whether the account ever had an approved purchase: most accounts have no marketplace webhook, and their
 * figures then skip matching every participant against nothing.
 */
export async function anyPurchases(db: Db, tenantId: string) {
  const [row] = await db
    .select({ one: sql`1` })
    .from(purchases)
    .where(and(eq(purchases.tenantId, tenantId), eq(purchases.status, "approved")))
    .limit(1);
  return row !== undefined;
}
