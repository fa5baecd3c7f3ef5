/**
 * CONTRACT §7 failover on the simulator (docs/numbers.md#several-numbers-per-group): a send the platform refuses
 * because the number is not in the group (it left after the segment was saved) moves to the segment's other
 * number that is in it — one message in the group, no retry through the first — and that number stops reaching it.
 */
import { and, eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { segmentGroupChannels } from "../../db/schema";
import { simulatedOwnNumber } from "../../server/messaging/simulator";
import { getServices } from "../../server/services";
import { serverWithRunner } from "../campaigns";
import { newTenant, until, zeroPacing } from "../helpers";

const rig = serverWithRunner();

it("a send refused as not in the group goes through the other number in it, once; the first no longer reaches the group", async () => {
  const t = await newTenant(rig.server.url);
  expect((await t("PATCH", "/api/external/edit-settings", zeroPacing)).status).toBe(200);
  const b = (await t("POST", "/api/external/create-channel", { name: "B" })).json.id_channel as string;
  const a = (await t("POST", "/api/external/create-channel", { name: "A" })).json.id_channel as string;
  const g = (await t("GET", `/api/external/list-groups/${a}`)).json.groups[0].id_group as string;
  const participants = (body: unknown) => t("POST", `/api/simulator/groups/${encodeURIComponent(g)}/participants`, body);
  // b joins a's group: both reach it, and the campaign picks b (the segment's first number).
  expect((await participants({ join: [simulatedOwnNumber(b)] })).status).toBe(200);
  const seg = await t("POST", "/api/external/create-segment", { name: "B e A", id_channel: [b, a], groups: [g] });
  expect(seg.status, seg.text).toBe(201);
  // b leaves on the phone after the segment was saved.
  expect((await participants({ leave: [simulatedOwnNumber(b)] })).status).toBe(200);

  const { json: campaign } = await t("POST", "/api/external/create-campaign/message", { name: "x", id_segment: seg.json.id_segment, message: "Olá" });
  const done = await until(
    async () => (await t("GET", `/api/external/info-campaign/${campaign.id_campaign}`)).json,
    (c) => c.status === "completed" || c.status === "failed",
    30_000,
  );
  expect(done.status).toBe("completed");
  expect(done.channels).toEqual(expect.arrayContaining([expect.objectContaining({ id_channel: a, sent: 1, failed: 0 })]));
  const log = (await t("GET", `/api/simulator/messages?id_campaign=${campaign.id_campaign}`)).json.messages;
  expect(log.map((m: { id_channel: string; id_group: string }) => [m.id_channel, m.id_group])).toEqual([[a, g]]);
  const { db } = await getServices();
  const reach = await db
    .select({ channelId: segmentGroupChannels.channelId })
    .from(segmentGroupChannels)
    .where(and(eq(segmentGroupChannels.segmentId, seg.json.id_segment), eq(segmentGroupChannels.groupId, g)));
  expect(reach.map((r) => r.channelId)).toEqual([a]);
});
