import { eq } from "drizzle-orm";
import { getDb } from "../../db/client";
import { simulatorGroups } from "../../db/schema";
import { SimulatorProvider } from "../../server/messaging/simulator";
import { describeProviderContract } from "../provider-contract";

describeProviderContract("simulator", async () => {
  const db = await getDb();
  const provider = new SimulatorProvider(db, { pairingMs: 0, groupsPerChannel: 5 });
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
        ...(m.poll ? { options: (m.poll as { options: string[] }).options } : {}),
        mentionAll: m.mentionAll,
        linkPreview: m.linkPreview,
      })),
    deliver: async () => {}, // the simulator reports receipts by itself
    close: async () => {},
    groups: {
      groupInfo: async (_id, groupId) => {
        const [row] = await db.select().from(simulatorGroups).where(eq(simulatorGroups.groupId, groupId));
        const people = await provider.participants(groupId);
        return {
          name: row.name,
          description: row.description,
          pictureUrl: row.pictureUrl,
          adminsOnly: row.adminsOnly,
          admins: people.filter((p) => p.admin).map((p) => p.participant),
          size: people.length,
        };
      },
      joinGroup: async (id, groupId, participants) => void (await provider.joinParticipants(id, groupId, participants)),
      leaveGroup: async (id, groupId, participants) => void (await provider.leaveParticipants(id, groupId, participants)),
      revokeInvite: async (id, groupId) => void (await provider.revokeInvite(id, groupId)),
      loseGroup: async (id, groupId, how) => void (await provider.setGroupState(id, groupId, how === "gone" ? { exists: false } : { admin: false })),
    },
  };
});
