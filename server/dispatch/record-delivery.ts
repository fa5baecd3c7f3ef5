import { and, eq, inArray, sql } from "drizzle-orm";
import { asyncCommit, isConnectionLost, pgErrorCode, retryOnConnectionLoss } from "../../db/errors";
import type { Db } from "../../db/client";
import { campaigns, deliveries } from "../../db/schema";
import { env } from "../env";
import { eventsRecorded } from "../outbox/record-event";
import { recordProgressEvent, recordStatusEvent } from "./campaign-events";
import type { Released } from "./campaign-lease";
import { addChannelCountSql } from "./channel-counts";
import { recordSentStatement, type SentRelease } from "./statements/record-sent";

/** Retry delays of a failed send (SEND_RETRY_SCHEDULE, server/env.ts). */
export const sendRetrySchedule = (): number[] => env.sendRetrySchedule;

export const autoPauseAfterFailures = 10;

/**
 * The delivery is sent: state, message id and the campaign's counter move together, exactly once.
 * The counters (campaigns.total/sent/failed, and per channel channel_counts) are the segment's groups only: the monitoring copy's row
 * moves, the counters do not.
 */
export async function recordSent(db: Db, d: { id: number; campaignId: string; channelId: string }, messageId: string, at: Date) {
  await recordSentMany(db, d.campaignId, [{ id: d.id, channelId: d.channelId, messageId }], at);
}

/**
 * A loop's sent deliveries in one transaction: one UPDATE for the rows, one for the counters. The rows
 * are locked in id order, as recordReceipts locks them: the acks of a loop's messages may be written
 * while its sends are, and two multi-row UPDATEs locking the same rows in different orders deadlock.
 * A deadlock that happens anyway is retried, and so is a lost connection (the guard on `sending` makes a
 * second run of a transaction that did commit a no-op): a send left unrecorded would wait for its lease.
 */
export async function recordSentMany(
  db: Db,
  campaignId: string,
  sent: { id: number; channelId: string; messageId: string }[],
  at: Date,
  release?: SentRelease,
): Promise<Released | null> {
  if (sent.length === 0) return null;
  for (let attempt = 1; ; attempt++) {
    try {
      // One statement (statements/record-sent.ts); the webhook engine is woken when it wrote an event.
      const { events, released } = await recordSentStatement(db, { campaignId, sent, at, release });
      if (events) eventsRecorded();
      return released;
    } catch (err) {
      if (!(pgErrorCode(err) === deadlockDetected || isConnectionLost(err)) || attempt >= 4) throw err;
      if (isConnectionLost(err)) await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

const deadlockDetected = "40P01";

/**
 * A send failed. Transient failures are retried on the schedule; after the last retry (or at once for
 * a permanent failure) the group is `failed`. Returns the channel's consecutive failure count.
 */
export async function recordFailure(
  db: Db,
  d: { id: number; campaignId: string; channelId: string; attempts: number },
  error: string,
  transient: boolean,
  at: Date,
  options: { countsInStreak?: boolean } = {},
): Promise<number> {
  const schedule = sendRetrySchedule();
  const retryIn = transient ? schedule[d.attempts - 1] : undefined;
  const inStreak = options.countsInStreak ?? true;
  // Retried on a lost connection: the guard on `sending` makes a second run of a committed one a no-op.
  return retryOnConnectionLoss(() => recordFailureOnce(db, d, error, retryIn, inStreak, at));
}

async function recordFailureOnce(
  db: Db,
  d: { id: number; campaignId: string; channelId: string; attempts: number },
  error: string,
  retryIn: number | undefined,
  inStreak: boolean,
  at: Date,
): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.execute(asyncCommit);
    const moved = await tx
      .update(deliveries)
      .set(
        retryIn !== undefined
          ? { state: "pending", notBefore: new Date(at.getTime() + retryIn), leaseUntil: null, error, updatedAt: at }
          : { state: "failed", leaseUntil: null, error, updatedAt: at },
      )
      .where(and(eq(deliveries.id, d.id), eq(deliveries.state, "sending")))
      .returning({ id: deliveries.id, isMonitoring: deliveries.isMonitoring, channelId: deliveries.channelId });
    if (moved.length === 0) return 0;
    // The monitoring copy's final failure is not a failed group (no counter), but every failed attempt,
    // its own included, counts in the channel's auto-pause streak: it is the same channel.
    const countsAsGroup = retryIn === undefined && !moved[0].isMonitoring;
    const streak = sql`jsonb_set(${campaigns.failureStreaks}, array[${d.channelId}::text], to_jsonb(coalesce((${campaigns.failureStreaks} ->> ${d.channelId}::text)::int, 0) + 1))`;
    const streakSet = inStreak ? { failureStreaks: streak } : {};
    if (!countsAsGroup && !inStreak) {
      const [c] = await tx.select().from(campaigns).where(eq(campaigns.id, d.campaignId));
      return Number((c.failureStreaks as Record<string, number>)[d.channelId] ?? 0);
    }
    const [c] = await tx
      .update(campaigns)
      .set(
        countsAsGroup
          ? {
              failed: sql`${campaigns.failed} + 1`,
              channelCounts: addChannelCountSql(sql`${campaigns.channelCounts}`, moved[0].channelId, 0, 0, 1),
              ...streakSet,
            }
          : streakSet,
      )
      .where(eq(campaigns.id, d.campaignId))
      .returning();
    if (countsAsGroup) await recordProgressEvent(tx, c, at);
    return Number((c.failureStreaks as Record<string, number>)[d.channelId] ?? 0);
  });
}

