import type { integrations } from "../../db/schema";
import { decryptSecret } from "../crypto/secret-box";
import { hookUrl } from "./hook-url";
import { allFields, type IntegrationType } from "./types";

export function readCredentials(row: typeof integrations.$inferSelect): Record<string, string> {
  return JSON.parse(decryptSecret(row.credentials)) as Record<string, string>;
}

/** The public shape: which fields are set, never a value; the URL its webhook posts to (`hooksToken`: the tenant's). */
export function integrationView(row: typeof integrations.$inferSelect, hooksToken: string) {
  const credentials = readCredentials(row);
  const fields = Object.fromEntries(allFields(row.type as IntegrationType).map((f) => [f, typeof credentials[f] === "string" && credentials[f].length > 0]));
  return {
    id_integration: row.type,
    label: row.label,
    configured: true,
    fields,
    webhook_url: hookUrl(row.type, hooksToken),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
