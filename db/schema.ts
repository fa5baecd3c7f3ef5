import { sql } from "drizzle-orm";
import { bigint, bigserial, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

// Generic in the name, so a column keeps its SQL name in its type (db/relation.ts checks columns by it).
const ts = <N extends string>(name: N) => timestamp(name, { withTimezone: true, mode: "date" });
const createdAt = () => ts("created_at").notNull().defaultNow();

export const tenants = pgTable("tenants", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  channelLimit: integer("channel_limit").notNull().default(10),
  /**
   * The unguessable part of the tenant's inbound marketplace webhook URLs, `/api/hooks/{type}/{hooksToken}`
   * (docs/integrations.md#inbound-webhooks-buyers): 64 hex characters from two random UUIDs (PostgreSQL's strong
   * random), made for every tenant, old ones included, by the column's default.
   */
  hooksToken: text("hooks_token").notNull().unique().default(sql`replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')`),
  createdAt: createdAt(),
});

export const users = pgTable("users", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id")
    .notNull()
    .references(() => tenants.id, { onDelete: "cascade" }),
  email: text("email").notNull().unique(),
  name: text("name").notNull(),
  passwordHash: text("password_hash").notNull(),
  /**
   * Raised by sign-out, a password change and a throttled lock: a dashboard session carries the value it
   * was issued with and is refused once it differs, so all of the user's sessions end at once
   * (docs/security.md, "Sessions").
   */
  sessionVersion: integer("session_version").notNull().default(0),
  createdAt: createdAt(),
});

/** CONTRACT §10: what a member may do in an account, least to most (docs/team.md#roles). */
export const memberRoles = ["viewer", "editor", "admin", "owner"] as const;
export type MemberRole = (typeof memberRoles)[number];

/**
 * A person's place in an account (docs/team.md): `users.tenant_id` is only the account they first joined;
 * what they may open is this table. The dashboard session carries one of these tenants (the account switcher).
 */
export const memberships = pgTable(
  "memberships",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: memberRoles }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.userId] }), index("memberships_user_idx").on(t.userId)],
);

/** A pending invitation (docs/team.md#invitations): the link's token is kept only as its SHA-256; single use, 7 days. */
export const invitations = pgTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role", { enum: memberRoles }).notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    invitedBy: text("invited_by"),
    expiresAt: ts("expires_at").notNull(),
    usedAt: ts("used_at"),
    usedBy: text("used_by"),
    revokedAt: ts("revoked_at"),
    createdAt: createdAt(),
  },
  (t) => [index("invitations_tenant_idx").on(t.tenantId, t.createdAt)],
);

export const auditActorTypes = ["member", "api_key", "partner_app", "cli", "system"] as const;
export type AuditActorType = (typeof auditActorTypes)[number];

/**
 * CONTRACT §10, the audit log (docs/team.md#audit-log): one row per change (or refused attempt), written in the
 * change's own transaction. Never a secret or a message body: `target` is an id, `actor_label` an e-mail, a key's
 * prefix or an app's name. Kept 365 days (server/maintenance/purge-expired.ts).
 */
export const auditLog = pgTable(
  "audit_log",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    at: ts("at").notNull(),
    // No foreign key: its check locked the account's row at every audited change (docs/benchmarks.md#the-audit-log).
    // The tenant is always the caller's own, from the authenticated context or the changed row; accounts are never
    // deleted (a deletion would have to delete these rows itself); the purge goes by `at`.
    tenantId: text("tenant_id").notNull(),
    actorType: text("actor_type", { enum: auditActorTypes }).notNull(),
    actorId: text("actor_id"),
    actorLabel: text("actor_label"),
    action: text("action").notNull(),
    target: text("target"),
    ip: text("ip"),
    outcome: text("outcome", { enum: ["ok", "denied"] }).notNull(),
  },
  (t) => [index("audit_log_tenant_idx").on(t.tenantId, t.at, t.id), index("audit_log_at_idx").on(t.at)],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** First characters of the key, shown in the dashboard to tell keys apart. */
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    createdAt: createdAt(),
    lastUsedAt: ts("last_used_at"),
    revokedAt: ts("revoked_at"),
  },
  (t) => [index("api_keys_tenant_idx").on(t.tenantId)],
);

/** CONTRACT §7: `ok`/`warming` send; the others do not (`cooling`/`capped` until `health_until`, the rest until paired again). */
export const channelHealthStates = ["ok", "warming", "cooling", "capped", "restricted", "logged_out", "banned"] as const;

/** The `number_health` settings a channel may override (null or absent: the tenant's value). */
export interface ChannelLimits {
  daily_message_cap?: number | null;
  warmup_days?: number | null;
  warmup_first_day_cap?: number | null;
  min_send_gap_seconds?: number | null;
  group_create_cap?: number | null;
}

export const channels = pgTable(
  "channels",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    status: text("status", { enum: ["connecting", "connected", "disconnected"] }).notNull(),
    /** The provider's own name for the connection (an Evolution instance, a simulator device). */
    providerRef: text("provider_ref").notNull(),
    /**
     * Retired (issue 24): the former extra pause after a rate-limit signal. A rate limit now cools the number
     * (health_state `cooling`); unused, kept until a migration drops it (docs/decisions.md#several-numbers-per-group-dispatch).
     */
    slowdownMs: integer("slowdown_ms").notNull().default(0),
    slowdownAt: ts("slowdown_at"),
    // ---- the number's health and budget (CONTRACT §7; docs/numbers.md) ----
    /** The channel's own number, digits with country code; null until paired. */
    phone: text("phone"),
    /** The first pairing: day 1 of the warm-up ramp (Brasília days). */
    firstPairedAt: ts("first_paired_at"),
    healthState: text("health_state", { enum: channelHealthStates }).notNull().default("ok"),
    /** Why the state is what it is (a disconnect reason, "rate-overlimit", "daily_cap"); null for ok. */
    healthReason: text("health_reason"),
    /** When the state began. */
    healthSince: ts("health_since"),
    /** When a `cooling` or `capped` state ends (sends may go again from then). */
    healthUntil: ts("health_until"),
    /** The last cool-down's length (1 min, doubling on each signal within an hour, at most 60 min). */
    coolingMs: integer("cooling_ms").notNull().default(0),
    /** The platform's last rate-limit answer (a quiet hour after it, the cool-down starts again at 1 min). */
    rateLimitedAt: ts("rate_limited_at"),
    /** The Brasília day (YYYY-MM-DD) the counters below belong to; another day reads them as 0. */
    usageDay: text("usage_day"),
    /** Sends (campaign messages and monitoring copies) taken by claims on `usage_day`. */
    sentToday: integer("sent_today").notNull().default(0),
    /** Groups created (launches) on `usage_day`. */
    groupsCreatedToday: integer("groups_created_today").notNull().default(0),
    /**
     * A group creation through this number failed (not a refusal of the request): no creation through it, for any
     * launch, before this (the failing launch's backoff: server/launches/launch/group-creators.ts); null when none waits.
     */
    createRetryAt: ts("create_retry_at"),
    /** min_send_gap_seconds across every campaign of the number: no send of this channel is claimed before this. */
    nextSendAt: ts("next_send_at"),
    /** Group actions (docs/groups.md#how-it-runs): no group action of this channel is claimed before this (one every 2 s, its gap honoured). */
    nextGroupActionAt: ts("next_group_action_at"),
    /** Per-channel budget overrides (`number_health` fields; absent or null: the tenant's value). */
    limits: jsonb("limits").$type<ChannelLimits>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [index("channels_tenant_idx").on(t.tenantId, t.createdAt)],
);

export const segments = pgTable(
  "segments",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [index("segments_tenant_idx").on(t.tenantId, t.createdAt)],
);

