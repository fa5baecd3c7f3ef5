import type { Db } from "../../db/client";
import { type AuditWrite, auditedStatement } from "../audit/audited";
import { segments } from "../../db/schema";
import { newId } from "../ids";
import type { MessagingProvider } from "../messaging/provider";
import { resolveGroups } from "./resolve-groups";
import { writeSegmentMembers } from "./write-segment-members";

export async function createSegment(
  db: Db,
  provider: MessagingProvider,
  tenantId: string,
  input: { name: string; id_channel: string[]; groups: string[] },
  now: Date,
  audit?: AuditWrite,
) {
  const resolved = await resolveGroups(db, provider, tenantId, input.id_channel, input.groups);
  const id = newId("segment");
  await db.transaction(async (tx) => {
    await auditedStatement(tx, tx.insert(segments).values({ id, tenantId, name: input.name, createdAt: now, updatedAt: now }), audit, id);
    await writeSegmentMembers(tx, id, resolved.channelIds, resolved.groups, undefined, { fresh: true });
  });
  return { id, name: input.name, totalGroups: resolved.groups.length };
}
