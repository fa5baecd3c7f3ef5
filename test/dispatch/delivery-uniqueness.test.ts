import { and, eq, isNotNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { deliveries } from "../../db/schema";
import { recordReceipts } from "../../server/dispatch/record-receipt";
import { brasiliaMinute, createCampaign, tenantWithSegment } from "../campaigns";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
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