export const segmentChannels = pgTable(
  "segment_channels",
  {
    segmentId: text("segment_id")
      .notNull()
      .references(() => segments.id, { onDelete: "cascade" }),
    channelId: text("channel_id")
      .notNull()
      .references(() => channels.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
  },
  (t) => [primaryKey({ columns: [t.segmentId, t.channelId] })],
);

export const segmentGroups = pgTable(
  "segment_groups",
  {
    segmentId: text("segment_id")
      .notNull()
      .references(() => segments.id, { onDelete: "cascade" }),
    groupId: text("id_group").notNull(),
    /** The first of the segment's channels that reaches this group (segment_group_channels holds them all). */
    channelId: text("channel_id")
      .notNull()
      .references(() => channels.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    position: integer("position").notNull(),
  },
  (t) => [primaryKey({ columns: [t.segmentId, t.groupId] })],
);

/**
 * Every channel of the segment that reaches a group (its number is a participant; an admin where only admins
 * post), CONTRACT §7 "One group, several channels": fan-out spreads deliveries over them, failover moves a
 * delivery to another of them.
 */
export const segmentGroupChannels = pgTable(
  "segment_group_channels",
  {
    segmentId: text("segment_id")
      .notNull()
      .references(() => segments.id, { onDelete: "cascade" }),
    groupId: text("id_group").notNull(),
    channelId: text("channel_id")
      .notNull()
      .references(() => channels.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.segmentId, t.groupId, t.channelId] }), index("segment_group_channels_channel_idx").on(t.channelId)],
);

export const monitoringGroups = pgTable("monitoring_groups", {
  segmentId: text("segment_id")
    .primaryKey()
    .references(() => segments.id, { onDelete: "cascade" }),
  channelId: text("channel_id")
    .notNull()
    .references(() => channels.id, { onDelete: "cascade" }),
  groupId: text("id_group").notNull(),
  name: text("name").notNull(),
  createdAt: createdAt(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/**
 * A tenant's settings as last saved (the whole object, sections dispatch_rates, preferences, queue,
 * sending_schedule). No row means the defaults; server/settings/get-settings.ts merges the stored
 * object over server/settings/defaults.ts, so a field added later reads as its default.
 */
export const tenantSettings = pgTable("tenant_settings", {
  tenantId: text("tenant_id")
    .primaryKey()
    .references(() => tenants.id, { onDelete: "cascade" }),
  settings: jsonb("settings").notNull(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** sha256 of method, path and canonical body: a different request under the same key is refused. */
    fingerprint: text("fingerprint").notNull(),
    state: text("state", { enum: ["in_progress", "done"] }).notNull(),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    /** An in-progress claim older than this was abandoned by a crashed request and may be taken over. */
    lockedUntil: ts("locked_until").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.key] }), index("idempotency_created_idx").on(t.createdAt)],
);

/** Buckets of rate-limiter-flexible's RateLimiterDrizzle (columns named as it expects). */
export const rateLimitBuckets = pgTable("rate_limit_buckets", {
  key: text("key").primaryKey(),
  points: integer("points").notNull().default(0),
  expire: ts("expire"),
});

/** Events for webhooks, written in the same transaction as the change that causes them. */
export const outboxEvents = pgTable(
  "outbox_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    type: text("type", { enum: ["campaign_status", "campaign_progress", "channel_status", "group_activity"] }).notNull(),
    payload: jsonb("payload").notNull(),
    createdAt: createdAt(),
    /** Set when server/webhooks/fan-out-events.ts turned the event into deliveries (or found no URL). */
    fannedOutAt: ts("fanned_out_at"),
  },
  (t) => [index("outbox_tenant_idx").on(t.tenantId, t.id), index("outbox_unfanned_idx").on(t.id).where(sql`fanned_out_at is null`)],
);

// --- Simulated messaging platform (used only while MESSAGING_PROVIDER=simulator) ---

export const simulatorChannels = pgTable("simulator_channels", {
  channelId: text("channel_id").primaryKey(),
  /** false after POST /api/simulator/channels/{id}/state {"connected": false}. */
  online: boolean("online").notNull().default(true),
  pairsAt: ts("pairs_at").notNull(),
  paired: boolean("paired").notNull().default(false),
  /**
   * Why the platform took the number off (`{"health": …}`: restricted, banned, logged_out); null otherwise. The
   * channel is offline while it is set; `{"connected": true}` (the number paired again) clears it.
   */
  health: text("health", { enum: ["restricted", "banned", "logged_out"] }),
  /** `{"rate_limit_per_minute": N}`: sends past N in a rolling minute are refused as rate-limited; null: no limit. */
  rateLimitPerMinute: integer("rate_limit_per_minute"),
});

/** Injected send failures (POST /api/simulator/groups/{id}/failures), per channel and group of the caller. */
export const simulatorFailures = pgTable(
  "simulator_failures",
  {
    channelId: text("id_channel").notNull(),
    groupId: text("id_group").notNull(),
    failNext: integer("fail_next").notNull().default(0),
    always: boolean("always").notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.groupId] })],
);

/** Per-send latency (POST /api/simulator/latency): per tenant, applied to sends on that tenant's channels. */
export const simulatorLatency = pgTable("simulator_latency", {
  tenantId: text("tenant_id")
    .primaryKey()
    .references(() => tenants.id, { onDelete: "cascade" }),
  latencyMs: integer("latency_ms").notNull().default(0),
});

export const simulatorMessages = pgTable(
  "simulator_messages",
  {
    deliveryKey: text("delivery_key").primaryKey(),
    messageId: text("message_id").notNull(),
    channelId: text("id_channel").notNull(),
    groupId: text("id_group").notNull(),
    campaignId: text("id_campaign"),
    messageType: text("message_type").notNull(),
    text: text("text"),
    mediaUrl: text("media_url"),
    fileName: text("file_name"),
    cards: jsonb("cards"),
    /** A poll's {question, options, multiple_answers} (message_type poll); null otherwise. */
    poll: jsonb("poll"),
    mentionAll: boolean("mention_all").notNull().default(false),
    /** The participants the message mentions (a launch's welcome); null: none. */
    mentions: jsonb("mentions").$type<string[]>(),
    linkPreview: boolean("link_preview").notNull().default(false),
    sentAt: ts("sent_at").notNull().default(sql`now()`),
    readAt: ts("read_at"),
  },
  (t) => [index("simulator_messages_channel_idx").on(t.channelId, t.sentAt)],
);

// --- Campaigns and their per-group deliveries ---

/** A campaign's counters per channel: channel id → [total, sent, failed] (campaigns.channel_counts). */
export type ChannelCounts = Record<string, [total: number, sent: number, failed: number]>;

export const campaignStatuses = ["pending", "sending", "paused", "completed", "failed", "canceled"] as const;
/** Why a campaign is paused (docs/dispatch.md). */
export const pauseReasons = ["user", "schedule", "channel_offline", "channel_limits", "send_errors"] as const;
export const deliveryStates = ["pending", "sending", "sent", "failed"] as const;
/** What a campaign sends: a text, one media message, a carousel or a poll (server/campaigns/schema.ts builds its zod enums from these). */
export const messageTypes = ["text", "image", "video", "audio", "document", "carousel", "poll"] as const;

