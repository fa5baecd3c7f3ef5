import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { launches, metaEvents } from "../../../db/schema";
import { decryptSecret } from "../../crypto/secret-box";
import { env } from "../../env";
import { mapLimit } from "../../map-limit";
import { claimRows, leaseFree, type RowLease } from "../../row-lease";
import { nextRetryDelay } from "../../webhooks/deliver-webhooks";
import { parseRetryAfter } from "../../webhooks/send-webhook";
import { deliverable, type StoredMetaEvent } from "../link/meta-event";

/**
 * The Meta Conversions API's delivery (docs/decisions.md#metas-conversions-api-issue-27-item-2): the `meta-events`
 * job claims the due events of meta_events, groups them by pixel (token and test code), and POSTs each group to
 * `{META_GRAPH_URL}/{pixel_id}/events` with `data` (up to 1,000 events), `access_token` and `test_event_code`
 * (https://developers.facebook.com/documentation/ads-commerce/conversions-api/using-the-api). A 2xx sends them;
 * 429, 5xx or no answer retries the whole request on the webhooks' schedule; any other status is final.
 */

/** Meta takes up to 1,000 events in one request's `data`. */
export const metaEventsPerRequest = 1000;
/** Meta refuses a whole request holding an event_time more than 7 days old: such an event fails here, unsent. */
export const metaEventMaxAgeMs = 7 * 86_400_000;
/** Requests in flight at once in one pass. */
const concurrency = 4;

export interface MetaSendResult {
  /** Meta's HTTP status; 0 when there was no answer (refused, time-out). */
  status: number;
  /** Meta's error message (`error.message`, with `error_user_msg` when given), or the network error. */
  error: string | null;
  retryAfterMs: number | null;
}

export type MetaSend = (pixelId: string, body: string) => Promise<MetaSendResult>;

/** What Meta's error body says (`{"error":{"message","error_user_msg",…}}`), else the start of the body. */
function metaError(status: number, text: string): string {
  let detail = text.slice(0, 300);
  try {
    const e = (JSON.parse(text) as { error?: { message?: string; error_user_msg?: string } }).error;
    if (e?.message) detail = e.error_user_msg ? `${e.message} (${e.error_user_msg})` : e.message;
  } catch {
    // Not JSON: the body's start as it came.
  }
  return `HTTP ${status}${detail ? `: ${detail}` : ""}`.slice(0, 500);
}

/**
 * One request to Meta. The URL is the operator's (META_GRAPH_URL) and the pixel id digits only (the schema), so
 * no tenant chooses where it goes: no webhook-style address filtering. The token travels in the JSON body, never in
 * the URL (which proxies log). Redirects are not followed. Never throws.
 */
export const postMetaEvents: MetaSend = async (pixelId, body) => {
  try {
    const res = await fetch(`${env.metaGraphUrl}/${pixelId}/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "group-campaigns-capi/1" },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(env.webhooks.timeoutMs),
    });
    const text = await res.text().catch(() => "");
    const ok = res.status >= 200 && res.status < 300;
    return {
      status: res.status,
      error: ok ? null : metaError(res.status, text),
      retryAfterMs: parseRetryAfter(res.headers.get("retry-after") ?? undefined, Date.now()),
    };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { status: 0, error: (e.cause?.code ?? e.cause?.message ?? e.message ?? String(err)).slice(0, 500), retryAfterMs: null };
  }
};

type Claimed = { id: number; launchId: string; payload: StoredMetaEvent; attempts: number; createdAt: Date };

/** Claims up to `limit` due events nobody holds (oldest first), under a renewed lease (server/row-lease.ts). */
function claimDue(db: Db, now: Date, limit: number): Promise<RowLease<Claimed>> {
  return claimRows(
    db,
    metaEvents,
    now,
    async (tx) =>
      (await tx
        .select({
          id: metaEvents.id,
          launchId: metaEvents.launchId,
          payload: metaEvents.payload,
          attempts: metaEvents.attempts,
          createdAt: metaEvents.createdAt,
        })
        .from(metaEvents)
        .where(and(eq(metaEvents.state, "pending"), lte(metaEvents.nextAttemptAt, now), leaseFree(metaEvents, now)))
        .orderBy(asc(metaEvents.id))
        .limit(limit)
        .for("update", { skipLocked: true })) as Claimed[],
  );
}

interface Outcome {
  state: "pending" | "sent" | "failed" | "canceled";
  /** Whether a request was made (an attempt counted). */
  attempted: boolean;
  status: number | null;
  error: string | null;
  retryAt: Date | null;
}

/**
 * Moves events to their outcome. A finished event loses the visitor's sealed address and user agent (kept only to be
 * sent); `fbc` and the rest stay for the log.
 */
async function record(db: Db, ids: number[], o: Outcome, at: Date) {
  const finished = o.state !== "pending";
  await db
    .update(metaEvents)
    .set({
      state: o.state,
      attempts: o.attempted ? sql`${metaEvents.attempts} + 1` : undefined,
      nextAttemptAt: o.retryAt ?? undefined,
      leaseUntil: null,
      lastStatus: o.status ?? undefined,
      lastError: o.error,
      finishedAt: finished ? at : null,
      payload: finished
        ? sql`${metaEvents.payload} #- '{user_data,sealed_client_ip_address}' #- '{user_data,client_ip_address}' #- '{user_data,client_user_agent}'`
        : undefined,
    })
    .where(and(inArray(metaEvents.id, ids), eq(metaEvents.state, "pending")));
}