/**
 * The platform reports as sent (Evolution's late `send.message`) a delivery already `failed` "outcome
 * unknown": it is sent after all. The row becomes `sent` and the counters move back (failed − 1,
 * sent + 1, as one change), and a campaign that had finished `failed` (no group sent) is `completed`
 * by the same rule that finished it (`failed` only when no group was sent), with campaign_status.
 * A failure with a definite error, or any other state, is not touched.
 */
export async function recordLateSent(db: Db, d: { id: number; campaignId: string }, messageId: string, at: Date) {
  await db.transaction(async (tx) => {
    const moved = await tx
      .update(deliveries)
      .set({ state: "sent", providerMessageId: messageId, sentAt: at, leaseUntil: null, outcomeUnknownSince: null, error: null, updatedAt: at })
      .where(and(eq(deliveries.id, d.id), eq(deliveries.state, "failed"), sql`${deliveries.error} like ${`${outcomeUnknownError}%`}`))
      .returning({ isMonitoring: deliveries.isMonitoring, channelId: deliveries.channelId });
    if (moved.length === 0 || moved[0].isMonitoring) return;
    const [before] = await tx.select({ status: campaigns.status }).from(campaigns).where(eq(campaigns.id, d.campaignId)).for("update");
    if (!before) return;
    const reopened = before.status === "failed";
    const [c] = await tx
      .update(campaigns)
      .set({
        sent: sql`${campaigns.sent} + 1`,
        failed: sql`greatest(${campaigns.failed} - 1, 0)`,
        channelCounts: addChannelCountSql(sql`${campaigns.channelCounts}`, moved[0].channelId, 0, 1, -1),
        ...(reopened ? { status: "completed" as const, updatedAt: at } : {}),
      })
      .where(eq(campaigns.id, d.campaignId))
      .returning();
    if (reopened) await recordStatusEvent(tx, c, before.status, at);
    await recordProgressEvent(tx, c, at, true);
  });
}

/**
 * The channel went offline mid-send (or cannot send for a moment: `retryAfterMs`, a number reconnecting within its
 * grace): back to pending, the attempt not counted, not sent again before `retryAfterMs` when given.
 */
export async function releaseDelivery(db: Db, id: number, at: Date, retryAfterMs?: number) {
  const later = retryAfterMs !== undefined && retryAfterMs > 0 ? { notBefore: new Date(at.getTime() + retryAfterMs) } : {};
  await retryOnConnectionLoss(() =>
    db
      .update(deliveries)
      .set({ state: "pending", attempts: sql`greatest(${deliveries.attempts} - 1, 0)`, leaseUntil: null, updatedAt: at, ...later })
      .where(and(eq(deliveries.id, id), eq(deliveries.state, "sending"))),
  );
}

/**
 * A loop failed between its claim and its bookkeeping (a lost database connection, say): the rows it
 * claimed and did not record are handed to reconciliation now instead of holding their claim lease
 * (a minute) — reconcileInFlight asks the provider (after its `reconcileAfterMs`) before anything is
 * sent again, as for a worker that died mid-send.
 */
export async function releaseForReconcile(db: Db, ids: number[], at: Date) {
  if (ids.length === 0) return;
  await retryOnConnectionLoss(() =>
    db
      .update(deliveries)
      .set({ leaseUntil: at })
      .where(and(inArray(deliveries.id, ids), eq(deliveries.state, "sending"), sql`${deliveries.outcomeUnknownSince} is null`)),
  );
}

/** The final error of a delivery whose outcome stayed unknown (shown in the dashboard; "Enviar novamente"). */
export const outcomeUnknownError = "outcome unknown";

/**
 * The answer to this send was lost: it may have gone out. It stays `sending` (never resent within the
 * attempt) under a lease of `lookAfterMs`; when the lease expires reconcileInFlight looks it up.
 * Counts in the channel's failure streak (a gateway that never answers must not burn every group).
 */
export async function recordUnknown(
  db: Db,
  d: { id: number; campaignId: string; channelId: string; updatedAt: Date | null },
  reason: string,
  lookAfterMs: number,
  at: Date,
): Promise<number> {
  return retryOnConnectionLoss(() => recordUnknownOnce(db, d, reason, lookAfterMs, at));
}

async function recordUnknownOnce(
  db: Db,
  d: { id: number; campaignId: string; channelId: string; updatedAt: Date | null },
  reason: string,
  lookAfterMs: number,
  at: Date,
): Promise<number> {
  return db.transaction(async (tx) => {
    const moved = await tx
      .update(deliveries)
      .set({
        leaseUntil: new Date(at.getTime() + lookAfterMs),
        // The attempt started when it was claimed.
        outcomeUnknownSince: d.updatedAt ?? at,
        lookups: 0,
        error: `${outcomeUnknownError}: ${reason}`.slice(0, 500),
      })
      .where(and(eq(deliveries.id, d.id), eq(deliveries.state, "sending")))
      .returning({ id: deliveries.id });
    if (moved.length === 0) return 0;
    const streak = sql`jsonb_set(${campaigns.failureStreaks}, array[${d.channelId}::text], to_jsonb(coalesce((${campaigns.failureStreaks} ->> ${d.channelId}::text)::int, 0) + 1))`;
    const [c] = await tx.update(campaigns).set({ failureStreaks: streak }).where(eq(campaigns.id, d.campaignId)).returning();
    return Number((c.failureStreaks as Record<string, number>)[d.channelId] ?? 0);
  });
}
