import { and, eq, getTableColumns, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import { preparedPerDb } from "../../db/params";
import { tableAs } from "../../db/relation";
import { campaigns, deliveries } from "../../db/schema";
import { pendingGroupsSql } from "./group-counters";

const campaignColumns = getTableColumns(campaigns);

/** The placeholders a lease probe's expressions use for the campaign's id and the step's moment (acquireStatement). */
export const acquirePlaceholders = { id: sql.placeholder("id"), now: sql.placeholder("now") };

export type Probed<P> = { [K in keyof P]: P[K] extends SQL<infer T> ? T : never };

export interface AcquireStatement<P> {
  of: (db: Db) => { execute: (values: Record<string, unknown>) => Promise<unknown> };
  probeKeys: string[];
  /** Type only: the probe's shape. */
  readonly _probe?: P;
}

/**
 * The lease's acquiring UPDATE, reading `probe` in its RETURNING: SQL expressions (which may refer to the campaign
 * row by its table's name, and to acquirePlaceholders for its id and the moment), built and prepared once per
 * database handle. `name`: the prepared statement's name.
 */
export function acquireStatement<P extends Record<string, SQL>>(name: string, probe: P): AcquireStatement<P> {
  const { id, now } = acquirePlaceholders;
  const of = preparedPerDb((db: Db) =>
    db
      .update(campaigns)
      .set({ leaseUntil: sql`${tsParam(sql.placeholder("until"))}` })
      .where(sql`${campaigns.id} = ${id} and (${campaigns.leaseUntil} is null or ${campaigns.leaseUntil} < ${tsParam(now)})`)
      .returning({ ...campaignColumns, ...probe } as unknown as typeof campaignColumns)
      .prepare(name),
  );
  return { of, probeKeys: Object.keys(probe) };
}

/** The campaign as a release left it. */
export interface Released {
  status: string;
  nextRunAt: Date;
}

/**
 * The next run a release sets: `doneAt` when none of the campaign's groups is left (`pending`, a SQL
 * expression of the count as released), else `nextRunAt`, after the pacing pause. Used by release() and by
 * the sent mark that releases in its own statement (recordSentMany).
 */
export function releasedNextRunSql(pending: SQL, { nextRunAt, doneAt }: { nextRunAt: Date; doneAt?: Date }) {
  return sql`case when ${pending} <= 0 then ${tsParam(doneAt ?? nextRunAt)} else ${tsParam(nextRunAt)} end`;
}

/**
 * How long a campaign step's hold on its campaign (and on the deliveries it claimed) lasts without a
 * renewal. A worker renews every quarter of it while the step runs, so a live step keeps its campaign
 * however long its loop takes (100 messages on a slow gateway), and a dead worker's campaign is taken
 * over at most this long after its last renewal (docs/dispatch.md "Leases and takeover").
 */
export const campaignLeaseMs = 8000;
/**
 * A step stops sending this long before its lease could expire without a confirmed renewal (at most a
 * quarter of the lease): 2 s of the 8 s lease, renewed every 2 s, so two renewals in a row must fail first.
 */
export const leaseSafetyMarginMs = 3000;
const marginOf = (leaseMs: number) => Math.min(leaseSafetyMarginMs, leaseMs / 4);

/**
 * A campaign step's lease: taken with one conditional UPDATE, renewed by a heartbeat (the campaign row
 * and the deliveries the step holds in flight, together), released only by its holder. The value of
 * `lease_until` it wrote is its fencing token: a renewal or release matches on it, so a worker whose
 * lease was taken over can neither extend nor clear the new holder's.
 *
 * `signal` aborts as soon as the lease may no longer be ours: a renewal that found another holder, or
 * no confirmed renewal until `leaseSafetyMarginMs` before the lease could expire (a stalled event loop,
 * an unreachable database). The step checks it before every claim and every provider call (sendEach
 * before each message), so a worker never sends once another could have taken its campaign over.
 */
export class CampaignLease {
  private token: Date;
  /** performance.now() until which the lease is certainly ours (the base was read before the UPDATE was sent). */
  private confirmedUntil: number;
  private readonly held = new Set<number>();
  private readonly controller = new AbortController();
  private heartbeat: NodeJS.Timeout | undefined;
  private expiry: NodeJS.Timeout | undefined;
  private renewing: Promise<void> = Promise.resolve();
  private released = false;

  private constructor(
    private readonly db: Db,
    readonly campaignId: string,
    /** The campaign row as the acquiring UPDATE left it (the step reads it here instead of again). */
    readonly campaign: typeof campaigns.$inferSelect,
    private readonly clock: () => Date,
    private readonly leaseMs: number,
    token: Date,
    localStart: number,
  ) {
    this.token = token;
    this.confirmedUntil = localStart + leaseMs;
    this.armExpiry();
    this.heartbeat = setInterval(() => void this.renew(), Math.max(50, Math.floor(leaseMs / 4)));
    this.heartbeat.unref?.();
  }

  /**
   * Takes the campaign when no one holds it (or its holder's lease ran out); null when it is busy. `statement`:
   * the acquiring UPDATE built by acquireStatement, which also reads whatever else the step reads first (its
   * probe) in the same statement: one round trip, not four.
   */
  static async acquire<P extends Record<string, SQL>>(
    db: Db,
    campaignId: string,
    clock: () => Date,
    leaseMs: number,
    statement: AcquireStatement<P>,
  ): Promise<{ lease: CampaignLease; probe: Probed<P> } | null> {
    const localStart = performance.now();
    const now = clock();
    const until = new Date(now.getTime() + leaseMs);
    const [row] = (await statement.of(db).execute({ id: campaignId, now: now.toISOString(), until: until.toISOString() })) as unknown as Record<
      string,
      unknown
    >[];
    if (!row) return null;
    const campaign = Object.fromEntries(Object.keys(campaignColumns).map((k) => [k, row[k]])) as typeof campaigns.$inferSelect;
    const probed = Object.fromEntries(statement.probeKeys.map((k) => [k, row[k]]));
    return { lease: new CampaignLease(db, campaignId, campaign, clock, leaseMs, until, localStart), probe: probed as Probed<P> };
  }

  /** Aborted once the lease may be lost: stop claiming and sending. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True once the lease may no longer be ours (also when the expiry timer is late: a blocked event loop). */
  get lost(): boolean {
    if (!this.controller.signal.aborted && performance.now() > this.confirmedUntil - marginOf(this.leaseMs)) this.abort("no confirmed lease renewal");
    return this.controller.signal.aborted;
  }

  /** The `lease_until` a claim gives the deliveries it takes (renewed with the campaign's). */
  get until(): Date {
    return this.token;
  }

  /** Deliveries this step claimed and has not recorded yet: their leases move with the campaign's. */
  hold(ids: number[]) {
    for (const id of ids) this.held.add(id);
  }

  drop(ids: number[]) {
    for (const id of ids) this.held.delete(id);
  }

  /** Resolves when no renewal is under way (one that started before a drop may still write its rows). */
  settled(): Promise<void> {
    return this.renewing;
  }

  /** One renewal at a time; release waits for the one under way. */
  renew(): Promise<void> {
    this.renewing = this.renewing.then(() => this.renewOnce());
    return this.renewing;
  }

  private async renewOnce() {
    if (this.released || this.lost) return;
    const localStart = performance.now();
    const until = new Date(this.clock().getTime() + this.leaseMs);
    try {
      const [row] = await this.db
        .update(campaigns)
        .set({ leaseUntil: until })
        .where(and(eq(campaigns.id, this.campaignId), eq(campaigns.leaseUntil, this.token)))
        .returning({ id: campaigns.id });
      if (!row) {
        this.abort("the campaign's lease was taken over");
        return;
      }
      this.token = until;
      this.confirmedUntil = localStart + this.leaseMs;
      this.armExpiry();
      if (this.held.size > 0) {
        // Rows locked in id order, as recordSentMany locks them (no deadlock with a loop's sent marks).
        // A row recorded meanwhile (sent, failed, back to pending, outcome unknown) is left alone.
        const ids = JSON.stringify([...this.held]);
        await this.db.execute(sql`update ${deliveries} d set lease_until = ${until.toISOString()}::timestamptz
          from (select id from ${deliveries} where id in (select value::bigint from json_array_elements_text(${ids}::json))
                  and state = 'sending' and outcome_unknown_since is null order by id for update) v
          where d.id = v.id`);
      }
    } catch (err) {
      // The database did not answer: the next beat tries again; the expiry timer stops the step in time.
      console.error(`[dispatch] lease renewal of ${this.campaignId} failed`, err instanceof Error ? err.message : err);
    }
  }

  private armExpiry() {
    clearTimeout(this.expiry);
    const ms = this.confirmedUntil - marginOf(this.leaseMs) - performance.now();
    this.expiry = setTimeout(() => this.abort("no confirmed lease renewal"), Math.max(0, ms));
    this.expiry.unref?.();
  }

  private abort(reason: string) {
    if (this.controller.signal.aborted) return;
    if (!this.released) console.warn(`[dispatch] campaign ${this.campaignId}: ${reason}; the step stops sending`);
    this.controller.abort(new Error(reason));
  }

  /**
   * Lets the campaign go, setting its next run, only if it is still ours (the token matches).
   * Returns the campaign's status as released, or null when another worker holds it now (nothing written).
   */
  async release(set: { nextRunAt?: Date; doneAt?: Date } = {}): Promise<Released | null> {
    await this.stop();
    const { nextRunAt, doneAt } = set;
    // `doneAt`: the next run is then, instead of after the pause, when none of the campaign's groups is left.
    const next = nextRunAt && doneAt ? releasedNextRunSql(pendingGroupsSql(tableAs(campaigns)), { nextRunAt, doneAt }) : nextRunAt;
    const rows = await this.db
      .update(campaigns)
      .set({ leaseUntil: null, ...(next ? { nextRunAt: next } : {}) })
      .where(and(eq(campaigns.id, this.campaignId), eq(campaigns.leaseUntil, this.token)))
      .returning({ status: campaigns.status, nextRunAt: campaigns.nextRunAt });
    return rows[0] ?? null;
  }

  /**
   * Lets the campaign go in the caller's own statement (the loop's sent mark: one round trip fewer a loop),
   * which matches on the fencing token it is given, as release() does. The heartbeat stops first. Null when
   * that statement did not let it go; release() may still be called then.
   */
  async releaseWith(write: (token: Date) => Promise<Released | null>): Promise<Released | null> {
    await this.stop();
    return write(this.token);
  }

  /** No renewal from now on (the one under way is awaited). */
  private async stop() {
    clearInterval(this.heartbeat);
    await this.renewing;
    this.released = true;
    clearTimeout(this.expiry);
  }
}
