/**
 * Sending a launch's welcome batches (CONTRACT §8 "Welcome"; docs/launches.md#welcome), exactly once each, as a campaign's
 * deliveries go (docs/dispatch.md): a batch is **claimed** — `sending`, its channel and the attempt's time recorded — in
 * the transaction that takes one send of that number's budget (server/numbers/take-send.ts: connected and sending, below
 * its daily cap, past its least gap), then sent under its delivery key (`welcome_<id>:<group>`, delivery-key.ts: the
 * simulator keeps one message per key, Evolution gets a message id derived from it), and its outcome recorded. A batch
 * left `sending` by a lost answer or a process that died is never sent blind: once its lease ran out the platform is
 * asked for the key (provider.findSent); found → sent; absent → pending again; not found → asked again a look-up's wait
 * later, and only after two negative look-ups that far apart is it sent again (reconcile.ts's rule).
 * The channel: one of the launch's numbers that reaches the group (segment_group_channels), the group's own first.
 */
import { and, asc, eq, inArray, isNull, lt, lte, or } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { channels, launches, launchGroups, launchWelcomes, segmentGroupChannels } from "../../../db/schema";
import { encodeDeliveryKey } from "../../dispatch/delivery-key";
import { negativeLookupsBeforeResend } from "../../dispatch/reconcile";
import {
  type LookupResult,
  type MessagingProvider,
  type OutboundMessage,
  ProviderOutcomeUnknownError,
  ProviderSendError,
  type SendReceipt,
} from "../../messaging/provider";
import { recordRateLimited } from "../../numbers/health";
import { tenantNumberHealth } from "../../numbers/health-view";
import { giveBackSend, sendBudget, takeSend } from "../../numbers/take-send";

type WelcomeRow = typeof launchWelcomes.$inferSelect;

/** A claim's lease: a process that died mid-send leaves the batch to a look-up this long after. */
const leaseMs = 30_000;
/** A batch every channel refused (not in the group, a permanent error) waits this long before it is tried again. */
const refusedWaitMs = 60_000;
/** Batches looked at per pass. */
const batchesPerPass = 50;

/** The delivery key of a welcome batch: its own "campaign" part, so it never meets a campaign's key. */
export const welcomeDeliveryKey = (w: Pick<WelcomeRow, "id" | "groupId">) => encodeDeliveryKey(`welcome_${w.id}`, w.groupId);

function welcomeMessage(w: WelcomeRow, channelId: string): OutboundMessage {
  return {
    channelId,
    groupId: w.groupId,
    deliveryKey: welcomeDeliveryKey(w),
    content: { type: "text", text: w.text },
    linkPreview: false,
    mentionAll: false,
    mentions: w.mentions,
  };
}

/** Settles the batches whose outcome is unknown, then sends the pending ones; answers how many went out. */
export async function sendWelcomes(db: Db, provider: MessagingProvider, now: Date, launchId?: string): Promise<number> {
  let sent = await reconcileWelcomes(db, provider, now, launchId);
  const pending = await db
    .select()
    .from(launchWelcomes)
    .where(
      and(
        eq(launchWelcomes.state, "pending"),
        or(isNull(launchWelcomes.leaseUntil), lte(launchWelcomes.leaseUntil, tsParam(now))),
        launchId ? eq(launchWelcomes.launchId, launchId) : undefined,
      ),
    )
    .orderBy(asc(launchWelcomes.id))
    .limit(batchesPerPass);
  for (const w of pending) if (await sendOne(db, provider, w, now)) sent++;
  return sent;
}

/** The launch's numbers that reach the group, the group's own first, each with its budget at `now`. */
async function candidates(db: Db, w: WelcomeRow, now: Date) {
  const [launch] = await db
    .select({ tenantId: launches.tenantId, segmentId: launches.segmentId, channelIds: launches.channelIds })
    .from(launches)
    .where(eq(launches.id, w.launchId));
  if (!launch) return [];
  const [group] = await db
    .select({ channelId: launchGroups.channelId })
    .from(launchGroups)
    .where(and(eq(launchGroups.launchId, w.launchId), eq(launchGroups.groupId, w.groupId)));
  const reach = await db
    .select({ channelId: segmentGroupChannels.channelId })
    .from(segmentGroupChannels)
    .where(and(eq(segmentGroupChannels.segmentId, launch.segmentId), eq(segmentGroupChannels.groupId, w.groupId)));
  const reaching = new Set(reach.map((r) => r.channelId));
  const order = [...new Set([...(group ? [group.channelId] : []), ...launch.channelIds])].filter((c) => reaching.has(c));
  if (order.length === 0) return [];
  const rows = await db
    .select({ id: channels.id, limits: channels.limits, firstPairedAt: channels.firstPairedAt })
    .from(channels)
    .where(inArray(channels.id, order));
  const tenant = await tenantNumberHealth(db, launch.tenantId);
  return order.flatMap((id) => {
    const ch = rows.find((r) => r.id === id);
    return ch ? [{ id, budget: sendBudget(tenant, ch, now) }] : [];
  });
}

/** The claim did not take the batch (another process did) or the number's budget: rolled back. */
class NotTaken extends Error {}

