import { and, eq } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { launches } from "../../../db/schema";
import { NotFound } from "../../errors";

/** The tenant's launch, or 404 (another tenant's launch answers exactly like a missing one). */
export async function findOwnedLaunch(db: Db, tenantId: string, launchId: string) {
  const [launch] = await db
    .select()
    .from(launches)
    .where(and(eq(launches.id, launchId), eq(launches.tenantId, tenantId)));
  if (!launch) throw new NotFound(`Launch ${launchId} not found`);
  return launch;
}
