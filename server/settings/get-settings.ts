import { eq, sql, type Column, type SQL } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { tenantSettings, tenants } from "../../db/schema";
import { NotFound } from "../errors";
import { defaultSettings } from "./defaults";
import type { Settings } from "./schema";

/** The tenant's settings: the saved object over the defaults (a tenant that never saved has exactly the defaults). */
export async function getSettings(db: Db | Tx, tenantId: string): Promise<Settings> {
  const [row] = await db
    .select({ settings: tenantSettings.settings })
    .from(tenants)
    .leftJoin(tenantSettings, eq(tenantSettings.tenantId, tenants.id))
    .where(eq(tenants.id, tenantId));
  if (!row) throw new NotFound("Tenant not found.");
  return settingsFrom(row.settings);
}

/**
 * The saved settings of a tenant as a SQL expression (`tenantId`: a qualified column of the statement's row): a
 * campaign step reads them in its lease's statement. settingsFrom() turns the value into the settings.
 */
export const savedSettingsSql = (tenantId: SQL | Column) =>
  sql<unknown>`(select ${tenantSettings.settings} from ${tenantSettings} where ${tenantSettings.tenantId} = ${tenantId})`;

/** The settings from a saved value (null: never saved, the defaults), as getSettings returns them. */
export function settingsFrom(saved: unknown): Settings {
  return mergeSettings<Settings>(defaultSettings, typeof saved === "string" ? JSON.parse(saved) : saved);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `base` with every field `over` sets put in its place: objects merge key by key, anything else (values,
 * a day's windows list) is replaced whole. Keys `base` lacks are dropped; the result shares nothing with either.
 */
export function mergeSettings<T>(base: T, over: unknown): T {
  if (!isPlainObject(base)) return structuredClone((over === undefined ? base : over) as T);
  const patch = isPlainObject(over) ? over : {};
  return Object.fromEntries(Object.entries(base).map(([k, v]) => [k, mergeSettings(v, patch[k])])) as T;
}
