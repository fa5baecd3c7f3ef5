import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { integrations } from "../../db/schema";
import { encryptSecret } from "../crypto/secret-box";
import { NotFound } from "../errors";
import { readCredentials } from "./integration-view";
import type { IntegrationType } from "./types";

/**
 * Merges credentials into the stored ones (`null` clears an optional field) and writes them again,
 * always under the current ENCRYPTION_KEY: an edit also completes a key rotation for that row.
 */
export async function editIntegration(
  db: Db,
  tenantId: string,
  input: { type: IntegrationType; label?: string; credentials?: Record<string, string | null> },
  now: Date,
) {
  return db.transaction(async (tx) => {
    const where = and(eq(integrations.tenantId, tenantId), eq(integrations.type, input.type));
    const [row] = await tx.select().from(integrations).where(where).for("update");
    if (!row) throw new NotFound(`The ${input.type} integration is not configured.`);
    const merged: Record<string, string> = { ...readCredentials(row) };
    for (const [field, value] of Object.entries(input.credentials ?? {})) {
      if (value === null) delete merged[field];
      else merged[field] = value;
    }
    const [updated] = await tx
      .update(integrations)
      .set({ credentials: encryptSecret(JSON.stringify(merged)), label: input.label ?? row.label, updatedAt: now })
      .where(where)
      .returning();
    return updated;
  });
}
