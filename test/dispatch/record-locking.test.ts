import { and, eq, isNotNull, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, getDb } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { rowsOf } from "../../db/params";
import { deliveries } from "../../db/schema";
import { brasiliaMinute, createCampaign, tenantWithSegment } from "../campaigns";
import { recordSentMany } from "../../server/dispatch/record-delivery";
import { recordReceipts } from "../../server/dispatch/record-receipt";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/**
 * `count` in-flight deliveries of a loop, as the engine leaves them between the send and its record (groups
 * `<prefix>-00000`…), in a campaign scheduled two days ahead: it stays pending and no engine touches its rows.
 */
async function inFlightRows(count: number, prefix: string) {
  const { api, segment, channel } = await tenantWithSegment(server.url, 2);
  const { id_campaign: campaignId } = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 2 * 86_400_000)) });
  const db = await getDb();
  const rows = await db
    .insert(deliveries)
    .values(
      Array.from({ length: count }, (_, i) => ({
        campaignId,
        groupId: `${prefix}-${String(i).padStart(5, "0")}`,
        channelId: channel,
        groupName: `Grupo de lançamento ${i}`,
        position: 1000 + i,
        state: "sending" as const,
      })),
    )
    .returning({ id: deliveries.id, groupId: deliveries.groupId });
  return { db, campaignId, channel, rows };
}

/**
 * PostgreSQL: no other session of the cluster holds a snapshot or a transaction older than `xid` (pg_stat_activity's
 * backend_xmin, backend_xid), within 10 s.
 */
async function untilNoSnapshotOlderThan(db: Db, xid: string) {
  if (!process.env.DATABASE_URL) return; // PGlite: one session
  for (let i = 0; i < 500; i++) {
    const [row] = rowsOf<{ n: number }>(
      await db.execute(
        sql`select count(*)::int as n from pg_stat_activity where pid <> pg_backend_pid()
              and (age(backend_xmin) >= age(${xid}::xid) or age(backend_xid) >= age(${xid}::xid))`,
      ),
    );
    if (row.n === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("recording sends and acks of the same deliveries at once", () => {
  // 1,000-row loops: with the rows locked in opposite orders (the code before the fix) this deadlocked
  // on PostgreSQL in every run; on PGlite the two run one after the other.
  it("never deadlocks: both lock rows in id order (on PostgreSQL they run on two connections)", async () => {
    const { db, campaignId, channel, rows } = await inFlightRows(6000, "lock");
    const at = new Date();
    for (let round = 0; round < 6; round++) {
      const batch = rows.slice(round * 1000, round * 1000 + 1000);
      // The sends in one order, the acks (by delivery key) in the other.
      const sent = [...batch].reverse().map((r) => ({ id: r.id, channelId: channel, messageId: `m-${r.id}` }));
      const acks = batch.map((r) => ({ deliveryKey: `${campaignId}:${r.groupId}`, channelId: channel, messageId: `m-${r.id}` }));
      await Promise.all([recordSentMany(db, campaignId, sent, at), recordReceipts(db, "ack", acks, at)]);
    }
    const done = await db
      .select({ id: deliveries.id })
      .from(deliveries)
      .where(and(eq(deliveries.campaignId, campaignId), eq(deliveries.state, "sent"), isNotNull(deliveries.ackedAt)));
    expect(done.length).toBe(6000);
  });
});

describe("a campaign's group leaves pending once (deliveries_campaign_group_uq holds the rows past their claim)", () => {
  it("refuses a second row of the same campaign and group at its claim, and records receipts only for claimed rows", async () => {
    const { api, segment, channel } = await tenantWithSegment(server.url, 2);
    // Scheduled two days ahead: the campaign stays pending and no engine touches its rows.
    const { id_campaign: campaignId } = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 2 * 86_400_000)) });
    const db = await getDb();
    const [first] = await db.select().from(deliveries).where(eq(deliveries.campaignId, campaignId)).orderBy(deliveries.position).limit(1);
    // A receipt for a row no claim took is not one of its messages.
    await recordReceipts(db, "ack", [{ deliveryKey: `${campaignId}:${first.groupId}`, channelId: channel, messageId: "m-early" }], new Date());
    const acked = () =>
      db
        .select({ id: deliveries.id })
        .from(deliveries)
        .where(and(eq(deliveries.campaignId, campaignId), isNotNull(deliveries.ackedAt)));
    expect(await acked()).toEqual([]);
    // A stray copy of the group (the fan-out never writes one): pending, it is outside the index.
    const [copy] = await db
      .insert(deliveries)
      .values({ campaignId, groupId: first.groupId, channelId: channel, groupName: first.groupName, position: 99 })
      .returning({ id: deliveries.id });
    await db.update(deliveries).set({ state: "sending" }).where(eq(deliveries.id, first.id));
    const refused = await db
      .update(deliveries)
      .set({ state: "sending" })
      .where(eq(deliveries.id, copy.id))
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(isUniqueViolation(refused)).toBe(true);
    await recordReceipts(db, "ack", [{ deliveryKey: `${campaignId}:${first.groupId}`, channelId: channel, messageId: "m-1" }], new Date());
    expect(await acked()).toEqual([{ id: first.id }]);
  });
});

describe("a delivery's receipts update it in place (deliveries' fillfactor, docs/benchmarks.md#moderation)", () => {
  // A HOT update (no indexed column changed, room on the page) writes no index entry and a smaller WAL record: the
  // row's new version stays on its page. With full pages (fillfactor 100) nearly every ack's version moved to another
  // page; with room left, a few rows whose sent mark already moved them (their page was full then) may move again.
  it("keeps acked rows on the page their sent mark left them on", async () => {
    const { db, campaignId, channel, rows } = await inFlightRows(400, "page");
    const at = new Date();
    await recordSentMany(
      db,
      campaignId,
      rows.map((r) => ({ id: r.id, channelId: channel, messageId: `m-${r.id}` })),
      at,
    );
    const pages = async () =>
      new Map(
        rowsOf<{ id: number; page: number }>(
          await db.execute(sql`select id, (ctid::text::point)[0]::int as page from ${deliveries} where campaign_id = ${campaignId} and id_group like 'page-%'`),
        ).map((r) => [Number(r.id), r.page]),
      );
    const sentPages = await pages();
    // The acks fit on their pages once the versions the sent mark replaced are pruned, which PostgreSQL does only past
    // its prune horizon: a transaction older than the sent mark's, even one in another database (the other test files'
    // on the same cluster, taken in at snapshot time), held it back; 314–367 of 400 rows moved with four files at once.
    // Wait until none is older, the sent mark's xid read from its rows.
    const [{ xid }] = rowsOf<{ xid: string }>(await db.execute(sql`select xmin::text as xid from ${deliveries} where id = ${rows[0].id}`));
    await untilNoSnapshotOlderThan(db, xid);
    await recordReceipts(
      db,
      "ack",
      rows.map((r) => ({ deliveryKey: `${campaignId}:${r.groupId}`, channelId: channel, messageId: `m-${r.id}` })),
      at,
    );
    const ackedPages = await pages();
    const moved = [...sentPages].filter(([id, page]) => ackedPages.get(id) !== page);
    expect(moved.length).toBeLessThan(rows.length / 4);
  });
});
