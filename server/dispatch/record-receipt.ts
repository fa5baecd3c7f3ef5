import { sql } from "drizzle-orm";
import { asyncCommitColumn, tsParam } from "../../db/errors";
import type { Db } from "../../db/client";
import { deliveries } from "../../db/schema";
import type { Receipt } from "../messaging/provider";
import { decodeDeliveryKey } from "./delivery-key";

/**
 * Acks or read receipts from the platform, matched by delivery key `<campaign>:<group>`: one UPDATE for
 * all of them, whatever their campaigns (the keys travel as one JSON parameter).
 */
export async function recordReceipts(db: Db, kind: "ack" | "read", receipts: Receipt[], at: Date) {
  const keys = receipts.flatMap((r) => {
    const key = decodeDeliveryKey(r.deliveryKey);
    return key ? [{ c: key.campaignId, g: key.groupId }] : [];
  });
  if (keys.length === 0) return;
  const when = tsParam(at);
  // Rows locked in id order, as recordSentMany locks them (the two may meet on the same rows). A receipt is for a message
  // that went out: a row not yet claimed has none (deliveries_campaign_group_uq holds the others). Committed without
  // waiting for the WAL's fsync (set_config in the statement's own transaction): the gateway was answered when the
  // receipts were buffered (ReceiptBuffer), so a crash loses no more than the buffer may, and the commits that must wait
  // for an fsync (an inbound message's) queue behind fewer (docs/benchmarks.md#moderation).
  await db.execute(sql`with receipted as (update ${deliveries} set ${kind === "ack" ? sql`acked_at = ${when}` : sql`read_at = ${when}, acked_at = coalesce(${deliveries.ackedAt}, ${when})`}
    from (select d.id from ${deliveries} d join json_to_recordset(${JSON.stringify(keys)}::json) as k(c text, g text) on d.campaign_id = k.c and d.id_group = k.g
          where d.state <> 'pending' and ${sql.raw(kind === "ack" ? "d.acked_at" : "d.read_at")} is null order by d.id for update of d) as target
    where ${deliveries.id} = target.id returning 1)
    select ${asyncCommitColumn}, (select count(*) from receipted)::int as receipted`);
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
