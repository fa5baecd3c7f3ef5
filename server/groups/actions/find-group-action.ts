import { and, eq } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { groupActions } from "../../../db/schema";
import { NotFound } from "../../errors";

/** The tenant's group action, or 404 (another tenant's answers exactly like a missing one). */
export async function findGroupAction(db: Db | Tx, tenantId: string, actionId: string) {
  const [row] = await db
    .select()
    .from(groupActions)
    .where(and(eq(groupActions.id, actionId), eq(groupActions.tenantId, tenantId)));
  if (!row) throw new NotFound(`Group action ${actionId} not found.`);
  return row;
}
