import { and, eq, isNotNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
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

describe("recording sends and acks of the same deliveries at once", () => {
  // 1,000-row loops: with the rows locked in opposite orders (the code before the fix) this deadlocked
  // on PostgreSQL in every run; on PGlite the two run one after the other.
  it("never deadlocks: both lock rows in id order (on PostgreSQL they run on two connections)", async () => {
    const { api, segment, channel } = await tenantWithSegment(server.url, 20);
    // Scheduled two days ahead: the campaign stays pending and no engine touches its rows.
    const { id_campaign: campaignId } = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 2 * 86_400_000)) });
    const db = await getDb();
    // In-flight deliveries of a loop, as the engine leaves them between the send and its record.
    const rows = await db
      .insert(deliveries)
      .values(
        Array.from({ length: 6000 }, (_, i) => ({
          campaignId,
          groupId: `lock-${String(i).padStart(5, "0")}`,
          channelId: channel,
          groupName: `L ${i}`,
          position: 1000 + i,
          state: "sending" as const,
        })),
      )
      .returning({ id: deliveries.id, groupId: deliveries.groupId });
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
