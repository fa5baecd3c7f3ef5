/**
 * A number's day after its sends were answered (CONTRACT §7 "Budgets"; docs/dispatch.md#several-numbers-per-group):
 * sends the claim counted that did not go out are given back, a number's least gap runs from the loop's last
 * answer, and a number found at its cap is marked `capped`.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { retryOnConnectionLoss } from "../../db/errors";
import { rowsOf } from "../../db/params";
import { channels } from "../../db/schema";
import { tableAs } from "../../db/relation";
import { markCapped, sendableChannelSql } from "../numbers/health";
import type { ClaimBudget } from "./channel-budgets";

export interface UsageSettlement {
  /** Per channel: sends counted by the claim that did not go out (refused, offline, rate-limited). */
  refunds: Map<string, number>;
  /** Per channel with a least gap: the earliest next send, counted from the loop's last answer. */
  nextSends: Map<string, Date>;
}

/** One statement for every channel of the loop; nothing when there is nothing to settle. */
export async function settleChannelUsage(db: Db, day: string, s: UsageSettlement) {
  const ids = new Set([...s.refunds.keys(), ...s.nextSends.keys()]);
  if (ids.size === 0) return;
  const rows = [...ids].map((id) => ({ id, n: s.refunds.get(id) ?? 0, next: s.nextSends.get(id)?.toISOString() ?? null }));
  await retryOnConnectionLoss(() =>
    db.execute(sql`update ${channels} c set
        sent_today = case when c.usage_day = ${day} then greatest(c.sent_today - v.n, 0) else c.sent_today end,
        next_send_at = case when v.next is null then c.next_send_at else greatest(c.next_send_at, v.next) end
      from json_to_recordset(${JSON.stringify(rows)}::json) as v(id text, n int, next timestamptz) where c.id = v.id`),
  );
}

/**
 * The channels with a cap that have reached it on the budget's day and still show as able to send: marked
 * `capped` until the next 00:00 in Brasília. For a claim that took nothing although the planner saw sendable
 * rows (the claim that reached the cap was another process's, or its step stopped before marking it).
 */
export async function markReachedCaps(db: Db, budget: ClaimBudget, now: Date) {
  const capped = budget.limits.filter((l) => l.cap !== null).map((l) => ({ id: l.id, cap: l.cap }));
  if (capped.length === 0) return;
  const reached = rowsOf<{ id: string }>(
    await db.execute(sql`select c.id from ${channels} c join json_to_recordset(${JSON.stringify(capped)}::json) as b(id text, cap int) on b.id = c.id
      where c.usage_day = ${budget.day} and c.sent_today >= b.cap and ${sendableChannelSql(tableAs(channels, "c"), now)}`),
  );
  for (const { id } of reached) await markCapped(db, id, now);
}

/** Marks `capped` the channels a claim brought to their cap. */
export async function markClaimedCaps(db: Db, channelIds: Iterable<string>, now: Date) {
  for (const id of new Set(channelIds)) await markCapped(db, id, now);
}
