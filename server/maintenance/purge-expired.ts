import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import { env } from "../env";
import { idempotencyRetentionMs } from "../http/idempotency";
import { foldLaunchClicks, purgeLaunchClicks } from "../launches/link/fold-clicks";
import { pruneWebhookHistory } from "../webhooks/prune-history";
import { deleteInBatches, maintenanceBatch } from "../../db/batched-delete";

const day = 86_400_000;

export interface MaintenanceCounts {
  auditEntries: number;
  idempotencyKeys: number;
  oauthCodes: number;
  oauthAuthorizationRequests: number;
  oauthTokens: number;
  rateLimitBuckets: number;
  webhookDeliveries: number;
  outboxEvents: number;
  webhookTestAttempts: number;
  simulatorMessages: number;
  /** Launch-days of the join link's clicks folded into daily figures. */
  launchClickDaysFolded: number;
  launchClicks: number;
  /** Finished Meta Conversions API events past WEBHOOK_RETENTION_DAYS (the launch page's log). */
  metaEvents: number;
  /** Members' messages moderation read (a day), its decisions and strikes (90 days), buyers' removals (365 days). */
  groupMessages: number;
  moderationEvents: number;
  moderationStrikes: number;
  simulatorGroupPosts: number;
  buyerRemovals: number;
}

export interface MaintenanceOptions {
  batch?: number;
  webhookRetentionDays?: number;
  simulatorRetentionDays?: number;
}

/**
 * Moderation's retention (docs/moderation.md#retention): the members' messages it read only as long as a redelivery and a
 * flood's minute need them (a day); its decisions and strikes 90 days after they were made (a launch's cycle); a buyer's
 * removal a year, after which a purchase of that person in that old launch could remove them again.
 */
export const moderationRetention = { messagesDays: 1, decisionsDays: 90, buyerRemovalsDays: 365 } as const;

/** How long the audit log is kept (CONTRACT §10; docs/team.md#audit-log). */
export const auditRetentionDays = 365;

/**
 * The one retention job (docs/decisions.md#limits-abuse-retention, "Retention"), hourly: the `maintenance` job of
 * inngest/jobs/ calls it, in process and as an Inngest cron. Nothing pending goes: an idempotency claim still running, an unused and
 * unexpired OAuth code or authorization request, a live token, a bucket whose window is open, a pending
 * webhook delivery or an outbox event not yet fanned out. Returns how many rows went, per table.
 */
