/**
 * A purchase or refund from a marketplace's inbound webhook (server/integrations/inbound-hook.ts), recorded once
 * per platform, transaction and status (the same notice again changes nothing), and a `group_activity` event
 * `purchase` for every launch of the tenant it belongs to (docs/decisions.md#buyers): launches created before it
 * in which the buyer is a lead or a member. One transaction: the row and its events, or nothing.
 */
import { and, desc, eq, lte, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { rowsOf } from "../../../db/params";
import { launches, launchLeads, purchases } from "../../../db/schema";
import { participantKey } from "./buyer-figures";
import { recordGroupActivity } from "../../groups/activity/group-activity";
import { phoneKey } from "../../phones/phone";
import { touchBuyersOfTenant } from "../launch/buyers-stamp";

/** What a marketplace's notice says, in the service's words (server/integrations/hook-formats.ts reads it). */
export interface PurchaseNotice {
  transaction: string;
  status: "approved" | "refunded";
  /** Digits with the country code (normalised like leads), or null. */
  phone: string | null;
  /** Lower case, or null. */
  email: string | null;
  name: string | null;
  productId: string | null;
  productName: string | null;
  amount: string | null;
  currency: string | null;
  /** When the platform says it happened; null: it did not say (the time it arrived is used). */
  occurredAt: Date | null;
}

export async function recordPurchase(db: Db, tenantId: string, platform: string, notice: PurchaseNotice, now: Date) {
  return db.transaction(async (tx) => {
    let phone = notice.phone;
    if (!phone && notice.email) {
      // No phone at the checkout: the tenant's most recently updated lead with that email gives it.
      const [lead] = await tx
        .select({ phone: launchLeads.phone })
        .from(launchLeads)
        .innerJoin(launches, eq(launches.id, launchLeads.launchId))
        .where(and(eq(launches.tenantId, tenantId), sql`lower(${launchLeads.email}) = ${notice.email}`))
        .orderBy(desc(launchLeads.updatedAt))
        .limit(1);
      phone = lead?.phone ?? null;
    }
    const matchKey = phone ? phoneKey(phone) : null;
    const occurredAt = notice.occurredAt ?? now;
    const [row] = await tx
      .insert(purchases)
      .values({
        tenantId,
        platform,
        transaction: notice.transaction,
        status: notice.status,
        phone,
        matchKey,
        email: notice.email,
        name: notice.name,
        productId: notice.productId,
        productName: notice.productName,
        amount: notice.amount,
        currency: notice.currency,
        occurredAt,
        receivedAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: purchases.id });
    if (!row) return { recorded: false, launches: [] as string[] };
    if (!matchKey) return { recorded: true, launches: [] as string[] };
    // Who counts as a buyer changed: every launch of the tenant counts buyers_in_groups again.
    await touchBuyersOfTenant(tx, tenantId);

    // A refund concerns the launches its purchase counted in: those created before the approval.
    let countsFrom = occurredAt;
    if (notice.status === "refunded") {
      const [approved] = await tx
        .select({ at: purchases.occurredAt })
        .from(purchases)
        .where(
          and(
            eq(purchases.tenantId, tenantId),
            eq(purchases.platform, platform),
            eq(purchases.transaction, notice.transaction),
            eq(purchases.status, "approved"),
          ),
        );
      if (approved) countsFrom = approved.at;
    }
    const candidates = await tx
      .select({ id: launches.id, channelIds: launches.channelIds })
      .from(launches)
      .where(and(eq(launches.tenantId, tenantId), lte(launches.createdAt, countsFrom)))
      .orderBy(launches.createdAt);
    const found: string[] = [];
    for (const l of candidates) {
      const [where] = rowsOf<{ lead: boolean; id_group: string | null }>(
        await tx.execute(sql`select
          exists (select 1 from launch_leads l where l.launch_id = ${l.id} and l.match_key = ${matchKey}) as lead,
          (select p.id_group from launch_participants p where p.launch_id = ${l.id} and (${participantKey(l.channelIds)}) = ${matchKey}
            order by (p.left_at is null) desc, p.joined_at desc limit 1) as id_group`),
      );
      if (!where?.lead && !where?.id_group) continue;
      await recordGroupActivity(
        tx,
        tenantId,
        {
          event: "purchase",
          id_launch: l.id,
          status: notice.status,
          platform,
          transaction: notice.transaction,
          phone,
          product: notice.productName,
          amount: notice.amount,
          currency: notice.currency,
          id_group: where.id_group ?? null,
        },
        now,
      );
      found.push(l.id);
    }
    return { recorded: true, launches: found };
  });
}
