import { getTableColumns, sql, type SQL } from "drizzle-orm";
import { tsParam } from "../../db/errors";
import type { Db } from "../../db/client";
import type { At, Bind } from "../../db/params";
import { campaigns, channels, deliveries, monitoringGroups, segmentChannels } from "../../db/schema";
import { brasiliaDay } from "../numbers/budget";
import { countOnDay } from "../numbers/group-creations";
import { sendableChannelSql } from "../numbers/health";
import { campaignLeaseMs } from "./campaign-lease";
import type { ClaimBudget } from "./channel-budgets";
import { transitionCtes, transitionSetSql } from "./transition";
import { eventsRecorded } from "../outbox/record-event";

/**
 * The lease a claim gives a delivery when no campaign lease is passed. A step passes its campaign
 * lease's end instead, and its heartbeat renews both together (campaign-lease.ts).
 */
export const deliveryLeaseMs = campaignLeaseMs;

/**
 * Whether the channel row `alias` may send at `at`: it can send (sendableChannelSql: connected, and not
 * cooling, capped, restricted, logged out or banned) and its least gap since its last send has passed
 * (`next_send_at`, set only for a channel with min_send_gap_seconds).
 */
export const channelCanSendSql = (alias: string, at: At) =>
  sql<boolean>`(${sendableChannelSql(alias, at)} and (${sql.raw(alias)}.next_send_at is null or ${sql.raw(alias)}.next_send_at <= ${tsParam(at)}))`;

/**
 * The monitoring copy goes first and apart (docs/decisions.md#monitoring-copy): while it is open (pending, backing off
 * for a retry, or in flight) on a channel that can send, no segment group of the campaign may be taken.
 * Once it is sent or finally failed, the segment's groups go. (If its channel cannot send and failover has no
 * other for it, the segment's groups do not wait for it; it goes when its channel can, and the campaign finishes after it.)
 */
const monitoringCopyOpen = (campaignId: Bind<string>, now: At) => sql`exists (
  select 1 from ${deliveries} m join ${channels} mc on mc.id = m.channel_id
  where m.campaign_id = ${campaignId} and ${monitoringPosition("m")} and m.is_monitoring and m.state in ('pending', 'sending') and ${sendableChannelSql("mc", now)})`;

/**
 * The monitoring copy's position (-1; the segment's groups are 0 and up): with it, a look for the open copy
 * is one probe of deliveries_open_idx (campaign_id, position). Without it the planner walked the campaign's
 * open rows to find the one with is_monitoring, three times a loop (docs/history/benchmarks.md, issue 14).
 */
const monitoringPosition = (alias: string) => sql.raw(`${alias}.position < 0`);

/**
 * Takes up to `limit` pending deliveries of the campaign whose channel may send, marking them `sending`
 * under a lease, in one statement. FOR UPDATE SKIP LOCKED: two workers never take the same row. The
 * monitoring group's copy goes first and alone (position -1, and monitoringCopyOpen holds the segment's
 * groups back until it is out), then the segment's order.
 *
 * `lease`: the step's campaign lease (its `lease_until`, the fencing token). The claim takes rows only
 * while the campaign row still carries it, so a worker whose lease was taken over claims nothing, and
 * the claimed rows share its end (their heartbeat renews them with the campaign). And only while the campaign is
 * `sending`: a campaign paused or canceled since its step planned (while it waited out its pause) sends nothing more.
 *
 * The numbers' budgets (CONTRACT §7) are enforced here, in the same statement: the claimed rows' channels are
 * locked (in id order) and their day's sends counted (`sent_today` of `usage_day`); a channel with a daily cap
 * gives at most what is left of it, one with a least gap (`min_send_gap_seconds`) at most one send once its
 * `next_send_at` has passed, which moves on by the gap. A second process's claim waits for the lock and reads
 * the counters the first left, so no send passes a cap. Each row returned carries `cappedChannels`: the
 * channels this claim brought to their cap (the caller marks them `capped`).
 */
