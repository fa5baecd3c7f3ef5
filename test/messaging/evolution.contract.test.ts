import { startEvolutionProvider } from "../evolution-harness";
import { describeProviderContract, type PlatformMessage } from "../provider-contract";

describeProviderContract("evolution (against the fake Evolution API v2)", async () => {
  const { fake, provider, close } = await startEvolutionProvider();
  return {
    provider,
    pair: (id) => fake.pair(id),
    goOffline: (id) => fake.setState(id, "close"),
    received: async (id) =>
      fake.messages
        .filter((m) => m.instance === id)
        .map(
          (m): PlatformMessage => ({
            groupId: m.number,
            type: (m.endpoint === "sendText" ? "text" : m.endpoint === "sendWhatsAppAudio" ? "audio" : m.body.mediatype) as PlatformMessage["type"],
            text: String(m.body.text ?? m.body.caption ?? ""),
            mediaUrl: (m.body.media ?? m.body.audio ?? null) as string | null,
            mentionAll: m.body.mentionsEveryOne === true,
            linkPreview: m.body.linkPreview === true,
          }),
        ),
    deliver: async (_id, receipts) => {
      for (const r of receipts) await fake.receipt(r.messageId, "DELIVERY_ACK");
      for (const r of receipts.slice(0, 3)) await fake.receipt(r.messageId, "READ");
    },
    close,
  };
});
