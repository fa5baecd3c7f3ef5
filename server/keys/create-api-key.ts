import type { Db, Tx } from "../../db/client";
import { apiKeys } from "../../db/schema";
import { newId } from "../ids";
import { generateApiKey, sha256Hex } from "./api-key-format";

/** Creates a key and returns it in the clear: the only time it is ever shown. */
export async function createApiKey(db: Db | Tx, tenantId: string, name = "Default key") {
  const key = generateApiKey();
  const [row] = await db
    .insert(apiKeys)
    .values({ id: newId("key"), tenantId, name, prefix: key.slice(0, 12), keyHash: sha256Hex(key) })
    .returning();
  return { id: row.id, name: row.name, prefix: row.prefix, createdAt: row.createdAt, apiKey: key };
}
