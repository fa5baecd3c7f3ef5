import { createHmac } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import { persistentSecret } from "../env";

/**
 * A counted visit of the join link (docs/decisions.md#launches, "The link"): its Brasília day, the group it
 * was sent to, its UTM tags and a visitor id that counts distinct visitors per launch per day without
 * storing the address.
 */
export interface Click {
  launchId: string;
  at: Date;
  /** Brasília day, YYYY-MM-DD. */
  day: string;
  /** The group the visitor was sent to; null when every group was full (the closed page). */
  position: number | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  visitor: string;
}

const salts = new Map<string, Buffer>();

/**
 * The day's salt: HMAC-SHA256 of the day under the service's secret (ENCRYPTION_KEY, or the key generated
 * once under DATA_DIR: server/crypto/secret-box.ts uses the same one), with a label of its own. It is never
 * stored, and the next day's cannot be derived from today's visitor ids: a visitor id cannot be turned
 * back into an address by trying every IPv4 address without the secret, nor linked across days.
 */
function daySalt(day: string): Buffer {
  let salt = salts.get(day);
  if (!salt) {
    salt = createHmac("sha256", persistentSecret("ENCRYPTION_KEY", "encryption-key")).update(`launch-visitor-salt:${day}`).digest();
    if (salts.size > 8) salts.clear();
    salts.set(day, salt);
  }
  return salt;
}

/** HMAC-SHA256(day salt, launch id + client address), base64url: the same visitor on the same day and launch gives the same id. */
export function visitorId(clientAddress: string, launchId: string, day: string): string {
  return createHmac("sha256", daySalt(day)).update(`${launchId}\n${clientAddress}`).digest("base64url");
}

/** A UTM value as stored: trimmed, at most 200 characters, null when absent or empty. */
export function utmValue(raw: string | null): string | null {
  const v = raw?.trim().slice(0, 200);
  return v ? v : null;
}

/**
 * Stores the click and adds it to its group's `clicks`, in one statement (one round trip, atomic, no
 * transaction held open across two). Written before the redirect answers: bench/link.ts measured this
 * at p99 well under the 20 ms target at 200 req/s (docs/launches.md), so no click waits in memory.
 */
export async function recordClick(db: Db, c: Click): Promise<void> {
  const insert = sql`insert into launch_clicks (launch_id, at, day, position, utm_source, utm_medium, utm_campaign, visitor)
    values (${c.launchId}, ${tsParam(c.at)}, ${c.day}, ${c.position}, ${c.utmSource}, ${c.utmMedium}, ${c.utmCampaign}, ${c.visitor})`;
  if (c.position === null) {
    await db.execute(insert);
    return;
  }
  await db.execute(sql`with click as (${insert})
    update launch_groups set clicks = clicks + 1 where launch_id = ${c.launchId} and position = ${c.position}`);
}
