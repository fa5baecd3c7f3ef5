import { count, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import type { AuditWrite } from "../audit/audited";
import { channels, tenants } from "../../db/schema";
import { LimitReached, NotFound } from "../errors";
import { newId } from "../ids";
import type { MessagingProvider } from "../messaging/provider";

export async function createChannel(db: Db, provider: MessagingProvider, tenantId: string, name: string, now: Date, audit?: AuditWrite) {
  const id = newId("channel");
  // The tenant row lock serialises concurrent creates, so the limit cannot be overshot.
  await db.transaction(async (tx) => {
    const [tenant] = await tx.select().from(tenants).where(eq(tenants.id, tenantId)).for("update");
    if (!tenant) throw new NotFound("Tenant not found.");
    const [{ value: current }] = await tx.select({ value: count() }).from(channels).where(eq(channels.tenantId, tenantId));
    if (current >= tenant.channelLimit) {
      throw new LimitReached(
        `Channel limit reached: ${current} of ${tenant.channelLimit} channels in use.`,
        current,
        tenant.channelLimit,
        "channel_limit_reached",
      );
    }
    await tx.insert(channels).values({ id, tenantId, name, status: "connecting", providerRef: "", createdAt: now, updatedAt: now });
  });
  // The provider is called outside the transaction (it may use the same database) and undone on failure.
  let ref: string;
  try {
    ({ ref } = await provider.createChannel({ id, name }));
  } catch (err) {
    await db.delete(channels).where(eq(channels.id, id));
    throw err;
  }
  // The channel exists once the platform made it: its audit entry goes with the platform's reference.
  return db.transaction(async (tx) => {
    const [row] = await tx.update(channels).set({ providerRef: ref }).where(eq(channels.id, id)).returning();
    await audit?.(tx, id);
    return row;
  });
}