export const campaigns = pgTable(
  "campaigns",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    segmentId: text("segment_id")
      .notNull()
      .references(() => segments.id),
    name: text("name").notNull(),
    status: text("status", { enum: campaignStatuses }).notNull(),
    /** Why a paused campaign is paused: `user` waits for resume; the others resume by themselves. */
    pauseReason: text("pause_reason", { enum: pauseReasons }),
    messageType: text("message_type", { enum: messageTypes }).notNull(),
    /** {message, media_url?, file_name?, cards?}: what every group receives. */
    content: jsonb("content").notNull(),
    linkPreview: boolean("link_preview"),
    mentionAll: boolean("mention_all").notNull().default(false),
    scheduledAt: ts("scheduled_at"),
    /** Counters kept in the transaction of every delivery change, so info-campaign reads one row. */
    total: integer("total").notNull(),
    sent: integer("sent").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    /** When the engine should look at this campaign again. */
    nextRunAt: ts("next_run_at").notNull(),
    /** A worker holds the campaign while it runs one step; an expired lease is free. */
    leaseUntil: ts("lease_until"),
    /** Consecutive failed sends per channel: 10 on one channel pause the campaign. */
    failureStreaks: jsonb("failure_streaks").notNull().default({}),
    /**
     * The channels its segment groups' deliveries were given at fan-out, and those failover moved some to
     * (CONTRACT §7): with one, info-campaign's per-channel split is the counters; with more, it is counted.
     */
    channelIds: jsonb("channel_ids").$type<string[]>().notNull().default([]),
    /**
     * The counters per channel, `{channel id: [total, sent, failed]}` (the segment's groups only, as total/sent/failed),
     * kept by the same statements that keep those (fan-out, sent and failed marks, resend, failover's moves), so
     * info-campaign's `channels` is read, never counted (server/dispatch/channel-counts.ts).
     */
    channelCounts: jsonb("channel_counts").$type<ChannelCounts>().notNull().default({}),
    lastProgressAt: ts("last_progress_at"),
    startedAt: ts("started_at"),
    finishedAt: ts("finished_at"),
    /** Set when it finishes: the next queued campaign starts no earlier (min/max_campaign_interval). */
    queueReadyAt: ts("queue_ready_at"),
    /** The series (repeating campaign) this campaign is one run of; null for a one-off campaign (docs/series.md). */
    seriesId: text("series_id"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [index("campaigns_tenant_idx").on(t.tenantId, t.createdAt), index("campaigns_due_idx").on(t.status, t.nextRunAt)],
);

export const deliveries = pgTable(
  "deliveries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    // No foreign keys: rows are written only by the campaign's fan-out, from rows read in the same
    // transaction, and never outlive their campaign; the per-row FK checks were a third of a 10k fan-out.
    campaignId: text("campaign_id").notNull(),
    groupId: text("id_group").notNull(),
    channelId: text("channel_id").notNull(),
    groupName: text("group_name").notNull(),
    isMonitoring: boolean("is_monitoring").notNull().default(false),
    position: integer("position").notNull(),
    state: text("state", { enum: deliveryStates }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    /** A failed attempt is retried no earlier than this. */
    notBefore: ts("not_before"),
    /** A `sending` row whose lease expired was in flight when its worker died: reconcile it. */
    leaseUntil: ts("lease_until"),
    /** Failover (CONTRACT §7): the channel this delivery was moved from, and when (null: never moved). */
    movedFrom: text("moved_from"),
    movedAt: ts("moved_at"),
    providerMessageId: text("provider_message_id"),
    /**
     * A `sending` row whose answer was lost (or whose worker died): when that attempt started. It is
     * looked up (provider.findSent) once its lease expires; `lookups` counts the negative look-ups.
     */
    outcomeUnknownSince: ts("outcome_unknown_since"),
    lookups: integer("lookups").notNull().default(0),
    error: text("error"),
    sentAt: ts("sent_at"),
    ackedAt: ts("acked_at"),
    readAt: ts("read_at"),
    updatedAt: ts("updated_at"),
  },
  (t) => [
    // Rows past their first claim only (sending, sent, failed): what is looked up by campaign and group (receipts, votes,
    // resend, reconciliation by key) is a message that went out, so the fan-out's rows, all pending, skip this index (a
    // third of a 10,000-group create's index work). Two rows of one campaign and group can never both leave `pending`
    // (none is sent twice); the fan-out writes each group once (segment_groups' key, the monitoring copy's guard).
    uniqueIndex("deliveries_campaign_group_uq").on(t.campaignId, t.groupId).where(sql`state <> 'pending'`),
    // Open rows only (pending or in flight): claims walk it in order; sent and failed rows leave it.
    index("deliveries_open_idx").on(t.campaignId, t.position).where(sql`state in ('pending', 'sending')`),
    // In-flight rows only (a batch per campaign at most): reconciliation finds expired leases here.
    index("deliveries_in_flight_idx").on(t.campaignId, t.leaseUntil).where(sql`state = 'sending'`),
    // The monitoring copy (at most one per campaign): info-campaign reports it apart without a walk over the campaign.
    index("deliveries_monitoring_idx").on(t.campaignId).where(sql`is_monitoring`),
  ],
);

/**
 * A poll campaign's votes (docs/polls.md): one row per (campaign, group, voter) holding the voter's current
 * choice (a later vote replaces it; an empty choice is a vote taken back), so a vote the platform reports
 * twice is counted once. `votedAt` is the platform's time of the vote: an older report never overwrites a newer.
 */
export const pollVotes = pgTable(
  "poll_votes",
  {
    campaignId: text("campaign_id").notNull(),
    groupId: text("id_group").notNull(),
    /** The platform's id of the person (a phone number or LID on Evolution; a synthetic id on the simulator). */
    voter: text("voter").notNull(),
    /** The texts of the options chosen. */
    options: jsonb("options").$type<string[]>().notNull(),
    votedAt: ts("voted_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.groupId, t.voter] })],
);

// ---- OAuth partner apps ----

export const partnerScopes = ["statistics:read", "campaigns:read", "settings:read"] as const;

/** A third-party app registered by a tenant (its developer); `id` is the public client_id. */
export const partnerApps = pgTable(
  "partner_apps",
  {
    id: text("id").primaryKey(),
    /** The developer's tenant, who registered the app (not the tenants who authorize it). */
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    logoUrl: text("logo_url").notNull().default(""),
    homepageUrl: text("homepage_url").notNull().default(""),
    privacyUrl: text("privacy_url").notNull().default(""),
    /** The app's own webhook endpoint: campaign events of the tenants that authorized it (server/webhooks). */
    webhookUrl: text("webhook_url"),
    /** Signs the app's webhooks (Standard Webhooks `whsec_…`), encrypted; made on first use. */
    webhookSecretEncrypted: text("webhook_secret_encrypted"),
    /** The secret before the last rotation, still signing beside the new one until it expires. */
    previousWebhookSecretEncrypted: text("previous_webhook_secret_encrypted"),
    previousWebhookSecretExpiresAt: ts("previous_webhook_secret_expires_at"),
    redirectUris: jsonb("redirect_uris").$type<string[]>().notNull(),
    requestedScopes: jsonb("requested_scopes").$type<string[]>().notNull(),
    /** What users may grant: auto-approved scopes at registration, the rest by the operator. */
    approvedScopes: jsonb("approved_scopes").$type<string[]>().notNull(),
    clientType: text("client_type", { enum: ["public", "confidential"] }).notNull(),
    /** SHA-256 of the client secret (confidential apps only). */
    clientSecretHash: text("client_secret_hash"),
    secretRotatedAt: ts("secret_rotated_at"),
    createdAt: createdAt(),
  },
  (t) => [index("partner_apps_tenant_idx").on(t.tenantId)],
);

/** A pending authorize request shown on the consent page; the decision must match one. */
export const oauthAuthorizationRequests = pgTable(
  "oauth_authorization_requests",
  {
    id: text("id").primaryKey(),
    appId: text("app_id")
      .notNull()
      .references(() => partnerApps.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** SHA-256 of the request's fields, so the decision is bound to exactly what was shown. */
    fingerprint: text("fingerprint").notNull(),
    expiresAt: ts("expires_at").notNull(),
    consumedAt: ts("consumed_at"),
    createdAt: createdAt(),
  },
  (t) => [index("oauth_requests_user_idx").on(t.userId, t.fingerprint)],
);

/** An authorization code (hashed): single use, 60 s. `grantId` is set when it is exchanged. */
export const oauthCodes = pgTable("oauth_codes", {
  codeHash: text("code_hash").primaryKey(),
  appId: text("app_id")
    .notNull()
    .references(() => partnerApps.id, { onDelete: "cascade" }),
  tenantId: text("tenant_id")
    .notNull()
    .references(() => tenants.id, { onDelete: "cascade" }),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  redirectUri: text("redirect_uri").notNull(),
  scopes: jsonb("scopes").$type<string[]>().notNull(),
  codeChallenge: text("code_challenge"),
  expiresAt: ts("expires_at").notNull(),
  usedAt: ts("used_at"),
  grantId: text("grant_id"),
  createdAt: createdAt(),
});

/** One authorization of an app by a tenant: the family of every token issued from one code. */
export const oauthGrants = pgTable(
  "oauth_grants",
  {
    id: text("id").primaryKey(),
    appId: text("app_id")
      .notNull()
      .references(() => partnerApps.id, { onDelete: "cascade" }),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    scopes: jsonb("scopes").$type<string[]>().notNull(),
    createdAt: createdAt(),
    revokedAt: ts("revoked_at"),
  },
  (t) => [index("oauth_grants_tenant_idx").on(t.tenantId, t.appId)],
);

/** Access and refresh tokens (hashed). A rotated refresh token is revoked; presenting it again revokes the grant. */
export const oauthTokens = pgTable(
  "oauth_tokens",
  {
    id: text("id").primaryKey(),
    grantId: text("grant_id")
      .notNull()
      .references(() => oauthGrants.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["access", "refresh"] }).notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    scopes: jsonb("scopes").$type<string[]>().notNull(),
    expiresAt: ts("expires_at").notNull(),
    revokedAt: ts("revoked_at"),
    createdAt: createdAt(),
  },
  (t) => [index("oauth_tokens_grant_idx").on(t.grantId)],
);

// ---- evolution (Evolution API v2 provider) ----

/** One Evolution instance per channel: its webhook secret, last known state, pairing data and group cache. */
export const evolutionInstances = pgTable("evolution_instances", {
  channelId: text("channel_id")
    .primaryKey()
    .references(() => channels.id, { onDelete: "cascade" }),
  instanceName: text("instance_name").notNull().unique(),
  /** SHA-256 of the per-instance secret carried in the webhook URL (the secret itself is never stored). */
  webhookTokenHash: text("webhook_token_hash").notNull(),
  /** Evolution's connection state: `open`, `connecting` or `close`. */
  state: text("state").notNull().default("connecting"),
  /** Once paired, a lost connection is `disconnected`, not `connecting` again. */
  pairedOnce: boolean("paired_once").notNull().default(false),
  /** The latest QR code (data URL) and pairing code the gateway gave, for the dashboard. */
  qrCode: text("qr_code"),
  pairingCode: text("pairing_code"),
  pairingUpdatedAt: ts("pairing_updated_at"),
  /** When a pairing code was last asked for: until one arrives (the gateway answers before it has it), the code is pending. */
  pairingRequestedAt: ts("pairing_requested_at"),
  groups: jsonb("groups").$type<{ id_group: string; name: string }[]>(),
  groupsFetchedAt: ts("groups_fetched_at"),
  /**
   * The number's LID (`<digits>@lid`) and the phone number (digits) it belongs to: WhatsApp may list us by
   * LID in a group, and the gateway never says our LID, so it is learned where both appear together.
   */
  ownLid: text("own_lid"),
  ownLidPhone: text("own_lid_phone"),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/**
 * Every group creation asked of Evolution (docs/evolution.md#groups-for-launches), written before the
 * POST: a creation whose answer was lost or failed after WhatsApp made the group is looked up, never
 * repeated blindly. `key` is the caller's (a launch's slot); `state` `pending` until the group is found
 * (`made`, with `groupId`) or a listing that started at or after `settlesAt` proves it absent (`absent`).
 */
export const evolutionGroupCreations = pgTable(
  "evolution_group_creations",
  {
    channelId: text("channel_id").notNull(),
    key: text("key").notNull(),
    subject: text("subject").notNull(),
    state: text("state").$type<"pending" | "made" | "absent">().notNull().default("pending"),
    groupId: text("id_group"),
    startedAt: ts("started_at").notNull(),
    /** A listing that started at or after this shows the group if it was made (a lost answer: the gateway may still be creating it). */
    settlesAt: ts("settles_at").notNull(),
    /** The gateway's error text, if any (a `rate-overlimit` in it means WhatsApp throttled the number). */
    error: text("error"),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.channelId, t.key] }),
    index("evolution_group_creations_pending_idx").on(t.channelId, t.subject).where(sql`state = 'pending'`),
    index("evolution_group_creations_group_idx").on(t.channelId, t.groupId),
  ],
);

/**
 * Every message sent through Evolution, keyed by the service's delivery key and part (a carousel
 * fallback sends one message per card). `requestedId` is the message id we asked the gateway to use,
 * derived from the key, so an unknown outcome can be looked up with /chat/findMessages.
 */
export const evolutionMessages = pgTable(
  "evolution_messages",
  {
    deliveryKey: text("delivery_key").notNull(),
    part: integer("part").notNull(),
    channelId: text("channel_id").notNull(),
    groupId: text("id_group").notNull(),
    requestedId: text("requested_id").notNull(),
    /** The gateway's key.id once it accepted the message; null while the outcome is unknown. */
    messageId: text("message_id"),
    sentAt: ts("sent_at"),
    /** SHA-256 of the part's kind and text/caption, to recognise it on the gateway; null: nothing to recognise. */
    fingerprint: text("fingerprint"),
    /** The request carried `requestedId` as `messageId` (gateways ≥ 2.4.0 keep it for text and media). */
    idRequested: boolean("id_requested").notNull().default(false),
    /** The latest POST of this part. */
    attemptedAt: ts("attempted_at"),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.deliveryKey, t.part] }),
    index("evolution_messages_message_idx").on(t.messageId),
    // Unsettled parts only: a `send.message` event is matched against these.
    index("evolution_messages_unsettled_idx").on(t.channelId, t.groupId).where(sql`message_id is null`),
  ],
);

