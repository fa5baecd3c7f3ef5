import { asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { channels } from "../../db/schema";

export async function listChannels(db: Db, tenantId: string) {
  return db.select().from(channels).where(eq(channels.tenantId, tenantId)).orderBy(asc(channels.createdAt));
}
