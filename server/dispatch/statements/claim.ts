/**
 * The claim (claimDeliveries, claim-deliveries.ts), whole: one statement per shape, built and prepared once per
 * database handle with a placeholder for every value of a call (docs/architecture.md, "A hot statement").
 *
 * It takes up to `limit` pending deliveries of the campaign whose channel may send, marking them `sending` under a
 * lease. FOR UPDATE SKIP LOCKED: two workers never take the same row. The monitoring group's copy goes first and alone
 * (position -1, and monitoringCopyOpen holds the segment's groups back until it is out), then the segment's order.
 * Under a campaign lease it takes rows only while the campaign row still carries the lease's token and is `sending`
 * (or moves to it in this statement: a first loop's `start`). The numbers' budgets (CONTRACT §7) are enforced in the
 * same statement: the claimed rows' channels are locked in id order and their day's sends counted; a channel with a
 * daily cap gives at most what is left of it, one with a least gap at most one send once its `next_send_at` has
 * passed, which moves on by the gap.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { tsParam } from "../../../db/errors";
import { tableAs } from "../../../db/relation";
import { campaigns, channels, deliveries } from "../../../db/schema";
import { countOnDay } from "../../numbers/group-creations";
import { campaignLeaseMs } from "../campaign-lease";
import type { ClaimBudget } from "../channel-budgets";
import { lockedRow, transitionCtes, transitionSetSql } from "../transition";
import { channelCanSendSql, monitoringCopyOpen } from "./open-deliveries";

/**
 * The lease a claim gives a delivery when no campaign lease is passed. A step passes its campaign
 * lease's end instead, and its heartbeat renews both together (campaign-lease.ts).
 */
export const deliveryLeaseMs = campaignLeaseMs;

/** A claim that also starts the campaign: it moves from one of `from` to `sending` in the claim's statement. */
export interface ClaimStart {
  from: (typeof campaigns.$inferSelect)["status"][];
}

export interface ClaimInput {
  campaignId: string;
  limit: number;
  now: Date;
  /** The step's campaign lease (its `lease_until`, the fencing token); the claimed rows share its end. */
  lease?: { until: Date };
  start?: ClaimStart;
  budget: ClaimBudget;
}

/**
 * What the send loop reads of a claimed delivery, not the whole row: a loop claims 100, and every column returned is
 * parsed by the driver and mapped by drizzle (a Date per timestamp) on the Node thread.
 */
const claimedColumns = {
  id: deliveries.id,
  campaignId: deliveries.campaignId,
  channelId: deliveries.channelId,
  groupId: deliveries.groupId,
  groupName: deliveries.groupName,
  position: deliveries.position,
  isMonitoring: deliveries.isMonitoring,
  attempts: deliveries.attempts,
  updatedAt: deliveries.updatedAt,
};

/** A claimed delivery, with the channels this claim brought to their cap (the caller marks them `capped`). */
export type ClaimedRow = Pick<typeof deliveries.$inferSelect, keyof typeof claimedColumns> & { cappedChannels: string[] | null };

export interface ClaimOutput {
  rows: ClaimedRow[];
  /** The statement moved the campaign to `sending` (and wrote its events) when it took rows. */
  moving: boolean;
}

/** Runs the claim's statement for `input`'s shape. */
export async function claimStatement(db: Db, { campaignId, limit, now, lease, start, budget }: ClaimInput): Promise<ClaimOutput> {
  const { statement, moving } = preparedClaim(db, { from: start?.from ?? null, lease: Boolean(lease), limited: budget.limits.length > 0 });
  const values: ClaimValues = {
    id: campaignId,
    now: now.toISOString(),
    at: budget.at.toISOString(),
    day: budget.day,
    limit,
    lease_until: lease ? lease.until.toISOString() : null,
    row_lease: (lease?.until ?? new Date(now.getTime() + deliveryLeaseMs)).toISOString(),
    budget: JSON.stringify(budget.limits.map((l) => ({ id: l.id, cap: l.cap, gap_ms: l.gapMs }))),
  };
  return { rows: (await statement.execute(values)) as ClaimedRow[], moving };
}

/** What shapes the claim's statement (each shape is built and prepared once per database handle). */
interface ClaimVariant {
  /** A first loop's claim: the statuses the campaign moves to `sending` from. */
  from: ClaimStart["from"] | null;
  /** Taken under a campaign lease (the fencing token `lease_until`). */
  lease: boolean;
  /** Some of the tenant's channels have a cap or a least gap (the `budget` rows). */
  limited: boolean;
}

/**
 * The placeholders' values: `id` (the campaign), `now`, `at` (when the sends go out: the budgets' moment), `day` (its
 * Brasília day), `limit`, `lease_until` (the campaign lease's token), `row_lease` (the claimed rows' lease), `budget`
 * (JSON: the limited channels).
 */
type ClaimValues = {
  id: string;
  now: string;
  at: string;
  day: string;
  limit: number;
  lease_until: string | null;
  row_lease: string;
  budget: string;
};

type Prepared = ReturnType<typeof buildClaim>;

const claimStatements = new WeakMap<Db, Map<string, Prepared>>();