// ---- integrations ----

/** Marketplace credentials, one integration per type per tenant; `credentials` is encrypted JSON (secret-box). */
export const integrations = pgTable(
  "integrations",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    label: text("label").notNull(),
    credentials: text("credentials").notNull(),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.type] })],
);

// ---- webhooks ----

/**
 * A tenant's webhook configuration: the three URLs (null = disabled) and the signing secret, encrypted at
 * rest (server/crypto/secret-box.ts). After a rotation the previous secret keeps signing beside the new
 * one until `previousSecretExpiresAt`, so receivers can switch without losing events.
 */
export const webhookConfigs = pgTable("webhook_configs", {
  tenantId: text("tenant_id")
    .primaryKey()
    .references(() => tenants.id, { onDelete: "cascade" }),
  campaignStatusUrl: text("campaign_status_url"),
  campaignProgressUrl: text("campaign_progress_url"),
  channelStatusUrl: text("channel_status_url"),
  groupActivityUrl: text("group_activity_url"),
  secretEncrypted: text("secret_encrypted").notNull(),
  previousSecretEncrypted: text("previous_secret_encrypted"),
  previousSecretExpiresAt: ts("previous_secret_expires_at"),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

export const webhookDeliveryStates = ["pending", "delivered", "failed", "canceled"] as const;

/**
 * One event for one target: `tenant` (the account's own URLs) or `app:<client_id>` (a partner app the
 * tenant authorized; `tenantId` is still the tenant whose event it is). Deliveries sharing an `orderingKey`
 * (type + campaign or channel) go out one at a time in `eventId` order.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    eventId: bigint("event_id", { mode: "number" }).notNull(),
    target: text("target").notNull().default("tenant"),
    type: text("type", { enum: ["campaign_status", "campaign_progress", "channel_status", "group_activity"] }).notNull(),
    orderingKey: text("ordering_key").notNull(),
    /** The `webhook-id` header: the same on every attempt of this delivery. */
    messageId: text("message_id").notNull(),
    payload: jsonb("payload").notNull(),
    state: text("state", { enum: webhookDeliveryStates }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at").notNull(),
    leaseUntil: ts("lease_until"),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    createdAt: createdAt(),
    finishedAt: ts("finished_at"),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_target_uq").on(t.eventId, t.target),
    index("webhook_deliveries_due_idx").on(t.tenantId, t.nextAttemptAt).where(sql`state = 'pending'`),
    // Claims walk a tenant's pending deliveries in event order and stop at the batch size.
    index("webhook_deliveries_claim_idx").on(t.tenantId, t.eventId).where(sql`state = 'pending'`),
    index("webhook_deliveries_order_idx").on(t.tenantId, t.target, t.orderingKey, t.eventId).where(sql`state = 'pending'`),
    index("webhook_deliveries_tenant_idx").on(t.tenantId, t.id),
  ],
);

/** Every HTTP attempt, test sends included (delivery null): shown in the dashboard's delivery log. */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    deliveryId: bigint("delivery_id", { mode: "number" }).references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    url: text("url").notNull(),
    isTest: boolean("is_test").notNull().default(false),
    attemptedAt: ts("attempted_at").notNull(),
    /** The receiver's HTTP status; 0 when it could not be reached (refused, time-out, blocked address). */
    status: integer("status").notNull(),
    durationMs: integer("duration_ms").notNull(),
    error: text("error"),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId), index("webhook_attempts_tenant_idx").on(t.tenantId, t.attemptedAt)],
);

// ---- launches (docs/decisions.md#launches): the join link that fills groups ----

export const launchStatuses = ["active", "paused", "closed"] as const;
export const launchGroupStatuses = ["filling", "reserve", "full", "broken"] as const;

/** `{name}` holds `{n}` (the group's position); `admins` are phone numbers promoted in every group. */
/** A launch's welcome (CONTRACT §8 "Welcome"; docs/launches.md#welcome): the message its groups' newcomers get, in batches. */
export interface LaunchWelcome {
  text: string;
  after_joins: number;
  max_wait_minutes: number;
  mention_new: boolean;
}

