import { and, eq, isNull, sql } from "drizzle-orm";
import { inJson } from "../../db/params";
import { tsParam } from "../../db/errors";
import type { Db } from "../../db/client";
import { deliveries } from "../../db/schema";
import type { Receipt } from "../messaging/provider";

/** Acks or read receipts from the platform, matched by delivery key `<campaign>:<group>`, one UPDATE per campaign. */
export async function recordReceipts(db: Db, kind: "ack" | "read", receipts: Receipt[], at: Date) {
  const byCampaign = new Map<string, string[]>();
  for (const r of receipts) {
    const split = r.deliveryKey.lastIndexOf(":");
    if (split < 0) continue;
    const campaignId = r.deliveryKey.slice(0, split);
    byCampaign.set(campaignId, [...(byCampaign.get(campaignId) ?? []), r.deliveryKey.slice(split + 1)]);
  }
  for (const [campaignId, groupIds] of byCampaign) {
    // Rows locked in id order, as recordSentMany locks them (the two may meet on the same rows).
    const target = db
      .select({ id: deliveries.id })
      .from(deliveries)
      .where(and(eq(deliveries.campaignId, campaignId), inJson(deliveries.groupId, groupIds), isNull(kind === "ack" ? deliveries.ackedAt : deliveries.readAt)))
      .orderBy(deliveries.id)
      .for("update")
      .as("target");
    await db
      .update(deliveries)
      .set(kind === "ack" ? { ackedAt: at } : { readAt: at, ackedAt: sql`coalesce(${deliveries.ackedAt}, ${tsParam(at)})` })
      .from(target)
      .where(eq(deliveries.id, target.id));
  }
}

/**
 * Receipts arrive for every message; recording them one event at a time would cost a commit each.
 * They are buffered briefly and written together (a lost buffer only delays acked_at/read_at until
 * the gateway reports them again; they never decide what is sent).
 */
export class ReceiptBuffer {
  private pending: { kind: "ack" | "read"; receipts: Receipt[]; at: Date }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly delayMs = 200,
  ) {}

  add(kind: "ack" | "read", receipts: Receipt[], at: Date) {
    this.pending.push({ kind, receipts, at });
    this.timer ??= setTimeout(() => void this.flush(), this.delayMs);
    this.timer.unref?.();
  }

  async flush() {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing.then(async () => {
      for (const kind of ["ack", "read"] as const) {
        const items = batch.filter((b) => b.kind === kind);
        if (items.length === 0) continue;
        const at = items[items.length - 1].at;
        await recordReceipts(
          this.db,
          kind,
          items.flatMap((i) => i.receipts),
          at,
        ).catch((err) => console.error("[receipts]", err));
      }
    });
    await this.flushing;
  }
}
