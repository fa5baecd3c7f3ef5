import { startEvolutionProvider } from "../evolution-harness";
import { evolutionSendErrors } from "../fake-evolution";
import { describeProviderContract, type PlatformMessage } from "../provider-contract";

describeProviderContract("evolution (against the fake Evolution API v2)", async () => {
  // A short client time-out, so that a slow gateway (answering after 1.5 s) loses answers.
  const { fake, provider, close } = await startEvolutionProvider({ timeoutMs: 800 });
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
    loseNextAnswer: async () => {
      fake.knobs.slowSends = 1;
      fake.knobs.slowSendMs = 1500;
    },
    settle: () => fake.idle(),
    refuseNext: async (_id, groupId, reason) =>
      fake.failSend({
        number: groupId,
        message: {
          rate_limited: evolutionSendErrors.rateOverlimit,
          transient: evolutionSendErrors.noSessions,
          permanent: "Owned media must be a url or base64",
        }[reason],
      }),
    close,
  };
});