export async function runMaintenance(db: Db, now: Date, opts: MaintenanceOptions = {}): Promise<MaintenanceCounts> {
  const batch = opts.batch ?? maintenanceBatch;
  const at = tsParam(now);
  const dayAgo = tsParam(new Date(now.getTime() - day));
  const del = (statement: (limit: number) => SQL) => deleteInBatches(db, statement, batch);

  // Idempotency records: kept 24 h (a claim still in progress is left to finish; withIdempotency frees it).
  const idempotencyCutoff = tsParam(new Date(now.getTime() - idempotencyRetentionMs));
  const idempotencyKeys = await del(
    (n) => sql`delete from idempotency_keys where (tenant_id, key) in (
      select tenant_id, key from idempotency_keys
      where created_at < ${idempotencyCutoff} and not (state = 'in_progress' and locked_until > ${at}) limit ${n})`,
  );

  // OAuth codes and authorization requests: once used or expired, kept a day (a code's reuse is detected meanwhile).
  const oauthCodes = await del(
    (n) => sql`delete from oauth_codes where code_hash in (
      select code_hash from oauth_codes
      where created_at < ${dayAgo} and (used_at is not null or expires_at < ${at}) limit ${n})`,
  );
  const oauthAuthorizationRequests = await del(
    (n) => sql`delete from oauth_authorization_requests where id in (
      select id from oauth_authorization_requests
      where created_at < ${dayAgo} and (consumed_at is not null or expires_at < ${at}) limit ${n})`,
  );

  // Access and refresh tokens expired or revoked more than 30 days ago. Nothing references a token (grants
  // and codes stay: a grant is the app's authorization, listed until the tenant revokes it).
  const tokenCutoff = tsParam(new Date(now.getTime() - 30 * day));
  const oauthTokens = await del(
    (n) => sql`delete from oauth_tokens where id in (
      select id from oauth_tokens where expires_at < ${tokenCutoff} or revoked_at < ${tokenCutoff} limit ${n})`,
  );

  // Rate-limit buckets whose window is over (a new request starts a new window anyway).
  const rateLimitBuckets = await del(
    (n) => sql`delete from rate_limit_buckets where key in (select key from rate_limit_buckets where expire < ${at} limit ${n})`,
  );

  // Webhook history past WEBHOOK_RETENTION_DAYS.
  const webhooks = await pruneWebhookHistory(db, now, opts.webhookRetentionDays ?? env.webhooks.retentionDays, batch);

  // The simulator's message log past SIMULATOR_RETENTION_DAYS.
  const simulatorCutoff = tsParam(new Date(now.getTime() - (opts.simulatorRetentionDays ?? env.simulatorRetentionDays) * day));
  const simulatorMessages = await del(
    (n) => sql`delete from simulator_messages where delivery_key in (
      select delivery_key from simulator_messages where sent_at < ${simulatorCutoff} limit ${n})`,
  );

  // The join link's raw clicks: each finished day folded into daily figures first, then rows past 90 days
  // deleted (only folded ones), so launch-analytics still answers 365 days (server/launches/link/fold-clicks.ts).
  const launchClickDaysFolded = await foldLaunchClicks(db, now);
  const launchClicks = await purgeLaunchClicks(db, now, batch);

  // The Meta Conversions API log: finished events kept as long as the webhook log (a pending one stays).
  const metaCutoff = tsParam(new Date(now.getTime() - (opts.webhookRetentionDays ?? env.webhooks.retentionDays) * day));
  const metaEvents = await del((n) => sql`delete from meta_events where id in (select id from meta_events where finished_at < ${metaCutoff} limit ${n})`);

  // The audit log: 365 days (CONTRACT §10).
  const auditCutoff = tsParam(new Date(now.getTime() - auditRetentionDays * day));
  const auditEntries = await del((n) => sql`delete from audit_log where id in (select id from audit_log where at < ${auditCutoff} limit ${n})`);

  // Moderation (docs/moderation.md#retention): the messages it read, its decisions and strikes; buyers' removals.
  const messagesCutoff = tsParam(new Date(now.getTime() - moderationRetention.messagesDays * day));
  const groupMessages = await del((n) => sql`delete from group_messages where id in (select id from group_messages where at < ${messagesCutoff} limit ${n})`);
  const decisionsCutoff = tsParam(new Date(now.getTime() - moderationRetention.decisionsDays * day));
  const moderationEvents = await del(
    (n) => sql`delete from moderation_events where id in (select id from moderation_events where at < ${decisionsCutoff} limit ${n})`,
  );
  const moderationStrikes = await del(
    (n) => sql`delete from moderation_strikes where (launch_id, person) in (
      select launch_id, person from moderation_strikes where last_at < ${decisionsCutoff} limit ${n})`,
  );
  const simulatorGroupPosts = await del(
    (n) => sql`delete from simulator_group_posts where message_id in (select message_id from simulator_group_posts where at < ${simulatorCutoff} limit ${n})`,
  );
  const removalsCutoff = tsParam(new Date(now.getTime() - moderationRetention.buyerRemovalsDays * day));
  const buyerRemovals = await del(
    (n) => sql`delete from buyer_removals where (launch_id, person_key, id_group) in (
      select launch_id, person_key, id_group from buyer_removals where created_at < ${removalsCutoff} limit ${n})`,
  );

  return {
    groupMessages,
    moderationEvents,
    moderationStrikes,
    simulatorGroupPosts,
    buyerRemovals,
    auditEntries,
    idempotencyKeys,
    oauthCodes,
    oauthAuthorizationRequests,
    oauthTokens,
    rateLimitBuckets,
    webhookDeliveries: webhooks.deliveries,
    outboxEvents: webhooks.events,
    webhookTestAttempts: webhooks.testAttempts,
    simulatorMessages,
    launchClickDaysFolded,
    launchClicks,
    metaEvents,
  };
}

/** Runs the job and logs one line with the counts (both engines call this). */
export async function runMaintenanceAndLog(db: Db, now = new Date(), opts: MaintenanceOptions = {}) {
  const started = Date.now();
  const counts = await runMaintenance(db, now, opts);
  const removed = Object.entries(counts)
    .map(([table, n]) => `${table}=${n}`)
    .join(" ");
  console.log(`[maintenance] retention: ${removed} (${Date.now() - started} ms)`);
  return counts;
}