export interface LaunchGroupTemplate {
  name: string;
  description?: string;
  image_url?: string;
  admins_only: boolean;
  admins: string[];
}

/** Buyer removal (docs/launches.md#buyers-leave-the-groups): remove a buyer from the launch's groups on an approved purchase. */
export interface LaunchBuyerSettings {
  remove_from_groups: boolean;
  /** Nothing removed and no event: info-launch's buyers_in_groups shows who would be. */
  dry_run: boolean;
}

/** Moderation of a launch's groups (CONTRACT §9; docs/moderation.md). */
export interface LaunchModerationSettings {
  mode: "off" | "shadow" | "enforce";
  block_links: boolean;
  allowed_domains: string[];
  banned_words: string[];
  max_messages_per_minute: number | null;
  strikes_to_remove: number;
  country_codes: string[] | null;
}

export const defaultModeration: LaunchModerationSettings = {
  mode: "off",
  block_links: true,
  allowed_domains: [],
  banned_words: [],
  max_messages_per_minute: null,
  strikes_to_remove: 3,
  country_codes: null,
};

export const launches = pgTable(
  "launches",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Public, unique across the service: the join link is `{app_url}/g/{slug}`. */
    slug: text("slug").notNull().unique(),
    /** The segment created with the launch; it always holds all the launch's groups. */
    segmentId: text("segment_id")
      .notNull()
      .references(() => segments.id),
    /** The numbers that create and administer the groups, in order (a new group is made by the first connected one). */
    channelIds: jsonb("channel_ids").$type<string[]>().notNull(),
    groupTemplate: jsonb("group_template").$type<LaunchGroupTemplate>().notNull(),
    capacity: integer("capacity").notNull().default(1000),
    margin: integer("margin").notNull().default(20),
    autoCreate: boolean("auto_create").notNull().default(true),
    reserve: integer("reserve").notNull().default(1),
    staffNumbers: jsonb("staff_numbers").$type<string[]>().notNull().default([]),
    status: text("status", { enum: launchStatuses }).notNull().default("active"),
    closedUrl: text("closed_url"),
    /** Group creation's backoff (CONTRACT §7): no creation before this; failures in a row (5 min doubling to 1 h). */
    createRetryAt: ts("create_retry_at"),
    createFailures: integer("create_failures").notNull().default(0),
    /**
     * The channel of a creation whose outcome is unknown (the platform may have made the group): the next
     * attempt goes through it, so that the provider looks that group up before another is made (never an orphan
     * beside a duplicate made through another number). Null otherwise.
     */
    createChannelId: text("create_channel_id"),
    /**
     * The last Brasília day whose clicks are folded into launch_click_days / launch_click_day_counts
     * (server/launches/link/fold-clicks.ts): figures of days up to it are read from the fold, later days from
     * launch_clicks. Null: nothing folded yet.
     */
    clicksFoldedThrough: text("clicks_folded_through"),
    /**
     * Traffic alert (docs/launches.md#traffic-alerts): `min_clicks` counted clicks within the last `minutes` and no join
     * send `traffic_alert`; 0 minutes turns it off. `lastAlertAt`: when the latest was sent (at most one an hour, set by
     * a conditional UPDATE); `lastAlertClicks`: its click count, for the dashboard's banner.
     */
    alertMinutes: integer("alert_minutes").notNull().default(20),
    alertMinClicks: integer("alert_min_clicks").notNull().default(30),
    lastAlertAt: ts("last_alert_at"),
    lastAlertClicks: integer("last_alert_clicks"),
    /**
     * Meta Conversions API (docs/launches.md#metas-conversions-api): each counted click sends `metaEventName` to the
     * pixel (dataset) `metaPixelId`; null: off. The access token is encrypted at rest (server/crypto/secret-box.ts) and
     * never answered; `metaTestEventCode` sends the events to Events Manager's Test Events tab.
     */
    metaPixelId: text("meta_pixel_id"),
    metaAccessToken: text("meta_access_token"),
    metaEventName: text("meta_event_name"),
    metaTestEventCode: text("meta_test_event_code"),
    /** The welcome of its groups' newcomers (launch_welcomes); null: off. */
    welcome: jsonb("welcome").$type<LaunchWelcome>(),
    /** When the welcome was turned on: joins before it are never welcomed. */
    welcomeSince: ts("welcome_since"),
    moderation: jsonb("moderation").$type<LaunchModerationSettings>().notNull().default(defaultModeration),
    buyers: jsonb("buyers").$type<LaunchBuyerSettings>().notNull().default({ remove_from_groups: false, dry_run: false }),
    /**
     * info-launch's `buyers_in_groups`, kept (docs/launches.md#buyers-leave-the-groups): `buyersStamp` is bumped by the
     * statements that change its inputs (participants joining, leaving or moving to their number; a LID paired; a
     * purchase or refund recorded), `buyersCountedKey` says which stamp (and protected numbers) `buyersInGroupsCount` was
     * counted at; a GET whose key differs counts again (server/launches/funnel/buyers-count.ts).
     */
    buyersStamp: bigint("buyers_stamp", { mode: "number" }).notNull().default(0),
    buyersCountedKey: text("buyers_counted_key"),
    buyersInGroupsCount: integer("buyers_in_groups_count"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [index("launches_tenant_idx").on(t.tenantId, t.createdAt)],
);

/**
 * Every slug a launch ever had, its current one included (docs/decisions.md#launches, "Slugs"): the
 * primary key keeps a slug its launch's forever, across tenants, so an ad still carrying an old link
 * never lands in another launch's group. The link finds a launch by any of its slugs.
 */
export const launchSlugs = pgTable(
  "launch_slugs",
  {
    slug: text("slug").primaryKey(),
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [index("launch_slugs_launch_idx").on(t.launchId)],
);

/** The launch's groups in order; `position` starts at 1 and is the `{n}` of the template. */
export const launchGroups = pgTable(
  "launch_groups",
  {
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    groupId: text("id_group").notNull(),
    channelId: text("channel_id")
      .notNull()
      .references(() => channels.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    inviteUrl: text("invite_url"),
    /** Everyone in the group (staff included); fullness is `members >= capacity - margin`. */
    members: integer("members").notNull().default(0),
    clicks: integer("clicks").notNull().default(0),
    status: text("status", { enum: launchGroupStatuses }).notNull(),
    adopted: boolean("adopted").notNull().default(false),
    brokenReason: text("broken_reason"),
    fullAt: ts("full_at"),
    inviteCheckedAt: ts("invite_checked_at"),
    /** When the latest participant event of the group arrived: `members` is corrected from the platform's count only 10 minutes after it. */
    lastEventAt: ts("last_event_at"),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.launchId, t.position] }),
    uniqueIndex("launch_groups_group_uq").on(t.launchId, t.groupId),
    index("launch_groups_channel_group_idx").on(t.channelId, t.groupId),
  ],
);

/**
 * A launch channel that is not in one of the launch's groups although the launch wanted it there (CONTRACT §7
 * "One group, several channels"; docs/launches.md#several-numbers): the platform refused its add or its
 * promotion, dropped it at the creation, or refused a send as "not in the group". It does not reach the group
 * (no segment_group_channels row) while this row exists; the launch pass adds and promotes it again at
 * `retry_at` (5 min doubling to 1 h, at most groupJoinRetry.maxAttempts attempts; null: no more). The row goes
 * when the platform lists the number in the group (an admin where only admins post).
 */
export const launchGroupJoins = pgTable(
  "launch_group_joins",
  {
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    groupId: text("id_group").notNull(),
    channelId: text("channel_id")
      .notNull()
      .references(() => channels.id, { onDelete: "cascade" }),
    /** Why it is not in: the platform's status for it (`403`, `408`…), `not_added`, `not_admin`, `not_in_group`, `unconfirmed`, `no_number`. */
    reason: text("reason").notNull(),
    /** Adds (and promotions) tried again since it failed. */
    attempts: integer("attempts").notNull().default(0),
    /** When the next add is due; null: the attempts are spent (shown as failed, never tried again by itself). */
    retryAt: ts("retry_at"),
    since: ts("since").notNull(),
  },
  (t) => [primaryKey({ columns: [t.launchId, t.groupId, t.channelId] }), index("launch_group_joins_retry_idx").on(t.retryAt)],
);

