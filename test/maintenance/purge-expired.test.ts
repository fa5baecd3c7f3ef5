import { randomUUID } from "node:crypto";
import { eq, inArray, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb, type Db } from "../../db/client";
import {
  auditLog,
  groupMessages,
  idempotencyKeys,
  oauthAuthorizationRequests,
  oauthCodes,
  oauthGrants,
  oauthTokens,
  outboxEvents,
  partnerApps,
  rateLimitBuckets,
  simulatorGroupPosts,
  simulatorMessages,
  webhookAttempts,
  webhookDeliveries,
} from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { deleteInBatches } from "../../db/batched-delete";
import { runMaintenance, type MaintenanceCounts } from "../../server/maintenance/purge-expired";
import { webhookHistoryRows } from "../webhooks/history-rows";

const hour = 3_600_000;
const day = 24 * hour;
/** In one transaction, rolled back at the end: each scenario starts from the file's database as it was (counts are exact). */
async function rolledBack(scenario: (db: Db) => Promise<void>) {
  const rollback = new Error("rollback");
  await expect(
    (await getDb()).transaction(async (tx) => {
      await scenario(tx as unknown as Db);
      throw rollback;
    }),
  ).rejects.toBe(rollback);
}

function expectCounts(actual: MaintenanceCounts, expected: MaintenanceCounts) {
  expect(actual).toEqual(expected);
}

const ago = (now: Date, ms: number) => new Date(now.getTime() - ms);
const later = (now: Date, ms: number) => new Date(now.getTime() + ms);

