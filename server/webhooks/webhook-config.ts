import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { webhookConfigs } from "../../db/schema";
import { decryptSecret, encryptSecret } from "../crypto/secret-box";
import { env } from "../env";
import { BadRequest } from "../errors";
import { newSigningSecret } from "./signing";
import { urlField, webhookTypes, type EditWebhooksInput, type WebhookType } from "./schema";
import { webhookUrlProblem } from "../net/target-address";

export type WebhookConfigRow = typeof webhookConfigs.$inferSelect;

const column = {
  campaign_status: "campaignStatusUrl",
  campaign_progress: "campaignProgressUrl",
  channel_status: "channelStatusUrl",
  group_activity: "groupActivityUrl",
} as const satisfies Record<WebhookType, keyof WebhookConfigRow>;

export const configuredUrl = (c: WebhookConfigRow | undefined, type: WebhookType) => c?.[column[type]] ?? null;

/** configuredUrl in SQL: the URL column of `type` (a text expression) in the webhook_configs row of the query. */
export const configuredUrlSql = (type: SQL) =>
  sql`case ${type} ${sql.join(
    webhookTypes.map((t) => sql`when ${t} then ${webhookConfigs[column[t]]}`),
    sql` `,
  )} end`;

/** The tenant's configuration, created with a fresh signing secret on first use. */
export async function getWebhookConfig(db: Db | Tx, tenantId: string): Promise<WebhookConfigRow> {
  const [found] = await db.select().from(webhookConfigs).where(eq(webhookConfigs.tenantId, tenantId));
  if (found) return found;
  await db
    .insert(webhookConfigs)
    .values({ tenantId, secretEncrypted: encryptSecret(newSigningSecret()) })
    .onConflictDoNothing();
  const [created] = await db.select().from(webhookConfigs).where(eq(webhookConfigs.tenantId, tenantId));
  return created;
}

/** The secrets that sign a delivery now: the current one, plus the previous one during its grace period. */
export const signingSecrets = (c: WebhookConfigRow, now: Date) => secretsInForce(c.secretEncrypted, c.previousSecretEncrypted, c.previousSecretExpiresAt, now);

/** Decrypted: the current secret, and the previous one while it is still in its grace period (account's and apps'). */
export function secretsInForce(current: string, previous: string | null, previousExpiresAt: Date | null, now: Date): string[] {
  return previous && previousExpiresAt && previousExpiresAt > now ? [decryptSecret(current), decryptSecret(previous)] : [decryptSecret(current)];
}

/** Until when a secret replaced now keeps signing beside its successor (WEBHOOK_SECRET_GRACE_HOURS, default 24). */
export const previousSecretUntil = (now: Date) => new Date(now.getTime() + env.webhooks.secretGraceHours * 3_600_000);

export const urlsOf = (c: WebhookConfigRow) => ({
  campaign_status_url: c.campaignStatusUrl,
  campaign_progress_url: c.campaignProgressUrl,
  channel_status_url: c.channelStatusUrl,
  group_activity_url: c.groupActivityUrl,
});

export async function listWebhooks(db: Db, tenantId: string) {
  const c = await getWebhookConfig(db, tenantId);
  return { ...urlsOf(c), signing_secret: decryptSecret(c.secretEncrypted) };
}

/** Partial merge of the four URLs: "" or null disables; every other value must be an acceptable http(s) URL (400 naming the field). */
export async function editWebhooks(db: Db, tenantId: string, patch: EditWebhooksInput, now: Date) {
  const next: Partial<Record<WebhookType, string | null>> = {};
  const problems: string[] = [];
  for (const type of webhookTypes) {
    const raw = patch[urlField[type]];
    if (raw === undefined) continue;
    const value = raw === null || raw.trim() === "" ? null : raw.trim();
    if (value !== null) {
      const problem = await webhookUrlProblem(value);
      if (problem) problems.push(`${urlField[type]}: ${problem}`);
    }
    next[type] = value;
  }
  if (problems.length > 0) throw new BadRequest(problems.join("; "));
  return db.transaction(async (tx) => {
    await getWebhookConfig(tx, tenantId);
    const [current] = await tx.select().from(webhookConfigs).where(eq(webhookConfigs.tenantId, tenantId)).for("update");
    const updated = webhookTypes.filter((t) => t in next && next[t] !== configuredUrl(current, t)).map((t) => urlField[t]);
    const set: Partial<WebhookConfigRow> = { updatedAt: now };
    for (const t of webhookTypes) if (t in next) set[column[t]] = next[t] ?? null;
    const [saved] = await tx.update(webhookConfigs).set(set).where(eq(webhookConfigs.tenantId, tenantId)).returning();
    return { updated, webhooks: urlsOf(saved) };
  });
}

/** A new signing secret; the old one keeps signing beside it for WEBHOOK_SECRET_GRACE_HOURS (default 24). */
export async function rotateSigningSecret(db: Db, tenantId: string, now: Date) {
  const secret = newSigningSecret();
  const until = previousSecretUntil(now);
  await db.transaction(async (tx) => {
    await getWebhookConfig(tx, tenantId);
    const [current] = await tx.select().from(webhookConfigs).where(eq(webhookConfigs.tenantId, tenantId)).for("update");
    await tx
      .update(webhookConfigs)
      .set({ secretEncrypted: encryptSecret(secret), previousSecretEncrypted: current.secretEncrypted, previousSecretExpiresAt: until, updatedAt: now })
      .where(eq(webhookConfigs.tenantId, tenantId));
  });
  return { signing_secret: secret, previous_valid_until: until.toISOString() };
}

/** A 410 Gone disables the URL it came from (only if it is still the configured one). */
export async function disableUrl(db: Db | Tx, tenantId: string, type: WebhookType, url: string, now: Date) {
  const col = webhookConfigs[column[type]];
  await db
    .update(webhookConfigs)
    .set({ [column[type]]: null, updatedAt: now })
    .where(and(eq(webhookConfigs.tenantId, tenantId), eq(col, url)));
}