/** One counted visit of the join link (bots and visits to a paused or closed launch are not stored). */
export const launchClicks = pgTable(
  "launch_clicks",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    at: ts("at").notNull(),
    /** The Brasília day of the click, `YYYY-MM-DD`. */
    day: text("day").notNull(),
    position: integer("position"),
    utmSource: text("utm_source"),
    utmMedium: text("utm_medium"),
    utmCampaign: text("utm_campaign"),
    /** The ad (utm_content) and keyword (utm_term): lower case, trimmed, at most 200 characters, as the other UTMs. */
    utmContent: text("utm_content"),
    utmTerm: text("utm_term"),
    /** Whether the visit carried Meta's `fbclid` / Google's `gclid` (their values are not kept). */
    fbclid: boolean("fbclid").notNull().default(false),
    gclid: boolean("gclid").notNull().default(false),
    /** A salted hash of the client address, the salt changing every day: distinct visitors per day, no raw IP. */
    visitor: text("visitor").notNull(),
  },
  // `at`: the retention step finds rows past 90 days without reading every launch's (server/launches/link/fold-clicks.ts).
  (t) => [index("launch_clicks_launch_day_idx").on(t.launchId, t.day), index("launch_clicks_at_idx").on(t.at)],
);

export const metaEventStates = ["pending", "sent", "failed", "canceled"] as const;

/**
 * The Meta Conversions API outbox (server/launches/funnel/deliver-meta-events.ts): one server event per counted click of
 * a launch with `meta_pixel_id`, written in the click's own statement and sent by the `meta-events` job, retried
 * on the webhooks' schedule. `payload` is the event as Meta receives it; the visitor's address and user agent
 * are removed from it once the event is finished (sent, failed or canceled).
 */
export const metaEvents = pgTable(
  "meta_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    /** The event's `event_id` (Meta deduplicates with the browser pixel's event of the same id and name). */
    eventId: text("event_id").notNull().unique(),
    payload: jsonb("payload").notNull(),
    state: text("state", { enum: metaEventStates }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at").notNull(),
    leaseUntil: ts("lease_until"),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    /** The click's time (the event's `event_time`). */
    createdAt: createdAt(),
    finishedAt: ts("finished_at"),
  },
  (t) => [
    index("meta_events_due_idx").on(t.nextAttemptAt).where(sql`state = 'pending'`),
    index("meta_events_launch_idx").on(t.launchId, t.id),
    index("meta_events_finished_idx").on(t.finishedAt).where(sql`finished_at is not null`),
  ],
);

/** A folded day of a launch's clicks (server/launches/link/fold-clicks.ts): the day's clicks and distinct visitors. */
export const launchClickDays = pgTable(
  "launch_click_days",
  {
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    /** A Brasília day, `YYYY-MM-DD`. */
    day: text("day").notNull(),
    clicks: integer("clicks").notNull(),
    uniqueClicks: integer("unique_clicks").notNull(),
  },
  (t) => [primaryKey({ columns: [t.launchId, t.day] })],
);

/**
 * A folded day's clicks per group (`position`) and `utm_source`, written with its launch_click_days row.
 * Past the day's 100 largest sources the rest is kept as `utm_source` "(outros)".
 */
export const launchClickDayCounts = pgTable(
  "launch_click_day_counts",
  {
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    day: text("day").notNull(),
    position: integer("position"),
    utmSource: text("utm_source"),
    clicks: integer("clicks").notNull(),
  },
  (t) => [index("launch_click_day_counts_launch_day_idx").on(t.launchId, t.day)],
);

/** One row per join of a participant to a launch's group (a re-join is a new row); `leftAt` set on leave. */
export const launchParticipants = pgTable(
  "launch_participants",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    groupId: text("id_group").notNull(),
    /** A phone number or the platform's opaque id (a LID), as the provider reported it. */
    participant: text("participant").notNull(),
    /** Staff numbers, the template's admins and the channels' own numbers: never counted as leads. */
    staff: boolean("staff").notNull().default(false),
    joinedAt: ts("joined_at").notNull(),
    leftAt: ts("left_at"),
    /** When the join / the leave went out in a `members_changed` webhook (null: not yet reported). */
    joinReportedAt: ts("join_reported_at"),
    leaveReportedAt: ts("leave_reported_at"),
    /** The welcome batch (launch_welcomes.id) that took this join; null: not welcomed (yet); 0: never (one of the tenant's numbers). */
    welcomeId: bigint("welcome_id", { mode: "number" }),
  },
  (t) => [
    index("launch_participants_group_idx").on(t.launchId, t.groupId, t.participant),
    index("launch_participants_joined_idx").on(t.launchId, t.joinedAt),
    // A LID's rows across the launch's groups, moved to the number once it is known (lid-phones.ts).
    index("launch_participants_person_idx").on(t.launchId, t.participant),
    // The welcome's waiting newcomers (welcome-batches.ts): a pass reads only them, not the launch's whole history.
    index("launch_participants_welcome_idx")
      .on(t.launchId, t.groupId, t.joinedAt)
      .where(sql`${t.welcomeId} is null and ${t.staff} = false and ${t.leftAt} is null`),
  ],
);

/**
 * A purchase or its refund as a marketplace's inbound webhook told it (docs/integrations.md#inbound-webhooks-buyers):
 * one row per platform, transaction and status, so the same notice twice changes nothing. A transaction with an
 * `approved` row and no `refunded` one is a purchase that counts; a chargeback is stored as `refunded`.
 * `matchKey` is the buyer's phone as leads and members are compared (leads-schema.ts `matchKeyOf`), from the
 * checkout's phone or, without one, from the phone of the tenant's lead with the same email (null: neither).
 * Which launches a purchase belongs to is read, never stored: every launch of the tenant, created before the
 * purchase, in which the buyer is a lead or a member (docs/decisions.md#buyers).
 */
export const purchaseStatuses = ["approved", "refunded"] as const;
export const purchases = pgTable(
  "purchases",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    /** The integration type that sent it (hotmart, kiwify). */
    platform: text("platform").notNull(),
    /** The platform's transaction id (Hotmart `purchase.transaction`, Kiwify `order_id`). */
    transaction: text("transaction").notNull(),
    status: text("status", { enum: purchaseStatuses }).notNull(),
    phone: text("phone"),
    matchKey: text("match_key"),
    email: text("email"),
    name: text("name"),
    productId: text("product_id"),
    productName: text("product_name"),
    /** As the platform sent it (a decimal string), with its currency; null when the platform sent none. */
    amount: text("amount"),
    currency: text("currency"),
    /** When the platform says it happened (the approval, the refund); the time it arrived when it says nothing. */
    occurredAt: ts("occurred_at").notNull(),
    receivedAt: ts("received_at").notNull(),
  },
  (t) => [uniqueIndex("purchases_notice_idx").on(t.tenantId, t.platform, t.transaction, t.status), index("purchases_buyer_idx").on(t.tenantId, t.matchKey)],
);

/**
 * A lead of a launch (docs/launches.md#leads): a person a capture form or an integration sent, by phone number
 * (digits with the country code). Uploading the same phone again updates the row (idempotent by phone).
 * `matchKey` is the phone as it is compared with the launch's members: a Brazilian mobile without its ninth
 * digit (WhatsApp still shows older accounts that way), so both spellings meet.
 */
export const launchLeads = pgTable(
  "launch_leads",
  {
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    phone: text("phone").notNull(),
    matchKey: text("match_key").notNull(),
    name: text("name"),
    email: text("email"),
    source: text("source"),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.launchId, t.phone] }),
    index("launch_leads_match_idx").on(t.launchId, t.matchKey),
    // The CSV export's keyset pages (server/launches/funnel/launch-leads.ts): oldest first, then by phone.
    index("launch_leads_created_idx").on(t.launchId, t.createdAt, t.phone),
  ],
);

/**
 * A leave of someone the launch never saw join in that group (docs/decisions.md#members): it lowered the
 * group's `members` (they may have been there before the group was adopted), and is kept so that their
 * join, if it arrives late (two webhooks racing), closes a row instead of opening one.
 */
