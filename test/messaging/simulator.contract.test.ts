import { getDb } from "../../db/client";
import { SimulatorProvider } from "../../server/messaging/simulator";
import { describeProviderContract } from "../provider-contract";

describeProviderContract("simulator", async () => {
  const provider = new SimulatorProvider(await getDb(), { pairingMs: 0, groupsPerChannel: 5 });
  return {
    provider,
    pair: async (id) => void (await provider.setOnline(id, true)),
    goOffline: async (id) => void (await provider.setOnline(id, false)),
    received: async (id) =>
      (await provider.messages({ channelIds: [id] })).map((m) => ({
        groupId: m.groupId,
        type: m.messageType as "text",
        text: m.text ?? "",
        mediaUrl: m.mediaUrl,
        mentionAll: m.mentionAll,
        linkPreview: m.linkPreview,
      })),
    deliver: async () => {}, // the simulator reports receipts by itself
    close: async () => {},
  };
});