function preparedClaim(db: Db, variant: ClaimVariant): Prepared {
  let forDb = claimStatements.get(db);
  if (!forDb) {
    forDb = new Map();
    claimStatements.set(db, forDb);
  }
  const key = `${variant.from?.join(",") ?? ""}|${variant.lease}|${variant.limited}`;
  let prepared = forDb.get(key);
  if (!prepared) {
    prepared = buildClaim(db, variant);
    forDb.set(key, prepared);
  }
  return prepared;
}

/**
 * The claim's statement for one shape, with placeholders for every value of a call (ClaimValues), and whether it
 * starts the campaign (`moving`).
 */
function buildClaim(db: Db, variant: ClaimVariant) {
  const p = (name: keyof ClaimValues) => sql.placeholder(name);
  const id = p("id");
  const now = p("now");
  const at = p("at");
  const day = p("day");
  const c = tableAs(channels, "c");
  // A campaign's first loop (or its first after a pause): the campaign moves to `sending` in this statement
  // (status events included) and rows are taken only if it did.
  const transitionParts = variant.from ? transitionCtes(db, id, variant.from, "sending", now, "system") : null;
  const moving = transitionParts && {
    ...transitionParts,
    started: db
      .$with("started", {})
      .as(sql`update ${campaigns} set ${transitionSetSql("sending", now)} where id = (select ${lockedRow.col("id")} from ${lockedRow.name}) returning id`),
  };
  // The statement's snapshot still shows the status the campaign moves from.
  const statuses = ["sending", ...(moving?.sources ?? [])];
  const atTs = tsParam(at);
  const leaseHeld = variant.lease
    ? sql`and exists (select 1 from ${campaigns} lc where lc.id = ${id} and lc.lease_until = ${tsParam(p("lease_until"))}
          and lc.status in (${sql.raw(statuses.map((x) => `'${x}'`).join(", "))}))`
    : sql``;
  // Position order walks deliveries_open_idx; the monitoring copy (position -1) comes first.
  const picked = db
    .$with("picked", {})
    .as(sql`select d.id, d.channel_id, d.position from ${deliveries} d join ${channels} ${c.name} on ${c.col("id")} = d.channel_id
      where d.campaign_id = ${id} and d.state = 'pending' and (d.not_before is null or d.not_before <= ${tsParam(now)})
        and ${channelCanSendSql(c, at)}
        and (d.is_monitoring or not ${monitoringCopyOpen(id, now)}) ${leaseHeld}
      order by d.position limit ${p("limit")} for update of d skip locked`);
  // The picked rows' channels, locked in id order (two claims never lock them crosswise); their day's sends so far.
  const locked = db.$with("usage_locked", {}).as(sql`select c.id, ${countOnDay(c, "sent_today", day)}::int as used,
      c.next_send_at from ${channels} ${c.name} where c.id = any(array(select distinct channel_id from picked)) order by c.id for update`);
  const limited = variant.limited;
  const limits = db.$with("budget", {}).as(sql`select * from json_to_recordset(${p("budget")}::json) as b(id text, cap int, gap_ms int)`);
  // What each channel may still send now: the rest of its cap, and one send when its gap has passed (null: no limit).
  const taken = db.$with("taken", {}).as(
    limited
      ? sql`select r.id, r.channel_id from (select p.id, p.channel_id, row_number() over (partition by p.channel_id order by p.position) as rn from picked p) r
          join usage_locked u on u.id = r.channel_id left join budget b on b.id = r.channel_id
          where b.id is null or r.rn <= coalesce(least(
            case when b.cap is not null then greatest(b.cap - u.used, 0) end,
            case when b.gap_ms > 0 then (case when u.next_send_at is null or u.next_send_at <= ${atTs} then 1 else 0 end) end), r.rn)`
      : sql`select id, channel_id from picked`,
  );
  const usage = db.$with("usage", {}).as(sql`update ${channels} ${c.name} set usage_day = ${day},
        sent_today = u.used + coalesce(t.n, 0), groups_created_today = ${countOnDay(c, "groups_created_today", day)}
        ${limited ? sql`, next_send_at = case when coalesce(t.n, 0) > 0 and b.gap_ms > 0 then ${atTs} + make_interval(secs => b.gap_ms / 1000.0) else c.next_send_at end` : sql``}
      from usage_locked u left join (select channel_id, count(*)::int as n from taken group by channel_id) t on t.channel_id = u.id
        ${limited ? sql`left join budget b on b.id = u.id` : sql``}
      where c.id = u.id
      returning c.id, ${limited ? sql`(b.cap is not null and c.sent_today >= b.cap)` : sql`false`} as capped`);
  const ctes = [
    ...(moving ? [moving.locked, moving.recorded, ...(moving.audited ? [moving.audited] : []), moving.started] : []),
    picked,
    locked,
    ...(limited ? [limits] : []),
    taken,
    usage,
  ];
  const statement = db
    .with(...ctes)
    .update(deliveries)
    .set({
      state: "sending",
      attempts: sql`${deliveries.attempts} + 1`,
      leaseUntil: sql`${tsParam(p("row_lease"))}`,
      updatedAt: sql`${tsParam(now)}`,
    })
    .where(sql`${deliveries.id} in (select id from taken) ${moving ? sql`and exists (select 1 from started)` : sql``}`)
    .returning({
      ...claimedColumns,
      cappedChannels: sql<string[] | null>`(select json_agg(id) from usage where capped)`,
    })
    .prepare("claim_deliveries");
  return { statement, moving: Boolean(moving) };
}
