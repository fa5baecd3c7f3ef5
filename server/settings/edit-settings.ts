import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type AuditWrite, auditedStatement } from "../audit/audited";
import { tenantSettings, tenants } from "../../db/schema";
import { BadRequest, NotFound } from "../errors";
import type { MessagingProvider } from "../messaging/provider";
import { checkTestGroups } from "./test-groups";
import { getSettings, mergeSettings } from "./get-settings";
import { settingsRuleViolations, settingsSections, type Settings, type SettingsPatch } from "./schema";

/**
 * Partial edit. The tenant row is locked for the read-merge-write, so two edits of different fields at
 * the same time both survive. Every rule is checked on the merged result (400 naming the field). New
 * test groups are checked against the platform first (`provider`), outside the transaction.
 */
export async function editSettings(
  db: Db,
  tenantId: string,
  patch: SettingsPatch,
  now: Date,
  provider?: MessagingProvider,
  audit?: AuditWrite,
): Promise<{ updated: string[]; settings: Settings }> {
  if (settingsSections.every((k) => patch[k] === undefined)) throw new BadRequest(`body: send at least one of ${settingsSections.join(", ")}`);
  if (patch.test_groups?.length && provider) await checkTestGroups(db, provider, tenantId, patch.test_groups);
  return db.transaction(async (tx) => {
    // NO KEY UPDATE: serialises edits of this tenant's settings without blocking inserts that reference the tenant.
    const [tenant] = await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).for("no key update");
    if (!tenant) throw new NotFound("Tenant not found.");
    const current = await getSettings(tx, tenantId);
    const settings = mergeSettings(current, patch);
    const violations = settingsRuleViolations(settings, patch);
    if (violations.length > 0) throw new BadRequest(violations.map((v) => `${v.path}: ${v.message}`).join("; "));
    const updated = changedFields(current, settings);
    if (updated.length > 0) {
      const write = tx
        .insert(tenantSettings)
        .values({ tenantId, settings, updatedAt: now })
        .onConflictDoUpdate({ target: tenantSettings.tenantId, set: { settings, updatedAt: now } });
      await auditedStatement(tx, write, audit, tenantId);
    }
    return { updated, settings };
  });
}

/** Dotted paths of the leaf fields that differ; an array (a day's windows) is one leaf. */
export function changedFields(before: unknown, after: unknown, path = ""): string[] {
  if (typeof after === "object" && after !== null && !Array.isArray(after)) {
    const prev = (typeof before === "object" && before !== null ? before : {}) as Record<string, unknown>;
    return Object.entries(after).flatMap(([k, v]) => changedFields(prev[k], v, path ? `${path}.${k}` : k));
  }
  return canonical(before) === canonical(after) ? [] : [path];
}

/** JSON with object keys sorted: jsonb does not keep key order. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    typeof x === "object" && x !== null && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
