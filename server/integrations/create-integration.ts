import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { integrations } from "../../db/schema";
import { encryptSecret } from "../crypto/secret-box";
import { Conflict, NotImplemented } from "../errors";
import { credentialFields, type IntegrationType } from "./types";

async function ensureAbsent(db: Db, tenantId: string, type: IntegrationType) {
  const [existing] = await db
    .select({ type: integrations.type })
    .from(integrations)
    .where(and(eq(integrations.tenantId, tenantId), eq(integrations.type, type)));
  if (existing) throw new Conflict(`The ${type} integration already exists; change it with edit-integrations.`, "integration_exists");
}

/**
 * create-integrations over the API: validated (401 → 400 → 409) like a real create, then 501 — the
 * spec labels the operation as a later phase. Nothing is stored, so a retry is always safe; the
 * dashboard (Integrações) is where integrations are created today.
 */
export async function createIntegrationViaApi(db: Db, tenantId: string, type: IntegrationType) {
  await ensureAbsent(db, tenantId, type);
  throw new NotImplemented(
    "Creating integrations through the API belongs to a later phase. Create it in the dashboard (Integrações); edit-integrations works on it.",
  );
}

/** The dashboard's create: credentials encrypted at rest (ENCRYPTION_KEY). */
export async function createIntegration(
  db: Db,
  tenantId: string,
  input: { type: IntegrationType; label?: string; credentials: Record<string, string> },
  now: Date,
) {
  await ensureAbsent(db, tenantId, input.type);
  const [row] = await db
    .insert(integrations)
    .values({
      tenantId,
      type: input.type,
      label: input.label ?? credentialFields[input.type].label,
      credentials: encryptSecret(JSON.stringify(input.credentials)),
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning();
  if (!row) throw new Conflict(`The ${input.type} integration already exists; change it with edit-integrations.`, "integration_exists");
  return row;
}