describe("the maintenance job (retention, docs/decisions.md#limits-abuse-retention)", () => {
  it("deletes exactly what has expired in every table, and nothing pending or young", async () => {
    await rolledBack(async (db) => {
      const now = new Date();
      const { tenantId, userId } = await createTenant(db, { name: "Manutenção", email: `m-${randomUUID()}@example.test`, password: "senha-segura-123" });
      const tag = randomUUID().slice(0, 8);

      // Idempotency records: 24 h.
      const idem = (key: string, createdAt: Date, state: "done" | "in_progress", lockedUntil: Date) => ({
        tenantId,
        key: `${tag}-${key}`,
        fingerprint: "f",
        state,
        responseStatus: state === "done" ? 201 : null,
        responseBody: state === "done" ? "{}" : null,
        lockedUntil,
        createdAt,
      });
      await db.insert(idempotencyKeys).values([
        idem("old-done", ago(now, 25 * hour), "done", ago(now, 25 * hour)), // goes
        idem("old-abandoned", ago(now, 25 * hour), "in_progress", ago(now, 25 * hour)), // goes: a crashed claim
        idem("old-running", ago(now, 25 * hour), "in_progress", later(now, 30_000)), // still running: stays
        idem("young-done", ago(now, 23 * hour), "done", ago(now, 23 * hour)), // stays
        idem("young-running", ago(now, hour), "in_progress", later(now, 30_000)), // stays
      ]);

      // OAuth: an app, a grant, codes, authorization requests, tokens.
      const appId = `app_${tag}`;
      await db.insert(partnerApps).values({
        id: appId,
        tenantId,
        name: "App",
        redirectUris: ["https://app.example.com/cb"],
        requestedScopes: [],
        approvedScopes: [],
        clientType: "public",
      });
      const grantId = `grant_${tag}`;
      await db.insert(oauthGrants).values({ id: grantId, appId, tenantId, userId, scopes: [] });
      const code = (name: string, createdAt: Date, expiresAt: Date, usedAt: Date | null) => ({
        codeHash: `${tag}-${name}`,
        appId,
        tenantId,
        userId,
        redirectUri: "https://app.example.com/cb",
        scopes: [],
        expiresAt,
        usedAt,
        grantId: usedAt ? grantId : null,
        createdAt,
      });
      await db.insert(oauthCodes).values([
        code("old-used", ago(now, 2 * day), later(ago(now, 2 * day), 60_000), ago(now, 2 * day)), // goes
        code("old-expired", ago(now, 2 * day), later(ago(now, 2 * day), 60_000), null), // goes
        code("old-unexpired", ago(now, 2 * day), later(now, 60_000), null), // not expired, not used: stays
        code("young-used", ago(now, hour), later(ago(now, hour), 60_000), ago(now, hour)), // stays (reuse still detected)
        code("young-expired", ago(now, hour), later(ago(now, hour), 60_000), null), // stays
      ]);
      const request = (name: string, createdAt: Date, expiresAt: Date, consumedAt: Date | null) => ({
        id: `${tag}-${name}`,
        appId,
        userId,
        fingerprint: "f",
        createdAt,
        expiresAt,
        consumedAt,
      });
      await db.insert(oauthAuthorizationRequests).values([
        request("old-consumed", ago(now, 2 * day), later(ago(now, 2 * day), 600_000), ago(now, 2 * day)), // goes
        request("old-expired", ago(now, 2 * day), later(ago(now, 2 * day), 600_000), null), // goes
        request("old-open", ago(now, 2 * day), later(now, 600_000), null), // pending: stays
        request("young-expired", ago(now, hour), ago(now, hour / 2), null), // stays
      ]);
      const token = (name: string, kind: "access" | "refresh", expiresAt: Date, revokedAt: Date | null) => ({
        id: `${tag}-${name}`,
        grantId,
        kind,
        tokenHash: `${tag}-${name}-hash`,
        scopes: [],
        expiresAt,
        revokedAt,
        createdAt: ago(expiresAt, kind === "access" ? hour : 30 * day),
      });
      await db.insert(oauthTokens).values([
        token("access-expired-31d", "access", ago(now, 31 * day), null), // goes
        token("refresh-expired-31d", "refresh", ago(now, 31 * day), null), // goes
        token("refresh-revoked-31d", "refresh", later(now, day), ago(now, 31 * day)), // goes (rotated long ago)
        token("access-expired-29d", "access", ago(now, 29 * day), null), // stays
        token("refresh-revoked-29d", "refresh", later(now, day), ago(now, 29 * day)), // stays
        token("access-live", "access", later(now, hour), null), // stays
        token("refresh-live", "refresh", later(now, 10 * day), null), // stays
      ]);

      // Rate-limit buckets.
      await db.insert(rateLimitBuckets).values([
        { key: `${tag}:expired`, points: 3, expire: ago(now, 1000) }, // goes
        { key: `${tag}:open`, points: 3, expire: later(now, 30_000) }, // stays
      ]);

      // Webhook history (WEBHOOK_RETENTION_DAYS, 30 by default; details in test/webhooks/prune.test.ts).
      const old = ago(now, 31 * day);
      const rows = webhookHistoryRows(tenantId, old);
      const events = await db
        .insert(outboxEvents)
        .values([rows.event(old), rows.event(old, false)]) // goes, not fanned out: stays
        .returning({ id: outboxEvents.id });
      const deliveries = await db
        .insert(webhookDeliveries)
        .values([rows.delivery(events[0].id, "delivered", old, old), rows.delivery(events[1].id, "pending", old, null)]) // goes, stays
        .returning({ id: webhookDeliveries.id });
      await db.insert(webhookAttempts).values([rows.attempt(null, old), rows.attempt(null, ago(now, day))]); // goes, stays

      // Simulator messages: SIMULATOR_RETENTION_DAYS, 7 by default.
      const channelId = `channel_${randomUUID()}`;
      const message = (name: string, sentAt: Date) => ({
        deliveryKey: `${tag}-${name}`,
        messageId: `SIM${name}`,
        channelId,
        groupId: "1@g.us",
        messageType: "text",
        text: "x",
        sentAt,
      });
      await db.insert(simulatorMessages).values([message("8d", ago(now, 8 * day)), message("6d", ago(now, 6 * day))]); // goes, stays

      // The audit log: 365 days (docs/team.md#audit-log).
      const entry = (action: string, at: Date) => ({ tenantId, at, actorType: "system" as const, action, outcome: "ok" as const });
      await db.insert(auditLog).values([entry("old.366d", ago(now, 366 * day)), entry("young.364d", ago(now, 364 * day))]); // goes, stays

      // Moderation: the members' messages it read are kept a day; the simulator's posts as its message log (docs/moderation.md#retention).
      const post = (name: string, at: Date) => ({ groupId: `${tag}@g.us`, messageId: `${tag}${name}`, sender: "5511900000001", at });
      await db.insert(groupMessages).values(
        [post("25h", ago(now, 25 * 3_600_000)), post("23h", ago(now, 23 * 3_600_000))].map((m) => ({
          ...m,
          person: m.sender,
          excerpt: "x",
          verdict: "clean" as const,
        })),
      ); // goes, stays
      await db.insert(simulatorGroupPosts).values([post("8d", ago(now, 8 * day)), post("6d", ago(now, 6 * day))].map((m) => ({ ...m, text: "x" }))); // goes, stays

      const counts = await runMaintenance(db, now);
      expectCounts(counts, {
        groupMessages: 1,
        moderationEvents: 0,
        moderationStrikes: 0,
        simulatorGroupPosts: 1,
        buyerRemovals: 0,
        auditEntries: 1,
        idempotencyKeys: 2,
        oauthCodes: 2,
        oauthAuthorizationRequests: 2,
        oauthTokens: 3,
        rateLimitBuckets: 1,
        webhookDeliveries: 1,
        outboxEvents: 1,
        webhookTestAttempts: 1,
        simulatorMessages: 1,
        launchClickDaysFolded: 0,
        launchClicks: 0,
        metaEvents: 0,
      });

      const keysLeft = (await db.select({ key: idempotencyKeys.key }).from(idempotencyKeys).where(eq(idempotencyKeys.tenantId, tenantId))).map((r) =>
        r.key.slice(tag.length + 1),
      );
      expect(keysLeft.sort()).toEqual(["old-running", "young-done", "young-running"]);
      const codesLeft = (await db.select({ h: oauthCodes.codeHash }).from(oauthCodes).where(eq(oauthCodes.appId, appId))).map((r) => r.h.slice(tag.length + 1));
      expect(codesLeft.sort()).toEqual(["old-unexpired", "young-expired", "young-used"]);
      const requestsLeft = (
        await db.select({ id: oauthAuthorizationRequests.id }).from(oauthAuthorizationRequests).where(eq(oauthAuthorizationRequests.appId, appId))
      ).map((r) => r.id.slice(tag.length + 1));
      expect(requestsLeft.sort()).toEqual(["old-open", "young-expired"]);
      const tokensLeft = (await db.select({ id: oauthTokens.id }).from(oauthTokens).where(eq(oauthTokens.grantId, grantId))).map((r) =>
        r.id.slice(tag.length + 1),
      );
      expect(tokensLeft.sort()).toEqual(["access-expired-29d", "access-live", "refresh-live", "refresh-revoked-29d"]);
      // The grant (the app's authorization) is not the job's to remove.
      expect(await db.select().from(oauthGrants).where(eq(oauthGrants.id, grantId))).toHaveLength(1);
      const bucketsLeft = await db
        .select({ key: rateLimitBuckets.key })
        .from(rateLimitBuckets)
        .where(sql`${rateLimitBuckets.key} like ${`${tag}:%`}`);
      expect(bucketsLeft.map((b) => b.key)).toEqual([`${tag}:open`]);
      expect((await db.select({ id: outboxEvents.id }).from(outboxEvents).where(eq(outboxEvents.tenantId, tenantId))).map((e) => e.id)).toEqual([events[1].id]);
      expect((await db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.tenantId, tenantId))).map((d) => d.id)).toEqual([
        deliveries[1].id,
      ]);
      expect(await db.select().from(webhookAttempts).where(eq(webhookAttempts.tenantId, tenantId))).toHaveLength(1);
      const messagesLeft = await db.select({ key: simulatorMessages.deliveryKey }).from(simulatorMessages).where(eq(simulatorMessages.channelId, channelId));
      expect(messagesLeft.map((m) => m.key)).toEqual([`${tag}-6d`]);

      // A second run finds nothing more of these.
      expect(Object.values(await runMaintenance(db, now)).every((n) => n === 0)).toBe(true);
    });
  });

  it("SIMULATOR_RETENTION_DAYS sets how long simulator messages are kept", async () => {
    await rolledBack(async (db) => {
      const now = new Date();
      const channelId = `channel_${randomUUID()}`;
      const message = (key: string, sentAt: Date) => ({
        deliveryKey: `${channelId}:${key}`,
        messageId: `SIM${key}`,
        channelId,
        groupId: "1@g.us",
        messageType: "text",
        sentAt,
      });
      await db.insert(simulatorMessages).values([message("4d", ago(now, 4 * day)), message("2d", ago(now, 2 * day))]);
      process.env.SIMULATOR_RETENTION_DAYS = "3";
      try {
        await runMaintenance(db, now);
      } finally {
        delete process.env.SIMULATOR_RETENTION_DAYS;
      }
      const left = await db.select({ key: simulatorMessages.deliveryKey }).from(simulatorMessages).where(eq(simulatorMessages.channelId, channelId));
      expect(left.map((m) => m.key)).toEqual([`${channelId}:2d`]);
    });
  });

  it("deletes a backlog larger than one batch in several statements, all of it", async () => {
    await rolledBack(async (db) => {
      const now = new Date();
      const channelId = `channel_${randomUUID()}`;
      const rows = Array.from({ length: 12 }, (_, i) => ({
        deliveryKey: `${channelId}:${i}`,
        messageId: `SIM${i}`,
        channelId,
        groupId: "1@g.us",
        messageType: "text",
        sentAt: ago(now, 8 * day),
      }));
      await db.insert(simulatorMessages).values([...rows, { ...rows[0], deliveryKey: `${channelId}:young`, sentAt: ago(now, day) }]);

      // The job with a batch of 5: 12 old rows go in three statements (5, 5, 2).
      const counts = await runMaintenance(db, now, { batch: 5 });
      expect(counts.simulatorMessages).toBe(12);
      const left = await db.select({ key: simulatorMessages.deliveryKey }).from(simulatorMessages).where(eq(simulatorMessages.channelId, channelId));
      expect(left.map((m) => m.key)).toEqual([`${channelId}:young`]);

      // The batching itself: statements of at most `batch` rows, repeated until one removes fewer.
      await db.insert(simulatorMessages).values(rows);
      const keys = rows.map((r) => r.deliveryKey);
      let statements = 0;
      const removed = await deleteInBatches(
        db,
        (n) => {
          statements++;
          return sql`delete from simulator_messages where delivery_key in (
            select delivery_key from simulator_messages where delivery_key in ${keys} limit ${n})`;
        },
        5,
      );
      expect({ removed, statements }).toEqual({ removed: 12, statements: 3 });
      expect(await db.select().from(simulatorMessages).where(inArray(simulatorMessages.deliveryKey, keys))).toHaveLength(0);
    });
  });
});
