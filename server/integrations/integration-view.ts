import type { integrations } from "../../db/schema";
import { decryptSecret } from "../crypto/secret-box";
import { allFields, type IntegrationType } from "./types";

export function readCredentials(row: typeof integrations.$inferSelect): Record<string, string> {
  return JSON.parse(decryptSecret(row.credentials)) as Record<string, string>;
}

/** The public shape: which fields are set, never a value. */
export function integrationView(row: typeof integrations.$inferSelect) {
  const credentials = readCredentials(row);
  const fields = Object.fromEntries(allFields(row.type as IntegrationType).map((f) => [f, typeof credentials[f] === "string" && credentials[f].length > 0]));
  return {
    id_integration: row.type,
    label: row.label,
    configured: true,
    fields,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