export async function claimDeliveries(
  db: Db,
  campaignId: string,
  limit: number,
  now: Date,
  lease?: { until: Date },
  start?: ClaimStart,
  budget: ClaimBudget = { at: now, day: brasiliaDay(now), limits: [] },
) {
  const variant: ClaimVariant = { from: start?.from ?? null, lease: Boolean(lease), limited: budget.limits.length > 0 };
  const statement = claimStatement(db, variant);
  const claimed = await statement.execute({
    id: campaignId,
    now: now.toISOString(),
    at: budget.at.toISOString(),
    day: budget.day,
    limit,
    lease_until: lease ? lease.until.toISOString() : null,
    row_lease: (lease?.until ?? new Date(now.getTime() + deliveryLeaseMs)).toISOString(),
    budget: JSON.stringify(budget.limits.map((l) => ({ id: l.id, cap: l.cap, gap_ms: l.gapMs }))),
  });
  if (statement.moving) eventsRecorded();
  return claimed.sort((a, b) => a.position - b.position);
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

const claimStatements = new WeakMap<Db, Map<string, ReturnType<typeof buildClaim>>>();

function claimStatement(db: Db, variant: ClaimVariant) {
  let forDb = claimStatements.get(db);
  if (!forDb) {
    forDb = new Map();
    claimStatements.set(db, forDb);
  }
  const key = `${variant.from?.join(",") ?? ""}|${variant.lease}|${variant.limited}`;
  let statement = forDb.get(key);
  if (!statement) {
    statement = buildClaim(db, variant);
    forDb.set(key, statement);
  }
  return statement;
}

/**
 * The claim's statement for one shape, with placeholders for every value of a call: `id` (the campaign), `now`,
 * `at` (when the sends go out: the budgets' moment), `day` (its Brasília day), `limit`, `lease_until` (the
 * campaign lease's token), `row_lease` (the claimed rows' lease), `budget` (JSON: the limited channels).
 */
function buildClaim(db: Db, variant: ClaimVariant) {
  const id = sql.placeholder("id");
  const now = sql.placeholder("now");
  const at = sql.placeholder("at");
  const day = sql.placeholder("day");
  // A campaign's first loop (or its first after a pause): the campaign moves to `sending` in this statement
  // (status events included) and rows are taken only if it did.
  const transitionParts = variant.from ? transitionCtes(db, id, variant.from, "sending", now) : null;
  const moving = transitionParts && {
    ...transitionParts,
    started: db.$with("started", {}).as(sql`update ${campaigns} set ${transitionSetSql("sending", now)} where id = (select id from locked) returning id`),
  };
  // The statement's snapshot still shows the status the campaign moves from.
  const statuses = ["sending", ...(moving?.sources ?? [])];
  const atTs = tsParam(at);
  const leaseHeld = variant.lease
    ? sql`and exists (select 1 from ${campaigns} lc where lc.id = ${id} and lc.lease_until = ${tsParam(sql.placeholder("lease_until"))}
          and lc.status in (${sql.raw(statuses.map((x) => `'${x}'`).join(", "))}))`
    : sql``;
  // Position order walks deliveries_open_idx; the monitoring copy (position -1) comes first.
  const picked = db.$with("picked", {}).as(sql`select d.id, d.channel_id, d.position from ${deliveries} d join ${channels} c on c.id = d.channel_id
      where d.campaign_id = ${id} and d.state = 'pending' and (d.not_before is null or d.not_before <= ${tsParam(now)})
        and ${channelCanSendSql("c", at)}
        and (d.is_monitoring or not ${monitoringCopyOpen(id, now)}) ${leaseHeld}
      order by d.position limit ${sql.placeholder("limit")} for update of d skip locked`);
  // The picked rows' channels, locked in id order (two claims never lock them crosswise); their day's sends so far.
  const locked = db.$with("usage_locked", {}).as(sql`select c.id, ${countOnDay("c", "sent_today", day)}::int as used,
      c.next_send_at from ${channels} c where c.id = any(array(select distinct channel_id from picked)) order by c.id for update`);
  const limited = variant.limited;
  const limits = db.$with("budget", {}).as(sql`select * from json_to_recordset(${sql.placeholder("budget")}::json) as b(id text, cap int, gap_ms int)`);
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
  const usage = db.$with("usage", {}).as(sql`update ${channels} c set usage_day = ${day},
        sent_today = u.used + coalesce(t.n, 0), groups_created_today = ${countOnDay("c", "groups_created_today", day)}
        ${limited ? sql`, next_send_at = case when coalesce(t.n, 0) > 0 and b.gap_ms > 0 then ${atTs} + make_interval(secs => b.gap_ms / 1000.0) else c.next_send_at end` : sql``}
      from usage_locked u left join (select channel_id, count(*)::int as n from taken group by channel_id) t on t.channel_id = u.id
        ${limited ? sql`left join budget b on b.id = u.id` : sql``}
      where c.id = u.id
      returning c.id, ${limited ? sql`(b.cap is not null and c.sent_today >= b.cap)` : sql`false`} as capped`);
  const ctes = [...(moving ? [moving.locked, moving.recorded, moving.started] : []), picked, locked, ...(limited ? [limits] : []), taken, usage];
  const prepared = db
    .with(...ctes)
    .update(deliveries)
    .set({
      state: "sending",
      attempts: sql`${deliveries.attempts} + 1`,
      leaseUntil: sql`${tsParam(sql.placeholder("row_lease"))}`,
      updatedAt: sql`${tsParam(now)}`,
    })
    .where(sql`${deliveries.id} in (select id from taken) ${moving ? sql`and exists (select 1 from started)` : sql``}`)
    .returning({
      ...getTableColumns(deliveries),
      cappedChannels: sql<string[] | null>`(select json_agg(id) from usage where capped)`,
    })
    .prepare("claim_deliveries");
  return Object.assign(prepared, { moving: Boolean(moving) });
}

/** A claim that also starts the campaign: it moves from one of `from` to `sending` in the claim's statement. */
export interface ClaimStart {
  from: (typeof campaigns.$inferSelect)["status"][];
}

/**
 * The channels a campaign is sent through, for the small probes that look at channels rather than rows: the
 * segment's channels and its monitoring group's (a delivery moves only among those).
 */
const campaignChannels = (
  campaignId: Bind<string>,
) => sql`(select sc.channel_id from ${segmentChannels} sc join ${campaigns} cc on cc.segment_id = sc.segment_id
    where cc.id = ${campaignId}
  union select mg.channel_id from ${monitoringGroups} mg join ${campaigns} cm on cm.segment_id = mg.segment_id where cm.id = ${campaignId})`;

/**
 * What the planner needs about the campaign's open deliveries, as existence checks that stop at the first
 * matching row of deliveries_open_idx (no count over the whole campaign each loop): SQL expressions, read
 * in the lease's own statement by a step (CampaignLease.acquire), or alone by deliveryOutlook.
 * `sendable` is capped at 100, the largest dispatches_per_loop. `blocked`: one of the campaign's channels
 * cannot send (offline, or its health stops it): its pending deliveries may have to move (failover.ts).
 */
export function outlookProbe(campaignId: Bind<string>, now: At) {
  const at = tsParam(now);
  const open = sql`from ${deliveries} d join ${channels} c on c.id = d.channel_id where d.campaign_id = ${campaignId}`;
  return {
    sendable: sql<number>`(select count(*)::int from (select 1 ${open} and d.state = 'pending' and (d.not_before is null or d.not_before <= ${at})
        and ${channelCanSendSql("c", now)} and (d.is_monitoring or not ${monitoringCopyOpen(campaignId, now)}) limit 100) s)`,
    waitingOnline: sql<boolean>`exists (select 1 ${open} and d.state in ('pending', 'sending') and ${sendableChannelSql("c", now)})`,
    anyOpen: sql<boolean>`exists (select 1 from ${deliveries} d where d.campaign_id = ${campaignId} and d.state in ('pending', 'sending'))`,
    // The monitoring copy is outside the campaign's counters: the campaign finishes only after it too.
    monitoringOpen: sql<boolean>`exists (select 1 from ${deliveries} d where d.campaign_id = ${campaignId} and ${monitoringPosition("d")} and d.is_monitoring
        and d.state in ('pending', 'sending'))`,
    blocked: sql<boolean>`exists (select 1 from ${channels} bc where bc.id in ${campaignChannels(campaignId)} and not ${sendableChannelSql("bc", now)})`,
  };
}

type Probed = { sendable: number; waitingOnline: boolean; anyOpen: boolean; monitoringOpen: boolean };

/** The outlook alone, in one query (a step that reconciled or moved deliveries reads it again after). */
export async function deliveryOutlook(db: Db, campaignId: string, now: Date) {
  const [row] = await db.select(outlookProbe(campaignId, now)).from(sql`(select 1) as one`);
  return outlookOf(db, campaignId, now, row);
}

/** Why nothing of a campaign can be sent (its open deliveries' channels all stop it), and until when at least. */
export interface Blocked {
  /** `channel_limits` when every channel holding it back is connected and `capped` or `cooling`. */
  reason: "channel_offline" | "channel_limits";
  /** The earliest end of those limits (null: none ends by itself). */
  until: Date | null;
}

/**
 * The planner's outlook from the probe's answer. Only when nothing can go now is the next retry read (a walk
 * over the open rows, and the campaign's channels' gaps), and only when nothing can go at all, why.
 */
export async function outlookOf(db: Db, campaignId: string, now: Date, row: Probed) {
  const sendable = Number(row.sendable);
  let nextRetryAt: Date | null = null;
  let blocked: Blocked | null = null;
  if (sendable === 0) {
    const at = tsParam(now);
    const [retry] = await db
      .select({
        at: sql<
          string | null
        >`least((select min(d.not_before) from ${deliveries} d where d.campaign_id = ${campaignId} and d.state = 'pending' and d.not_before > ${at}),
          (select min(g.next_send_at) from ${channels} g where g.id in ${campaignChannels(campaignId)} and g.next_send_at > ${at}))`,
      })
      .from(sql`(select 1) as one`);
    nextRetryAt = retry?.at ? new Date(retry.at) : null;
  }
  if (row.anyOpen && !row.waitingOnline) blocked = await blockedBy(db, campaignId, now);
  return { sendableNow: sendable, blocked, nextRetryAt, monitoringOpen: row.monitoringOpen };
}

/** The channels of the campaign's open deliveries (none can send): channel_limits when all are only capped or cooling. */
async function blockedBy(db: Db, campaignId: string, now: Date): Promise<Blocked> {
  const at = tsParam(now);
  const [row] = await db
    .select({
      limits: sql<boolean>`coalesce(bool_and(${timedStop("c", at)}), false)`,
      until: sql<string | null>`min(c.health_until) filter (where ${timedStop("c", at)})`,
    })
    .from(sql`${channels} c`)
    .where(sql`c.id = any(array(select distinct d.channel_id from ${deliveries} d where d.campaign_id = ${campaignId} and d.state in ('pending', 'sending')))`);
  return { reason: row?.limits ? "channel_limits" : "channel_offline", until: row?.until ? new Date(row.until) : null };
}

/** Connected, and stopped only by a limit that ends by itself (cooling, capped). */
function timedStop(alias: string, at: SQL) {
  const r = (column: string) => sql.raw(`${alias}.${column}`);
  return sql`(${r("status")} = 'connected' and ${r("health_state")} in ('cooling', 'capped') and ${r("health_until")} > ${at})`;
}
