/**
 * `tsx bench/make-tenants.ts <count> <prefix>`: creates that many tenants in one process (the admin CLI
 * would start a process per tenant: minutes for 200 on PGlite) on the database of the environment
 * (DATABASE_URL, else PGlite under DATA_DIR: run it before the server starts). Prints one JSON line:
 * `[{"tenant_id":"…","api_key":"sk_live_…"}, …]`.
 */
import { openDatabase } from "../db/client";
import { createTenant } from "../server/auth/create-tenant";
import { env } from "../server/env";

const count = Number(process.argv[2]);
const prefix = process.argv[3] ?? "bench";
if (!Number.isInteger(count) || count < 1) throw new Error("usage: tsx bench/make-tenants.ts <count> <prefix>");

const database = await openDatabase({ url: env.databaseUrl, dataDir: env.dataDir });
try {
  const out: { tenant_id: string; api_key: string }[] = [];
  const stamp = Date.now().toString(36);
  for (let i = 0; i < count; i++) {
    const { tenantId, apiKey } = await createTenant(database.db, {
      name: `${prefix} ${i}`,
      email: `${prefix}-${i}-${stamp}@example.com`,
      password: "senha-segura-bench-123",
    });
    out.push({ tenant_id: tenantId, api_key: apiKey });
  }
  console.log(JSON.stringify(out));
} finally {
  await database.close();
}