/** What a request's answer means for its events (all alike: Meta takes or refuses a request as a whole). */
function outcomeOf(result: MetaSendResult, attempts: number, at: Date): Outcome {
  if (result.status >= 200 && result.status < 300) return { state: "sent", attempted: true, status: result.status, error: null, retryAt: null };
  const final = result.status >= 400 && result.status < 500 && result.status !== 429;
  const delay = final ? null : nextRetryDelay(attempts, result.retryAfterMs);
  if (delay === null) {
    const error = final ? result.error : `${result.error ?? `HTTP ${result.status}`} (gave up after ${attempts} attempts)`;
    return { state: "failed", attempted: true, status: result.status, error, retryAt: null };
  }
  return { state: "pending", attempted: true, status: result.status, error: result.error, retryAt: new Date(at.getTime() + delay) };
}

export interface MetaPass {
  sent: number;
  failed: number;
  retrying: number;
  canceled: number;
  requests: number;
}

/**
 * One pass of the `meta-events` job (inngest/jobs/meta-events.ts): claims and sends the due events, at most
 * `maxClaims` claims of `claimSize` events. Each launch's current `tracking.meta` decides where they go; a launch
 * whose tracking.meta was removed cancels its events. `send` is for tests of the wire (postMetaEvents by default).
 */
export async function deliverMetaEvents(db: Db, now = new Date(), opts: { send?: MetaSend; claimSize?: number; maxClaims?: number } = {}): Promise<MetaPass> {
  const pass: MetaPass = { sent: 0, failed: 0, retrying: 0, canceled: 0, requests: 0 };
  const send = opts.send ?? postMetaEvents;
  for (let claim = 0; claim < (opts.maxClaims ?? 10); claim++) {
    const lease = await claimDue(db, now, opts.claimSize ?? metaEventsPerRequest * 2);
    const rows = lease.rows;
    if (rows.length === 0) break;
    await lease.hold(() => sendClaimed(db, rows, now, send, pass));
    if (rows.length < (opts.claimSize ?? metaEventsPerRequest * 2)) break;
  }
  return pass;
}

/** One claim's events: grouped by pixel, canceled or failed unsent where they cannot go, the rest posted. */
async function sendClaimed(db: Db, rows: Claimed[], now: Date, send: MetaSend, pass: MetaPass) {
  const configs = await db
    .select({ id: launches.id, pixelId: launches.metaPixelId, token: launches.metaAccessToken, testCode: launches.metaTestEventCode })
    .from(launches)
    .where(inArray(launches.id, [...new Set(rows.map((r) => r.launchId))]));
  const requests = new Map<string, { pixelId: string; token: string; testCode: string | null; rows: Claimed[] }>();
  const canceled: number[] = [];
  const tooOld: number[] = [];
  for (const r of rows) {
    const c = configs.find((l) => l.id === r.launchId);
    if (!c?.pixelId || !c.token) canceled.push(r.id);
    else if (now.getTime() - r.createdAt.getTime() > metaEventMaxAgeMs) tooOld.push(r.id);
    else {
      const key = `${c.pixelId}\n${c.token}\n${c.testCode ?? ""}`;
      const group = requests.get(key) ?? { pixelId: c.pixelId, token: c.token, testCode: c.testCode, rows: [] };
      group.rows.push(r);
      requests.set(key, group);
    }
  }
  if (canceled.length) {
    await record(db, canceled, { state: "canceled", attempted: false, status: null, error: "the launch's tracking.meta was removed", retryAt: null }, now);
    pass.canceled += canceled.length;
  }
  if (tooOld.length) {
    const error = "older than 7 days: Meta refuses such events";
    await record(db, tooOld, { state: "failed", attempted: false, status: null, error, retryAt: null }, now);
    pass.failed += tooOld.length;
  }
  const chunks = [...requests.values()].flatMap((g) => {
    const out: (typeof g)[] = [];
    for (let i = 0; i < g.rows.length; i += metaEventsPerRequest) out.push({ ...g, rows: g.rows.slice(i, i + metaEventsPerRequest) });
    return out;
  });
  await mapLimit(chunks, concurrency, async (chunk) => {
    let token: string;
    try {
      token = decryptSecret(chunk.token);
    } catch (err) {
      const error = `the access token cannot be read: ${(err as Error).message}`;
      await record(db, ids(chunk.rows), { state: "failed", attempted: false, status: null, error, retryAt: null }, now);
      pass.failed += chunk.rows.length;
      return;
    }
    const body = JSON.stringify({
      data: chunk.rows.map((r) => deliverable(r.payload)),
      ...(chunk.testCode ? { test_event_code: chunk.testCode } : {}),
      access_token: token,
    });
    const result = await send(chunk.pixelId, body);
    pass.requests++;
    // Events of one request share their attempts unless an earlier request split them: the most decides.
    const attempts = Math.max(...chunk.rows.map((r) => r.attempts)) + 1;
    const outcome = outcomeOf(result, attempts, now);
    await record(db, ids(chunk.rows), outcome, now);
    const n = chunk.rows.length;
    if (outcome.state === "sent") pass.sent += n;
    else if (outcome.state === "failed") pass.failed += n;
    else pass.retrying += n;
  });
}

const ids = (rows: Claimed[]) => rows.map((r) => r.id);
