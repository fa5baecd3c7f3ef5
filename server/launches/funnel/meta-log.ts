import { count, desc, eq } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { metaEvents, type metaEventStates } from "../../../db/schema";
import { toBrasiliaIso } from "../../time/brasilia";
import { findLaunch } from "../launch/find-launch";
import type { MetaServerEvent } from "../link/meta-event";

/**
 * The launch page's "Meta Conversions API" log (dashboard only): the latest `limit` events, newest first, and how
 * many are in each state. Another account's launch is 404.
 */
export async function metaEventLog(db: Db, tenantId: string, launchId: string, limit: number) {
  await findLaunch(db, tenantId, launchId);
  const rows = await db.select().from(metaEvents).where(eq(metaEvents.launchId, launchId)).orderBy(desc(metaEvents.id)).limit(limit);
  const states = await db.select({ state: metaEvents.state, n: count() }).from(metaEvents).where(eq(metaEvents.launchId, launchId)).groupBy(metaEvents.state);
  const totals: Record<(typeof metaEventStates)[number], number> = { pending: 0, sent: 0, failed: 0, canceled: 0 };
  for (const s of states) totals[s.state] = s.n;
  return {
    totals,
    events: rows.map((r) => {
      const p = r.payload as MetaServerEvent;
      return {
        event_id: r.eventId,
        event_name: p.event_name,
        at: toBrasiliaIso(r.createdAt),
        state: r.state,
        attempts: r.attempts,
        last_status: r.lastStatus,
        last_error: r.lastError,
        next_attempt_at: r.state === "pending" ? toBrasiliaIso(r.nextAttemptAt) : null,
        finished_at: r.finishedAt ? toBrasiliaIso(r.finishedAt) : null,
        fbc: p.user_data?.fbc !== undefined,
      };
    }),
  };
}
