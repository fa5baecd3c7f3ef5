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
 * Stores clicks and adds them to their groups' `clicks`, in one statement (one round trip, atomic): the
 * rows of launch_clicks, and one UPDATE per group however many clicks it got.
 */
export async function recordClicks(db: Db, clicks: readonly Click[]): Promise<void> {
  if (clicks.length === 0) return;
  const rows = sql.join(
    clicks.map((c) => sql`(${c.launchId}, ${tsParam(c.at)}, ${c.day}, ${c.position}, ${c.utmSource}, ${c.utmMedium}, ${c.utmCampaign}, ${c.visitor})`),
    sql`, `,
  );
  const perGroup = new Map<string, { launchId: string; position: number; n: number }>();
  for (const c of clicks) {
    if (c.position === null) continue;
    const key = `${c.launchId}\n${c.position}`;
    const g = perGroup.get(key) ?? { launchId: c.launchId, position: c.position, n: 0 };
    g.n++;
    perGroup.set(key, g);
  }
  const insert = sql`insert into launch_clicks (launch_id, at, day, position, utm_source, utm_medium, utm_campaign, visitor) values ${rows}`;
  if (perGroup.size === 0) {
    await db.execute(insert);
    return;
  }
  // Groups in key order: two processes' batches lock the rows they share in the same order.
  const counts = sql.join(
    [...perGroup.values()]
      .sort((a, b) => (a.launchId === b.launchId ? a.position - b.position : a.launchId < b.launchId ? -1 : 1))
      .map((g) => sql`(${g.launchId}::text, ${g.position}::int, ${g.n}::int)`),
    sql`, `,
  );
  await db.execute(sql`with click as (${insert})
    update launch_groups g set clicks = g.clicks + v.n from (values ${counts}) as v(launch_id, position, n)
    where g.launch_id = v.launch_id and g.position = v.position`);
}

interface Waiting {
  click: Click;
  done: (err?: unknown) => void;
}

/**
 * Group commit for the link's clicks: a visit waits until its click is committed (nothing is held in
 * memory after the redirect, so a crash loses no counted click), but the visits that arrive while a
 * write is in flight go together in the next one. One visitor alone costs one statement; 200 a second
 * cost a few statements a second instead of 200 commits on the same group row (whose lock each commit
 * held: bench/link.ts measured that queue at p99 2 s on PostgreSQL, and PGlite could not keep up).
 */
export class ClickWriter {
  private queue: Waiting[] = [];
  private writing = false;

  constructor(private readonly maxBatch = 500) {}

  record(db: Db, click: Click): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ click, done: (err) => (err ? reject(err) : resolve()) });
      if (!this.writing) void this.drain(db);
    });
  }

  private async drain(db: Db) {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await recordClicks(
            db,
            batch.map((w) => w.click),
          );
          for (const w of batch) w.done();
        } catch (err) {
          for (const w of batch) w.done(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
