import { and, eq, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import type { At, Bind } from "../../db/params";
import { campaigns, deliveries } from "../../db/schema";
import type { LookupResult, MessagingProvider, Receipt } from "../messaging/provider";
import { getSettings } from "../settings/get-settings";
import { buildMessage } from "./build-message";
import { decodeDeliveryKey } from "./delivery-key";
import { outcomeUnknownError, recordFailure, recordLateSent, recordSent, sendRetrySchedule } from "./record-delivery";

/** Negative look-ups, `reconcileAfterMs` apart, before a send whose outcome is unknown goes again. */
export const negativeLookupsBeforeResend = 2;

/** Whether the campaign has deliveries for reconcileInFlight, as a SQL expression (read with the step's lease). */
export const staleProbe = (campaignId: Bind<string>, now: At) =>
  sql<boolean>`exists (select 1 from ${deliveries} s where s.campaign_id = ${campaignId} and s.state = 'sending' and s.lease_until < ${tsParam(now)})`;

/**
 * Deliveries whose outcome is unknown: `sending` rows whose lease expired, either because their
 * answer was lost (recordUnknown gave them a lease of provider.reconcileAfterMs) or because the worker
 * died mid-send. Nothing is sent again before the provider was asked (docs/decisions.md#delivery-states, #evolution-api):
 * - found → sent;
 * - `absent` (the platform's log is authoritative: the simulator, or no POST was ever made) → pending;
 * - `not_found` → looked up again `reconcileAfterMs` later; after two negative look-ups that far
 *   apart, pending again (resent), unless the retries are used up;
 * - `unsearchable` (a voice note, media without caption on a gateway that ignores our ids) → never
 *   resent automatically: `failed` "outcome unknown", for a person to send again from the dashboard.
 * A look-up is made no earlier than `reconcileAfterMs` after the attempt started (the gateway may
 * still be sending). The provider cannot answer → left for the next step.
 *
 * Returns the number of stale rows; what became of them is logged (one line per step that decided
 * anything): `[dispatch] campaign … reconciled n in-flight: s sent at the provider, …`.
 */
export async function reconcileInFlight(db: Db, provider: MessagingProvider, campaignId: string, now: Date) {
  const stale = await db
    .select()
    .from(deliveries)
    .where(and(eq(deliveries.campaignId, campaignId), eq(deliveries.state, "sending"), lt(deliveries.leaseUntil, now)));
  if (stale.length === 0) return 0;
  const [c] = await db.select().from(campaigns).where(eq(campaigns.id, campaignId));
  if (!c) return 0;
  const settings = await getSettings(db, c.tenantId);
  const wait = provider.reconcileAfterMs;
  const tally = { sent: 0, pending: 0, lookAgain: 0, unknown: 0 };
  for (const d of stale) {
    const since = d.outcomeUnknownSince ?? d.updatedAt ?? now;
    const lookAt = new Date(since.getTime() + wait);
    if (wait > 0 && lookAt > now) {
      // A worker died right after sending: give the gateway its time before the first look.
      await db
        .update(deliveries)
        .set({ leaseUntil: lookAt, outcomeUnknownSince: since, error: d.error ?? `${outcomeUnknownError}: the worker stopped mid-send` })
        .where(and(eq(deliveries.id, d.id), eq(deliveries.state, "sending")));
      continue;
    }
    const message = buildMessage(c, d, settings);
    let result: LookupResult;
    try {
      result = await provider.findSent({ channelId: d.channelId, groupId: d.groupId, deliveryKey: message.deliveryKey, content: message.content, since });
    } catch {
      continue; // the provider cannot say now: leave it for the next step
    }
    switch (result.kind) {
      case "sent":
        await recordSent(db, d, result.receipt.messageId, result.receipt.sentAt);
        tally.sent++;
        break;
      case "absent":
        await backToPending(db, d.id, now, false);
        tally.pending++;
        break;
      case "unsearchable":
        await recordFailure(db, d, outcomeUnknownError, false, now, { countsInStreak: false });
        tally.unknown++;
        break;
      case "not_found": {
        const lookups = d.lookups + 1;
        if (lookups < negativeLookupsBeforeResend) {
          await db
            .update(deliveries)
            .set({ lookups, leaseUntil: new Date(now.getTime() + Math.max(wait, 1000)), outcomeUnknownSince: since })
            .where(and(eq(deliveries.id, d.id), eq(deliveries.state, "sending")));
          tally.lookAgain++;
        } else if (d.attempts > sendRetrySchedule().length) {
          // Looked for twice, not there, and no retry left: a person decides.
          await recordFailure(db, d, outcomeUnknownError, false, now, { countsInStreak: false });
          tally.unknown++;
        } else {
          await backToPending(db, d.id, now, true);
          tally.pending++;
        }
        break;
      }
    }
  }
  const decided = tally.sent + tally.pending + tally.lookAgain + tally.unknown;
  if (decided > 0) {
    console.log(
      `[dispatch] campaign ${campaignId} reconciled ${decided} in-flight: ${tally.sent} sent at the provider, ` +
        `${tally.pending} back to pending, ${tally.lookAgain} to look up again, ${tally.unknown} outcome unknown`,
    );
  }
  return stale.length;
}

/**
 * Back to pending for a new attempt. `counted`: the lost attempt counts against the retries (it was
 * made, only not found); otherwise (it never reached the platform) it does not.
 */
async function backToPending(db: Db, id: number, at: Date, counted: boolean) {
  await db
    .update(deliveries)
    .set({
      state: "pending",
      attempts: counted ? deliveries.attempts : sql`greatest(${deliveries.attempts} - 1, 0)`,
      leaseUntil: null,
      notBefore: null,
      outcomeUnknownSince: null,
      lookups: 0,
      updatedAt: at,
    })
    .where(and(eq(deliveries.id, id), eq(deliveries.state, "sending")));
}

/**
 * `message_sent` from the provider (a gateway's `send.message` matched to one of our sends): the
 * delivery is sent, whatever its answer became. A row still `sending` (answer lost, looked up or not
 * yet) moves through recordSent; one already `failed` "outcome unknown" (looked up in vain, no retry
 * left; or unsearchable) through recordLateSent, which also moves the counters back. Any other state is
 * left alone (sent already; pending again; failed with a definite error).
 */
export async function recordSentFromEvent(db: Db, receipts: Receipt[], at: Date) {
  for (const r of receipts) {
    const key = decodeDeliveryKey(r.deliveryKey);
    if (!key) continue;
    const [d] = await db
      .select({ id: deliveries.id, campaignId: deliveries.campaignId, channelId: deliveries.channelId, state: deliveries.state, error: deliveries.error })
      .from(deliveries)
      .where(and(eq(deliveries.campaignId, key.campaignId), eq(deliveries.groupId, key.groupId), inArray(deliveries.state, ["sending", "failed"])));
    if (!d || d.channelId !== r.channelId) continue;
    if (d.state === "sending") await recordSent(db, d, r.messageId, at);
    else if (d.error?.startsWith(outcomeUnknownError)) await recordLateSent(db, d, r.messageId, at);
  }
}