/** Claims the batch through the first number whose budget allows a send now, sends it, records it. */
async function sendOne(db: Db, provider: MessagingProvider, w: WelcomeRow, now: Date): Promise<boolean> {
  let refused: string | null = null;
  for (const ch of await candidates(db, w, now)) {
    const claimed = await db
      .transaction(async (tx) => {
        const rows = await tx
          .update(launchWelcomes)
          .set({ state: "sending", channelId: ch.id, attemptAt: now, leaseUntil: new Date(now.getTime() + leaseMs), lookups: 0 })
          .where(and(eq(launchWelcomes.id, w.id), eq(launchWelcomes.state, "pending")))
          .returning({ id: launchWelcomes.id });
        if (rows.length === 0 || !(await takeSend(tx, ch.id, ch.budget, now))) throw new NotTaken();
        return true;
      })
      .catch((err) => {
        if (err instanceof NotTaken) return false;
        throw err;
      });
    if (!claimed) continue;
    let receipt: SendReceipt;
    try {
      receipt = await provider.send(welcomeMessage(w, ch.id));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof ProviderOutcomeUnknownError) {
        // It may have gone out: looked up once the platform had its time, never sent blind.
        if (err.rateLimited) await recordRateLimited(db, ch.id, now);
        await db
          .update(launchWelcomes)
          .set({ leaseUntil: new Date(now.getTime() + provider.reconcileAfterMs), error: message.slice(0, 500) })
          .where(and(eq(launchWelcomes.id, w.id), eq(launchWelcomes.state, "sending")));
        return false;
      }
      // It did not go out: pending again, the send given back; another number may take it now.
      await backToPending(db, w.id, ch.id, now, message);
      if (err instanceof ProviderSendError && err.rateLimited) await recordRateLimited(db, ch.id, now);
      refused = message;
      continue;
    }
    await recordWelcomeSent(db, w.id, ch.id, receipt);
    return true;
  }
  // Every number refused it: it waits a while before the next try (no loop of refusals).
  if (refused !== null) {
    await db
      .update(launchWelcomes)
      .set({ leaseUntil: new Date(now.getTime() + refusedWaitMs) })
      .where(and(eq(launchWelcomes.id, w.id), eq(launchWelcomes.state, "pending")));
  }
  return false;
}

async function recordWelcomeSent(db: Db, id: number, channelId: string, receipt: SendReceipt) {
  await db
    .update(launchWelcomes)
    .set({ state: "sent", channelId, messageId: receipt.messageId, sentAt: receipt.sentAt, leaseUntil: null, error: null })
    .where(and(eq(launchWelcomes.id, id), eq(launchWelcomes.state, "sending")));
}

async function backToPending(db: Db, id: number, channelId: string, takenAt: Date, error: string | null) {
  await db.transaction(async (tx) => {
    const rows = await tx
      .update(launchWelcomes)
      .set({ state: "pending", channelId: null, leaseUntil: null, lookups: 0, ...(error === null ? {} : { error: error.slice(0, 500) }) })
      .where(and(eq(launchWelcomes.id, id), eq(launchWelcomes.state, "sending")))
      .returning({ id: launchWelcomes.id });
    if (rows.length > 0) await giveBackSend(tx, channelId, takenAt);
  });
}

/** The `sending` batches whose lease ran out: asked of the platform by their delivery key. Answers how many were found sent. */
async function reconcileWelcomes(db: Db, provider: MessagingProvider, now: Date, launchId?: string): Promise<number> {
  const stale = await db
    .select()
    .from(launchWelcomes)
    .where(and(eq(launchWelcomes.state, "sending"), lt(launchWelcomes.leaseUntil, tsParam(now)), launchId ? eq(launchWelcomes.launchId, launchId) : undefined))
    .limit(batchesPerPass);
  let found = 0;
  for (const w of stale) {
    if (!w.channelId || !w.attemptAt) continue;
    const lookAt = new Date(w.attemptAt.getTime() + provider.reconcileAfterMs);
    if (lookAt > now) {
      // The process died right after sending: the platform gets its time before the first look.
      await db
        .update(launchWelcomes)
        .set({ leaseUntil: lookAt })
        .where(and(eq(launchWelcomes.id, w.id), eq(launchWelcomes.state, "sending")));
      continue;
    }
    const message = welcomeMessage(w, w.channelId);
    let result: LookupResult;
    try {
      result = await provider.findSent({ ...message, since: w.attemptAt });
    } catch {
      continue; // the platform cannot say now: the next pass asks again
    }
    if (result.kind === "sent") {
      await recordWelcomeSent(db, w.id, w.channelId, result.receipt);
      found++;
    } else if (result.kind === "absent" || w.lookups + 1 >= negativeLookupsBeforeResend) {
      await backToPending(db, w.id, w.channelId, w.attemptAt, null);
    } else {
      await db
        .update(launchWelcomes)
        .set({ lookups: w.lookups + 1, leaseUntil: new Date(now.getTime() + provider.reconcileAfterMs) })
        .where(and(eq(launchWelcomes.id, w.id), eq(launchWelcomes.state, "sending")));
    }
  }
  return found;
}
