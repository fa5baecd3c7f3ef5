import { createHmac } from "node:crypto";
import { sql } from "drizzle-orm";
import { type Db, isEmbedded } from "../../../db/client";
import { commitWithoutFlush, tsParam } from "../../../db/errors";
import { rowsOf } from "../../../db/params";
import { persistentSecret } from "../../env";
import { addressKey } from "../../http/client-address";
import type { StoredMetaEvent } from "./meta-event";

/**
 * At most this many clicks of one client address on one launch are counted in `clickCapWindowSeconds`
 * (docs/decisions.md#the-join-link-in-detail, "Clicks"); the visits past it are still sent to their group. Generous,
 * because many people can share an address (mobile carriers' NAT); a script sending the link in a loop is
 * not counted past it. The address is keyed as every per-address limit is (`addressKey`: an IPv6 client
 * by its /64). On PostgreSQL the count lives in rate_limit_buckets, so N processes do not allow N times as
 * many; on embedded PGlite one process owns the database, so its memory is the shared place (as for the
 * API's limits, server/http/rate-limit.ts) and a visit costs no bucket write.
 */
export const clicksPerVisitor = 60;
export const clickCapWindowSeconds = 600;

/**
 * A visit of the join link sent to a group (docs/decisions.md#launches, "The link"): its Brasília day, the
 * group, its UTM tags, a visitor id that counts distinct visitors per launch per day without storing the
 * address, and the key of its address's click cap.
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
  utmContent: string | null;
  utmTerm: string | null;
  /** The visit carried `fbclid` / `gclid`. */
  fbclid: boolean;
  gclid: boolean;
  visitor: string;
  /** clickCapKey(address, launch): the rate_limit_buckets row this click takes a point from. */
  capKey: string;
  /** The launch's Meta Conversions API event for this click (tracking.meta), written to meta_events when the click is counted. */
  meta?: StoredMetaEvent;
}

const salts = new Map<string, Buffer>();
const secret = (label: string) => createHmac("sha256", persistentSecret("ENCRYPTION_KEY", "encryption-key")).update(label).digest();

/**
 * The day's salt: HMAC-SHA256 of the day under the service's secret (ENCRYPTION_KEY, or the key generated
 * once under DATA_DIR: server/crypto/secret-box.ts uses the same one), with a label of its own. It is never
 * stored, and the next day's cannot be derived from today's visitor ids: a visitor id cannot be turned
 * back into an address by trying every IPv4 address without the secret, nor linked across days.
 */
function daySalt(day: string): Buffer {
  let salt = salts.get(day);
  if (!salt) {
    salt = secret(`launch-visitor-salt:${day}`);
    if (salts.size > 8) salts.clear();
    salts.set(day, salt);
  }
  return salt;
}

/**
 * HMAC-SHA256(day salt, launch id + the address's key), base64url: the same visitor on the same day and
 * launch gives the same id. The address is keyed as the click cap keys it: each address of one IPv6 /64
 * (a phone's rotating privacy addresses) is one visitor.
 */
export function visitorId(clientAddress: string, launchId: string, day: string): string {
  return createHmac("sha256", daySalt(day))
    .update(`${launchId}\n${addressKey(clientAddress)}`)
    .digest("base64url");
}

let capSecret: Buffer | undefined;

/** The click cap's bucket key of an address on a launch: a keyed hash, so rate_limit_buckets holds no address either. */
export function clickCapKey(clientAddress: string, launchId: string): string {
  capSecret ??= secret("launch-click-cap");
  return `launch_click:${createHmac("sha256", capSecret)
    .update(`${launchId}\n${addressKey(clientAddress)}`)
    .digest("base64url")}`;
}

/** Half of a surrogate pair without its other half (a cut through an emoji), which PostgreSQL's json refuses. */
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A UTM value as stored: trimmed, lower case, at most 200 characters (longer ones cut), null when absent or empty.
 * A cut inside a character's surrogate pair leaves U+FFFD, as the UTF-8 encoding of a text parameter always made it.
 */
export function utmValue(raw: string | null): string | null {
  const v = raw?.trim().toLowerCase().slice(0, 200).trim().replace(loneSurrogate, "\ufffd");
  return v ? v : null;
}

/** The UTM tags and click ids of a visit's query, as a click keeps them. */
export function clickTags(query: URLSearchParams): Pick<Click, "utmSource" | "utmMedium" | "utmCampaign" | "utmContent" | "utmTerm" | "fbclid" | "gclid"> {
  return {
    utmSource: utmValue(query.get("utm_source")),
    utmMedium: utmValue(query.get("utm_medium")),
    utmCampaign: utmValue(query.get("utm_campaign")),
    utmContent: utmValue(query.get("utm_content")),
    utmTerm: utmValue(query.get("utm_term")),
    fbclid: query.has("fbclid"),
    gclid: query.has("gclid"),
  };
}

