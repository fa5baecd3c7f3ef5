import { startEvolutionProvider } from "../evolution-harness";
import { evolutionSendErrors } from "../fake-evolution";
import { describeProviderContract, type PlatformMessage } from "../provider-contract";

describeProviderContract("evolution (against the fake Evolution API v2)", async () => {
  // A short client time-out, so that a slow gateway (answering after 4 s) loses answers; not shorter, or a loaded
  // machine loses ordinary answers too (instance/create posts two webhooks to us before it answers).
  const { fake, provider, close } = await startEvolutionProvider({ timeoutMs: 2000 });
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
            type: (m.endpoint === "sendText"
              ? "text"
              : m.endpoint === "sendWhatsAppAudio"
                ? "audio"
                : m.endpoint === "sendPoll"
                  ? "poll"
                  : m.body.mediatype) as PlatformMessage["type"],
            text: String(m.body.text ?? m.body.caption ?? m.body.name ?? ""),
            ...(m.endpoint === "sendPoll" ? { options: m.body.values as string[] } : {}),
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
      fake.knobs.slowSendMs = 4000;
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
    groups: {
      groupInfo: async (id, groupId) => {
        const g = fake.group(id, groupId)!;
        const inst = fake.instances.get(id)!;
        const people = g.participants ?? [];
        // The platform knows who a LID is (the number's own, in a LID-addressed group).
        const digits = (p: { id: string; phoneNumber?: string }) => (p.id === inst.lid ? inst.owner : (p.phoneNumber ?? p.id).split("@")[0]);
        return {
          name: g.subject,
          description: g.desc ?? null,
          pictureUrl: g.pictureUrl ?? null,
          adminsOnly: g.announce === true,
          admins: people.filter((p) => p.admin).map(digits),
          size: people.length,
        };
      },
      joinGroup: (id, groupId, participants) => fake.groupJoin(id, groupId, participants),
      leaveGroup: (id, groupId, participants) => fake.groupLeave(id, groupId, participants),
      revokeInvite: async (id, groupId) => fake.revokeInvite(id, groupId),
      loseGroup: async (id, groupId, how) => fake.loseGroup(id, groupId, how),
    },
  };
});
