import { describe, expect, it } from "vitest";
import type { campaigns, deliveries } from "../../db/schema";
import { defaultSettings } from "../settings/defaults";
import type { Settings } from "../settings/schema";
import { buildMessage, buildMessages } from "./build-message";

type Campaign = typeof campaigns.$inferSelect;
type Delivery = typeof deliveries.$inferSelect;

const campaign = (content: object, messageType: Campaign["messageType"] = "text") =>
  ({ id: "campaign_1:%x", messageType, content, linkPreview: true, mentionAll: true }) as Campaign;
const delivery = (n: number) =>
  ({ id: n, channelId: `channel_${n % 2}`, groupId: `12036300000${n}@g.us`, groupName: `Grupo ${n}`, updatedAt: new Date(1_700_000_000_000 + n) }) as Delivery;

const settings = defaultSettings as Settings;

describe("buildMessages", () => {
  const batch = [1, 2, 3].map(delivery);
  const forwardOf = { groupId: "120363000009@g.us", messageId: "SIM1" };
  it.each([
    ["a text", campaign({ message: "Olá!" })],
    ["a text with variations", campaign({ message: "{Olá|Oi}, {{group_name}}!", variations: true })],
    ["a poll", campaign({ message: "Qual?", poll: { question: "Qual?", options: ["a", "b"], multiple: false } }, "poll")],
    ["an image", campaign({ message: "Veja", media_url: "https://example.com/a.png" }, "image")],
  ])("builds for %s what buildMessage builds for each delivery", (_, c) => {
    for (const fwd of [undefined, forwardOf]) expect(buildMessages(c, batch, settings, fwd)).toEqual(batch.map((d) => buildMessage(c, d, settings, fwd)));
  });
});