/** A cap bucket after a write: points taken in its window (counted or not) and when the window ends. */
export interface CapBucket {
  key: string;
  points: number;
  expireMs: number;
}

/** A click's Meta event as a jsonb parameter (null without one). */
const metaParam = (c: Click) => sql`${c.meta ? JSON.stringify(c.meta) : null}::jsonb`;

/**
 * Stores clicks and adds them to their groups' `clicks`, in one statement (one round trip, atomic), with
 * the Meta events of those that carry one (meta_events, the Conversions API's outbox). With
 * `sharedCap` (PostgreSQL) the statement also takes the cap's points (`recordCappedClicks`); without it
 * (PGlite: the process's memory held the cap) it is the plainest statement: on PGlite its CPU is the
 * link's own. Returns the cap buckets as they now are (none without `sharedCap`).
 */
export async function recordClicks(db: Db, clicks: readonly Click[], sharedCap: boolean): Promise<CapBucket[]> {
  if (clicks.length === 0) return [];
  if (sharedCap) return recordCappedClicks(db, clicks);
  const rows = sql.join(
    clicks.map(
      (c) =>
        sql`(${c.launchId}, ${tsParam(c.at)}, ${c.day}, ${c.position}, ${c.utmSource}, ${c.utmMedium}, ${c.utmCampaign}, ${c.utmContent}, ${c.utmTerm}, ${c.fbclid}, ${c.gclid}, ${c.visitor})`,
    ),
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
  const insert = sql`insert into launch_clicks (launch_id, at, day, position, utm_source, utm_medium, utm_campaign, utm_content, utm_term, fbclid, gclid, visitor) values ${rows}`;
  const withMeta = clicks.filter((c) => c.meta);
  const meta = withMeta.length
    ? sql`, meta_event as (insert into meta_events (launch_id, event_id, payload, created_at, next_attempt_at) select launch_id, payload->>'event_id', payload, at, at
        from (values ${sql.join(
          withMeta.map((c) => sql`(${c.launchId}::text, ${metaParam(c)}, ${tsParam(c.at)})`),
          sql`, `,
        )}) as m(launch_id, payload, at))`
    : sql``;
  if (perGroup.size === 0) {
    await db.execute(withMeta.length ? sql`with click as (${insert})${meta} select 1` : insert);
    return [];
  }
  // Groups in key order: two batches lock the rows they share in the same order.
  const counts = sql.join(
    [...perGroup.values()]
      .sort((a, b) => (a.launchId === b.launchId ? a.position - b.position : a.launchId < b.launchId ? -1 : 1))
      .map((g) => sql`(${g.launchId}::text, ${g.position}::int, ${g.n}::int)`),
    sql`, `,
  );
  await db.execute(sql`with click as (${insert})${meta}
    update launch_groups g set clicks = g.clicks + v.n from (values ${counts}) as v(launch_id, position, n)
    where g.launch_id = v.launch_id and g.position = v.position`);
  return [];
}

/**
 * A batch of clicks as ONE json parameter, read as rows: whatever the batch's size, drizzle builds and the driver
 * binds a single value and the statement's text never changes. On PostgreSQL a parameter per column and click
 * (15 a click) cost the link a quarter of its allocations (docs/benchmarks.md#the-join-link); `json`, not `jsonb`:
 * read once, it is not worth converting (the backend's CPU per statement measured the same as the VALUES list's).
 * On PGlite, whose parsing and planning run in the server's own thread, it cost more CPU than it saved.
 */
const visitRows = (clicks: readonly Click[]) =>
  sql`select * from json_to_recordset(${JSON.stringify(
    clicks.map((c, i) => ({
      i,
      launch_id: c.launchId,
      at: c.at,
      day: c.day,
      position: c.position,
      utm_source: c.utmSource,
      utm_medium: c.utmMedium,
      utm_campaign: c.utmCampaign,
      utm_content: c.utmContent,
      utm_term: c.utmTerm,
      fbclid: c.fbclid,
      gclid: c.gclid,
      visitor: c.visitor,
      cap_key: c.capKey,
      meta: c.meta ?? null,
    })),
  )}::json) as v(i int, launch_id text, at timestamptz, day text, position int, utm_source text, utm_medium text, utm_campaign text,
    utm_content text, utm_term text, fbclid boolean, gclid boolean, visitor text, cap_key text, meta jsonb)`;

/**
 * recordClicks on PostgreSQL: the same statement takes one point per click from its address's cap bucket
 * and stores only the clicks that fit under the cap (a point is never taken without its click being
 * stored, nor the reverse), and the Meta events of those counted clicks only. The buckets are
 * rate-limiter-flexible's fixed windows (rate_limit_buckets; a window that has ended restarts), locked in
 * key order, then the groups' rows: two processes' batches lock what they share in the same order.
 * It commits without waiting for the WAL flush (`commitWithoutFlush`): the visitor is redirected whether
 * or not the click is stored (a failed write costs a count, not a lead), so a crash of the database
 * server losing the last ~0.6 s of clicks, with their groups' counts and Meta events, whole, is the same
 * trade; the visit no longer waits behind a sending campaign's fsyncs.
 */
async function recordCappedClicks(db: Db, clicks: readonly Click[]): Promise<CapBucket[]> {
  const window = sql`make_interval(secs => ${clickCapWindowSeconds})`;
  const result = await db.execute(sql`
    with visit as (${visitRows(clicks)}),
    attempt as (select cap_key, count(*)::int as n, max(at) as at from visit group by cap_key),
    bucket as (
      insert into rate_limit_buckets as b (key, points, expire)
      select cap_key, n, at + ${window} from attempt where ${commitWithoutFlush} order by cap_key
      on conflict (key) do update set
        points = case when b.expire is null or b.expire <= excluded.expire - ${window} then excluded.points else b.points + excluded.points end,
        expire = case when b.expire is null or b.expire <= excluded.expire - ${window} then excluded.expire else b.expire end
      returning b.key, b.points, b.expire
    ),
    counted as (
      select v.* from (select visit.*, row_number() over (partition by cap_key order by i) as rank from visit) v
      join attempt a on a.cap_key = v.cap_key
      join bucket b on b.key = v.cap_key
      -- b.points - a.n: the points taken before this batch.
      where v.rank <= ${clicksPerVisitor} - (b.points - a.n)
    ),
    click as (
      insert into launch_clicks (launch_id, at, day, position, utm_source, utm_medium, utm_campaign, utm_content, utm_term, fbclid, gclid, visitor)
      select launch_id, at, day, position, utm_source, utm_medium, utm_campaign, utm_content, utm_term, fbclid, gclid, visitor from counted order by i
      returning launch_id, position
    ),
    -- Meta's server event of each counted click that carries one (the Conversions API's outbox).
    meta_event as (
      insert into meta_events (launch_id, event_id, payload, created_at, next_attempt_at)
      select launch_id, meta->>'event_id', meta, at, at from counted where meta is not null order by i
    ),
    per_group as (
      update launch_groups g set clicks = g.clicks + c.n
      from (select launch_id, position, count(*)::int as n from click where position is not null group by launch_id, position order by launch_id, position) c
      where g.launch_id = c.launch_id and g.position = c.position
    )
    select key, points, (extract(epoch from expire) * 1000)::float8 as expire_ms from bucket`);
  return rowsOf<{ key: string; points: number; expire_ms: number }>(result).map((r) => ({
    key: r.key,
    points: Number(r.points),
    expireMs: Number(r.expire_ms),
  }));
}

interface Waiting {
  click: Click;
  done: (err?: unknown) => void;
}

/**
 * Group commit for the link's clicks: a visit waits until its click is committed (nothing is held in
 * memory after the redirect, so a crash of this process loses no counted click), but the visits that arrive while a
 * write is in flight go together in the next one. One visitor alone costs one statement; 200 a second
 * cost a few statements a second instead of 200 commits on the same group row (whose lock each commit
 * held: bench/link.ts measured that queue at p99 2 s on PostgreSQL, and PGlite could not keep up).
 *
 * The cap's windows as this process knows them (`windows`): on PGlite they are the cap itself (points
 * taken here); on PostgreSQL, the buckets' state after this process's last write, kept only for a spent
 * one: its next visits skip the write until its window ends (the shared bucket said so, and it cannot be
 * refilled before then), so a flood costs no statement past its first batches.
 */
export class ClickWriter {
  private queue: Waiting[] = [];
  private writing = false;
  private readonly windows = new Map<string, { points: number; expireMs: number }>();

  constructor(private readonly maxBatch = 500) {}

  /** Stores the click if its address's cap allows it; resolves once committed (or known to be over the cap). */
  record(db: Db, click: Click): Promise<void> {
    const at = click.at.getTime();
    let w = this.windows.get(click.capKey);
    if (w && w.expireMs <= at) {
      this.windows.delete(click.capKey);
      w = undefined;
    }
    if (isEmbedded(db)) {
      if (!w) {
        if (this.windows.size >= 100_000) this.windows.clear();
        w = { points: 0, expireMs: at + clickCapWindowSeconds * 1000 };
        this.windows.set(click.capKey, w);
      }
      if (++w.points > clicksPerVisitor) return Promise.resolve();
    } else if (w && w.points >= clicksPerVisitor) {
      return Promise.resolve();
    }
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
          const buckets = await recordClicks(
            db,
            batch.map((w) => w.click),
            !isEmbedded(db),
          );
          if (this.windows.size >= 100_000) this.windows.clear();
          for (const b of buckets) if (b.points >= clicksPerVisitor) this.windows.set(b.key, { points: b.points, expireMs: b.expireMs });
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
