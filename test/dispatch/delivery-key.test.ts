import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { campaigns, deliveries } from "../../db/schema";
import { buildMessage } from "../../server/dispatch/build-message";
import { recordSentFromEvent } from "../../server/dispatch/reconcile";
import { recordReceipts } from "../../server/dispatch/record-receipt";
import { getSettings } from "../../server/settings/get-settings";
import { brasiliaMinute, createCampaign, tenantWithSegment } from "../campaigns";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe("a delivery key the engine makes", () => {
  // Two readers of the key (the receipts and the provider's message_sent) parsed it apart once, at the last
  // and at the first colon: both must find the delivery the key was made for.
  it("finds its delivery through the receipts and through the provider's message_sent", async () => {
    const { api, segment, channel } = await tenantWithSegment(server.url, 3);
    // Scheduled two days ahead: the campaign stays pending and no engine touches its rows.
    const { id_campaign: campaignId } = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 2 * 86_400_000)) });
    const db = await getDb();
    const [c] = await db.select().from(campaigns).where(eq(campaigns.id, campaignId));
    const settings = await getSettings(db, c.tenantId);
    const rows = await db.update(deliveries).set({ state: "sending" }).where(eq(deliveries.campaignId, campaignId)).returning();
    expect(rows.length).toBe(3);
    const receipts = rows.map((d) => ({ channelId: channel, deliveryKey: buildMessage(c, d, settings).deliveryKey, messageId: `m-${d.id}` }));
    const at = new Date();
    await recordSentFromEvent(db, receipts, at);
    await recordReceipts(db, "ack", receipts, at);
    const after = await db
      .select({ state: deliveries.state, messageId: deliveries.providerMessageId, ackedAt: deliveries.ackedAt })
      .from(deliveries)
      .where(eq(deliveries.campaignId, campaignId));
    expect(after.map((d) => d.state)).toEqual(["sent", "sent", "sent"]);
    expect(after.every((d) => d.ackedAt !== null && d.messageId?.startsWith("m-"))).toBe(true);
  });
});