export const launchEarlyLeaves = pgTable(
  "launch_early_leaves",
  {
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    groupId: text("id_group").notNull(),
    participant: text("participant").notNull(),
    leftAt: ts("left_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.launchId, t.groupId, t.participant] })],
);

/**
 * One person's two WhatsApp ids as a channel learned them (docs/decisions.md#members): the opaque LID
 * (`<digits>@lid`) and the phone number it stands for (digits). Filled from every participant event and
 * participant list that carries both; a launch's participants are recorded under the phone when known.
 */
export const channelLidPhones = pgTable(
  "channel_lid_phones",
  {
    channelId: text("channel_id")
      .notNull()
      .references(() => channels.id, { onDelete: "cascade" }),
    lid: text("lid").notNull(),
    phone: text("phone").notNull(),
    learnedAt: ts("learned_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.lid] }), index("channel_lid_phones_phone_idx").on(t.channelId, t.phone)],
);

/**
 * Participant events already recorded, by the gateway's identity of each (a resend has the same): a resend
 * after its first delivery was recorded changes nothing, whatever happened in between. Kept a day
 * (Evolution stops resending after about 20 minutes).
 */
export const participantEventsSeen = pgTable(
  "participant_events_seen",
  {
    channelId: text("channel_id").notNull(),
    eventId: text("event_id").notNull(),
    seenAt: ts("seen_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.eventId] }), index("participant_events_seen_at_idx").on(t.seenAt)],
);

// ---- the simulator's groups (created through the provider), invite codes and participants ----

export const simulatorGroups = pgTable(
  "simulator_groups",
  {
    groupId: text("id_group").primaryKey(),
    channelId: text("id_channel").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    pictureUrl: text("picture_url"),
    adminsOnly: boolean("admins_only").notNull().default(false),
    /** Only admins edit the group's info (WhatsApp's `restrict`). */
    locked: boolean("locked").notNull().default(false),
    /** The SHA-256 (hex) of the picture set by updateGroupPicture; null: none set that way. */
    pictureSha256: text("picture_sha256"),
    createdAt: createdAt(),
  },
  (t) => [index("simulator_groups_channel_idx").on(t.channelId, t.createdAt)],
);

/**
 * Every group setting change the simulated platform applied (subject, description, picture, announce, locked,
 * promote/demote/remove), each one the system notice members would see: tests count changes per group here.
 */
export const simulatorGroupChanges = pgTable(
  "simulator_group_changes",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    groupId: text("id_group").notNull(),
    channelId: text("id_channel").notNull(),
    change: text("change").notNull(),
    at: ts("at").notNull(),
  },
  (t) => [index("simulator_group_changes_group_idx").on(t.groupId, t.id)],
);

/**
 * Every group creation asked of the simulator (GET /api/simulator/group-creations): made, or refused as
 * WhatsApp's rate-overlimit past the channel's limit (simulatorGroupCreateLimits). Tests count attempts here.
 */
export const simulatorGroupCreations = pgTable(
  "simulator_group_creations",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    channelId: text("id_channel").notNull(),
    name: text("name").notNull(),
    /** The group made; null when refused. */
    groupId: text("id_group"),
    outcome: text("outcome", { enum: ["made", "rate_limited"] }).notNull(),
    at: ts("at").notNull(),
  },
  (t) => [index("simulator_group_creations_channel_idx").on(t.channelId, t.at)],
);

/** `{"group_create_rate_limit_per_hour": N}` (POST /api/simulator/channels/{id}/state): creations past N made in a rolling hour are refused as rate-limited. */
export const simulatorGroupCreateLimits = pgTable("simulator_group_create_limits", {
  channelId: text("id_channel").primaryKey(),
  perHour: integer("per_hour").notNull(),
});

/** The current invite code of a simulated group (made on first read; a revoke replaces it). */
export const simulatorInvites = pgTable(
  "simulator_invites",
  {
    code: text("code").primaryKey(),
    channelId: text("id_channel").notNull(),
    groupId: text("id_group").notNull(),
    revokedAt: ts("revoked_at"),
    createdAt: createdAt(),
  },
  (t) => [index("simulator_invites_group_idx").on(t.groupId)],
);

export const simulatorParticipants = pgTable(
  "simulator_participants",
  {
    groupId: text("id_group").notNull(),
    participant: text("participant").notNull(),
    channelId: text("id_channel").notNull(),
    admin: boolean("admin").notNull().default(false),
    joinedAt: ts("joined_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.participant] }), index("simulator_participants_group_idx").on(t.groupId, t.joinedAt)],
);

export const seriesStatuses = ["active", "paused", "stopped"] as const;

/** The template of a repeating campaign (docs/series.md): what each run sends, to which segment, on which days and time. */
export interface SeriesSchedule {
  /** Weekday keys, monday … sunday. */
  days: string[];
  /** HH:mm, Brasília time. */
  time: string;
  /** The last Brasília date (YYYY-MM-DD) a run may fall on. */
  until: string;
}

export const campaignSeries = pgTable(
  "campaign_series",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    segmentId: text("segment_id")
      .notNull()
      .references(() => segments.id),
    name: text("name").notNull(),
    status: text("status", { enum: seriesStatuses }).notNull().default("active"),
    messageType: text("message_type", { enum: messageTypes }).notNull(),
    /** What each run sends, as a campaign's `content`. */
    content: jsonb("content").notNull(),
    linkPreview: boolean("link_preview"),
    mentionAll: boolean("mention_all").notNull().default(false),
    schedule: jsonb("schedule").$type<SeriesSchedule>().notNull(),
    /** The next run's time (null: none left before `until`, or stopped). The periodic job creates runs due by now. */
    nextRunAt: ts("next_run_at"),
    lastRunAt: ts("last_run_at"),
    runs: integer("runs").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [index("campaign_series_tenant_idx").on(t.tenantId, t.createdAt), index("campaign_series_due_idx").on(t.status, t.nextRunAt)],
);

/**
 * One row per run of a series: the primary key (series, occurrence) makes a run exist once, whatever the number of
 * processes that find it due (insert … on conflict do nothing decides which one creates the campaign).
 */
export const seriesRuns = pgTable(
  "series_runs",
  {
    seriesId: text("series_id")
      .notNull()
      .references(() => campaignSeries.id, { onDelete: "cascade" }),
    occurrenceAt: ts("occurrence_at").notNull(),
    campaignId: text("campaign_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.seriesId, t.occurrenceAt] }), index("series_runs_campaign_idx").on(t.campaignId)],
);

export const groupActionStatuses = ["scheduled", "running", "completed", "canceled"] as const;
export const groupActionTypes = [
  "close_messages",
  "open_messages",
  "lock_info",
  "unlock_info",
  "set_subject",
  "set_description",
  "set_picture",
  "promote",
  "demote",
  "remove",
  /** Moderation only (server/moderation): messages deleted for everyone; never created through create-group-action. */
  "delete_message",
] as const;
export const groupActionStates = ["pending", "applying", "done", "failed", "canceled"] as const;

/** What a group action does (CONTRACT §8): its type and the type's fields, as create-group-action took them. */
export interface GroupActionSpec {
  type: (typeof groupActionTypes)[number];
  subject?: string;
  description?: string;
  picture_url?: string;
  /** The picture fetched once at creation: its SHA-256 (hex), what the read-back compares. */
  picture_sha256?: string;
  participants?: string[];
  /** delete_message: the members' messages to delete for everyone (the platform's id and who sent it). */
  messages?: { id: string; sender: string }[];
}

/**
 * A scheduled group action (docs/groups.md): one setting change applied to every group of a segment or a launch,
 * exactly once per group, through the admin numbers. The engine leases the row while it works on it.
 */
export const groupActions = pgTable(
  "group_actions",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name"),
    segmentId: text("segment_id").references(() => segments.id, { onDelete: "cascade" }),
    launchId: text("launch_id").references(() => launches.id, { onDelete: "cascade" }),
    action: jsonb("action").$type<GroupActionSpec>().notNull(),
    /** set_picture: the image fetched once at creation, base64 (at most 5 MB decoded). */
    picture: text("picture"),
    status: text("status", { enum: groupActionStatuses }).notNull(),
    scheduledAt: ts("scheduled_at").notNull(),
    /** When the engine should look at it again (the time it is due, the next channel's turn). */
    nextRunAt: ts("next_run_at").notNull(),
    leaseUntil: ts("lease_until"),
    total: integer("total").notNull().default(0),
    done: integer("done").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    startedAt: ts("started_at"),
    finishedAt: ts("finished_at"),
    /**
     * The action holds only the groups it was created with (a buyer removal: the groups the buyer is in); a launch
     * target's groups are otherwise read again when it starts.
     */
    fixedGroups: boolean("fixed_groups").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [index("group_actions_tenant_idx").on(t.tenantId, t.createdAt), index("group_actions_due_idx").on(t.status, t.nextRunAt)],
);

/**
 * One group of a group action: `pending` → `applying` (claimed: the change is being made through `id_channel`) →
 * `done` (read back) | `failed` (`reason`); `canceled` when the action was canceled before it.
 */
export const groupActionGroups = pgTable(
  "group_action_groups",
  {
    actionId: text("action_id")
      .notNull()
      .references(() => groupActions.id, { onDelete: "cascade" }),
    groupId: text("id_group").notNull(),
    /** `{n}`: the group's number in the launch, or its 1-based position in the segment. */
    position: integer("position").notNull(),
    state: text("state", { enum: groupActionStates }).notNull().default("pending"),
    channelId: text("channel_id"),
    reason: text("reason"),
    /** Applications made (a read-back that does not show the change allows one more). */
    attempts: integer("attempts").notNull().default(0),
    /** Channels the platform answered "not admin" for this group. */
    notAdmin: jsonb("not_admin").$type<string[]>().notNull().default([]),
    /** Since when no admin channel could act (no_channel after 30 minutes). */
    waitingSince: ts("waiting_since"),
    at: ts("at"),
  },
  (t) => [primaryKey({ columns: [t.actionId, t.groupId] }), index("group_action_groups_state_idx").on(t.actionId, t.state, t.position)],
);

/**
 * A launch's welcome batch (CONTRACT §8 "Welcome"; docs/launches.md#welcome): the newcomers of one group welcomed by one
 * message. Made with its joins marked (launch_participants.welcome_id) in one transaction; `pending` until a channel's
 * budget is taken for it, `sending` (claimed: the channel and the attempt's time recorded with the budget) until the send is
 * recorded `sent`; a `sending` row whose lease ran out is looked up on the platform (its delivery key), never sent blind.
 */
export const launchWelcomeStates = ["pending", "sending", "sent"] as const;
export const launchWelcomes = pgTable(
  "launch_welcomes",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    groupId: text("id_group").notNull(),
    /** The participants welcomed (as recorded: numbers, or platform ids). */
    participants: jsonb("participants").$type<string[]>().notNull(),
    /** The text as sent (variations rendered, mentions written): a look-up after a crash finds this very text. */
    text: text("text").notNull(),
    mentions: jsonb("mentions").$type<string[]>().notNull(),
    state: text("state", { enum: launchWelcomeStates }).notNull().default("pending"),
    channelId: text("channel_id"),
    attemptAt: ts("attempt_at"),
    leaseUntil: ts("lease_until"),
    /** Look-ups that did not find a send whose answer was lost (two, a look-up's wait apart, and it goes again). */
    lookups: integer("lookups").notNull().default(0),
    error: text("error"),
    messageId: text("message_id"),
    sentAt: ts("sent_at"),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [index("launch_welcomes_launch_idx").on(t.launchId, t.state), index("launch_welcomes_due_idx").on(t.state, t.leaseUntil)],
);

/**
 * A buyer's removal from one group of a launch (docs/launches.md#buyers-leave-the-groups): one row per launch, person
 * (`personKey`: the phone's match key, server/phones) and group, so a repeated notice removes nothing twice. The
 * removal is a group action (`actionId`, type remove, fixed groups); `removedAt` is set in the engine's transaction
 * that records the group done (read back: the platform no longer lists them), with the `buyer_removed` event.
 */
export const buyerRemovals = pgTable(
  "buyer_removals",
  {
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    personKey: text("person_key").notNull(),
    groupId: text("id_group").notNull(),
    /** The id the group lists them by (a phone or a LID), as the participant events reported it. */
    participant: text("participant").notNull(),
    /** The marketplace's transaction of the purchase that made them a buyer (null: removed from the dashboard without one known). */
    transaction: text("transaction"),
    platform: text("platform"),
    actionId: text("action_id").references(() => groupActions.id, { onDelete: "set null" }),
    removedAt: ts("removed_at"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.launchId, t.personKey, t.groupId] }), index("buyer_removals_action_idx").on(t.actionId, t.groupId)],
);

/** The tenant's blocklist (docs/moderation.md#blocklist): numbers removed from a moderated launch's groups when they join. */
export const blocklistNumbers = pgTable(
  "blocklist_numbers",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    /** The number's match key (server/phones): one entry per person, ninth digit or not. */
    phoneKey: text("phone_key").notNull(),
    phone: text("phone").notNull(),
    addedAt: ts("added_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.phoneKey] })],
);

export const moderationRules = ["link", "banned_word", "flood", "country_code", "blocklist"] as const;
export const moderationActions = ["deleted", "removed", "would_delete", "would_remove"] as const;

/**
 * Each moderation decision (docs/moderation.md#events), newest last. `dedupe` makes a decision once: a join's is its
 * launch_participants row, so a redelivered participant event decides nothing twice.
 */
export const moderationEvents = pgTable(
  "moderation_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    groupId: text("id_group").notNull(),
    participant: text("participant").notNull(),
    rule: text("rule", { enum: moderationRules }).notNull(),
    action: text("action", { enum: moderationActions }).notNull(),
    excerpt: text("excerpt").notNull().default(""),
    dedupe: text("dedupe").notNull(),
    /** The group action that removes or deletes (null in shadow). */
    actionId: text("action_id").references(() => groupActions.id, { onDelete: "set null" }),
    at: ts("at").notNull(),
    /** When it went out in a `group_activity` event `moderation` (null: not yet; batched a minute per group). */
    reportedAt: ts("reported_at"),
  },
  (t) => [
    uniqueIndex("moderation_events_dedupe_idx").on(t.launchId, t.dedupe),
    index("moderation_events_launch_idx").on(t.launchId, t.id),
    index("moderation_events_unreported_idx").on(t.id).where(sql`reported_at is null`),
    index("moderation_events_at_idx").on(t.at),
  ],
);

/**
 * A member's strikes within a launch (docs/moderation.md#messages): one per message of theirs that broke a rule in
 * `enforce`; at the launch's `strikes_to_remove` they are removed. `person` is the sender's match key (server/phones),
 * or the LID when no channel of the launch paired it with a number. The dashboard's undo clears the row.
 */
export const moderationStrikes = pgTable(
  "moderation_strikes",
  {
    launchId: text("launch_id")
      .notNull()
      .references(() => launches.id, { onDelete: "cascade" }),
    person: text("person").notNull(),
    strikes: integer("strikes").notNull(),
    lastAt: ts("last_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.launchId, t.person] }), index("moderation_strikes_last_idx").on(t.lastAt)],
);

/**
 * The members' messages in a moderated launch's groups (docs/moderation.md#messages): only what moderation needs — who,
 * where, when, a 100-character excerpt and the verdict — one row per platform message (every channel in the group gets
 * it; a redelivery is the same row), so a message is judged once. Kept a day (the hourly retention job).
 */
export const moderationVerdicts = ["clean", "exempt", "link", "banned_word", "flood"] as const;
export const groupMessages = pgTable(
  "group_messages",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    groupId: text("id_group").notNull(),
    /** The platform's id of the message. */
    messageId: text("message_id").notNull(),
    /** As the platform gave it: a number (digits), or a LID when it gave no number. */
    sender: text("sender").notNull(),
    /** The sender's match key (server/phones), or the LID; what floods and strikes count by. */
    person: text("person").notNull(),
    excerpt: text("excerpt").notNull(),
    verdict: text("verdict", { enum: moderationVerdicts }).notNull(),
    at: ts("at").notNull(),
  },
  (t) => [
    uniqueIndex("group_messages_message_uq").on(t.groupId, t.messageId),
    index("group_messages_person_idx").on(t.groupId, t.person, t.at),
    index("group_messages_at_idx").on(t.at),
  ],
);

/** Messages members posted in simulated groups (POST /api/simulator/groups/{id}/messages); `deletedAt` once an admin deleted it for everyone. */
export const simulatorGroupPosts = pgTable(
  "simulator_group_posts",
  {
    messageId: text("message_id").primaryKey(),
    groupId: text("id_group").notNull(),
    sender: text("sender").notNull(),
    text: text("text").notNull(),
    at: ts("at").notNull(),
    deletedAt: ts("deleted_at"),
    deletedBy: text("deleted_by"),
  },
  (t) => [index("simulator_group_posts_group_idx").on(t.groupId, t.at)],
);
