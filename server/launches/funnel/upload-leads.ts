/**
 * launch-leads upload (docs/launches.md#leads): up to 10,000 leads in one transaction, idempotent by phone, at most
 * 200,000 per launch (leadsPerLaunch: an upload that would pass it is a 400 naming `leads`, nothing written)
 * (an upsert; a field left out keeps its value). Rows are written in phone order, so two uploads sharing
 * phones lock them in the same order.
 */
import { count, eq, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { launches, launchLeads } from "../../../db/schema";
import { BadRequest } from "../../errors";
import { findOwnedLaunch } from "../launch/find-launch-owned";
import { leadTotals } from "./lead-figures";
import { phoneKey } from "../../phones/phone";
import { leadsPerLaunch } from "./leads-schema";

export interface LeadIn {
  phone: string;
  name?: string;
  email?: string;
  source?: string;
}

/** Rows per INSERT (8 parameters each: well under PostgreSQL's 65,535). */
const chunk = 1000;

export async function uploadLeads(db: Db, tenantId: string, launchId: string, leads: LeadIn[], now: Date) {
  const launch = await findOwnedLaunch(db, tenantId, launchId);
  // One row per phone: a phone repeated in the request is merged, later fields winning.
  const byPhone = new Map<string, LeadIn>();
  for (const l of leads) {
    const prev = byPhone.get(l.phone);
    byPhone.set(l.phone, { phone: l.phone, name: l.name ?? prev?.name, email: l.email ?? prev?.email, source: l.source ?? prev?.source });
  }
  const rows = [...byPhone.values()]
    .sort((a, b) => a.phone.localeCompare(b.phone))
    .map((l) => ({
      launchId,
      phone: l.phone,
      matchKey: phoneKey(l.phone),
      name: l.name ?? null,
      email: l.email ?? null,
      source: l.source ?? null,
      createdAt: now,
      updatedAt: now,
    }));
  let created = 0;
  await db.transaction(async (tx) => {
    // Uploads to one launch take turns, so the cap below counts every other upload's leads.
    await tx.select({ id: launches.id }).from(launches).where(eq(launches.id, launchId)).for("update");
    for (let i = 0; i < rows.length; i += chunk) {
      const written = await tx
        .insert(launchLeads)
        .values(rows.slice(i, i + chunk))
        .onConflictDoUpdate({
          target: [launchLeads.launchId, launchLeads.phone],
          set: {
            name: sql`coalesce(excluded.name, ${launchLeads.name})`,
            email: sql`coalesce(excluded.email, ${launchLeads.email})`,
            source: sql`coalesce(excluded.source, ${launchLeads.source})`,
            updatedAt: sql`excluded.updated_at`,
          },
        })
        // xmax is 0 on a row this statement inserted, set on one it updated.
        .returning({ inserted: sql<boolean>`(xmax = 0)` });
      created += written.filter((w) => w.inserted).length;
    }
    if (created > 0) {
      // Past the cap the whole upload is rolled back: nothing of it is written.
      const [{ total }] = await tx.select({ total: count() }).from(launchLeads).where(eq(launchLeads.launchId, launchId));
      if (total > leadsPerLaunch) {
        throw new BadRequest(
          `leads: this upload would bring the launch to ${total.toLocaleString("en")} leads, above the ${leadsPerLaunch.toLocaleString("en")} a launch keeps; nothing was written`,
          "leads_limit",
          { current: total - created, max: leadsPerLaunch },
        );
      }
    }
  });
  const totals = await leadTotals(db, launchId, launch.channelIds);
  return {
    success: true as const,
    id_launch: launchId,
    received: leads.length,
    created,
    updated: leads.length - created,
    ...totals,
    timestamp: now.toISOString(),
  };
}
