import { PGlite, types, type QueryOptions, type Transaction } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { AsyncResource } from "node:async_hooks";
import { writeFileSync } from "node:fs";
import path from "node:path";
import postgres from "postgres";
import { ConnectionScheduler, isBackground, type Turn } from "./connection-priority";
import { acquireDataDirLock, releaseDataDirLock } from "./data-dir-lock";
import { initEmbeddedCluster } from "./pglite-initdb";
import * as schema from "./schema";

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
/** A transaction handle; domain operations take `Db | Tx` where they may run inside one. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export interface Database {
  db: Db;
  driver: "pglite" | "postgres";
  close(): Promise<void>;
}

export const migrationsFolder = path.join(process.cwd(), "db/migrations");

export interface OpenOptions {
  /** PostgreSQL URL; when absent, embedded PGlite. */
  url?: string;
  /** PGlite data directory; when absent (and no url), an in-memory database. */
  dataDir?: string;
  /** A PGlite snapshot (from dumpDataDir) to start from: tests use a migrated one. */
  loadDataDir?: Blob;
  migrate?: boolean;
  /**
   * A file to which the statements run are counted, by text, once a second (a JSON object, text → count):
   * the benches' BENCH_STATEMENTS, to see how many round trips a step costs. Unset: nothing counted.
   */
  statementLog?: string;
  /** PostgreSQL only: connections the process keeps at most (DATABASE_POOL_SIZE; default 10). */
  poolSize?: number;
}

/**
 * The `postgres` driver's options for every connection of the service. `fetch_types: false`: by default
 * the driver's first statement on each new session reads the array types, and it does not await that
 * query, so a session dropped at that moment (pg_terminate_backend, a restart, a reset) rejected with
 * nobody to catch it, which ends a Node process (test/faults/db-connect-drop.test.ts). The service
 * reads no array from PostgreSQL (arrays stay inside SQL; lists go in as JSON, db/params.ts).
 */
const driverOptions = { fetch_types: false, onnotice: () => {} } satisfies postgres.Options<Record<string, never>>;

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  if (opts.url) {
    if (opts.migrate !== false) await migrateOnPostgres(opts.url);
    const count = opts.statementLog ? statementCounter(opts.statementLog) : undefined;
    const client = postgres(opts.url, { ...driverOptions, max: opts.poolSize ?? 10, ...(count ? { debug: (_c: number, query: string) => count(query) } : {}) });
    const tracer: PostgresTracer = {};
    const db = drizzlePostgres(preparedByDefault(client, tracer), { schema }) as unknown as Db;
    Object.defineProperty(db, postgresTracerKey, { value: tracer });
    return {
      db,
      driver: "postgres",
      close: () => client.end({ timeout: 5 }),
    };
  }
  if (opts.dataDir) await acquireDataDirLock(opts.dataDir);
  try {
    const pgliteDir = opts.dataDir ? path.join(opts.dataDir, "pglite") : undefined;
    if (pgliteDir && !opts.loadDataDir) await initEmbeddedCluster(pgliteDir);
    const client = await PGlite.create({
      dataDir: pgliteDir,
      loadDataDir: opts.loadDataDir,
      startParams: pgliteStartParams(),
    });
    const count = opts.statementLog ? statementCounter(opts.statementLog) : undefined;
    const scheduler = new ConnectionScheduler();
    const db = drizzlePglite(withDrizzleParsers(client, scheduler, count), { schema }) as unknown as Db;
    Object.defineProperty(db, embeddedBrand, { value: true });
    Object.defineProperty(db, schedulerKey, { value: scheduler });
    if (opts.migrate !== false) await migratePglite(db as never, { migrationsFolder });
    return {
      db,
      driver: "pglite",
      close: async () => {
        await client.close();
        if (opts.dataDir) releaseDataDirLock(opts.dataDir);
      },
    };
  } catch (err) {
    if (opts.dataDir) releaseDataDirLock(opts.dataDir);
    throw err;
  }
}

/**
 * A list of five parameters or more (drizzle's inArray / notInArray) or a second row of VALUES: a text that changes with
 * the list's length. Shorter lists stay prepared: a site's constant list (`status in ('pending', 'sending')`) is one text,
 * and lists of one to four items are at most four.
 */
const variableText = /\bin \(\$\d+(?:, \$\d+){4,}\)|\), \((?:\$\d+|default)/i;

/**
 * Every statement with parameters as a named prepared statement, kept per connection. drizzle asks the driver for
 * an unnamed one (`prepare: false`) unless the query was given a name, and for an unnamed statement with parameters
 * the driver first sends Parse + Describe and waits for the parameter types before it sends Bind + Execute: two round
 * trips per statement. Prepared, a statement's second run on a connection is one round trip and no parse (the driver
 * keys them by text and types). The set a connection keeps is bounded by the service's statement texts and by the
 * driver's connection lifetime (30–60 min); a plan invalidated by a migration is re-prepared by the driver. A text
 * whose length follows a list (`in ($1, $2, $3, $4, $5, …)`, a multi-row `values (…), (…)`) is not prepared
 * (`variableText`): each length would be another statement kept by the connection, without bound.
 * Transactions and savepoints get the same (drizzle runs their statements on the scoped client it is given).
 */
function preparedByDefault<T extends object>(sql: T, tracer: PostgresTracer): T {
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop === "unsafe") {
        return (query: string, params?: unknown[], options?: { prepare?: boolean }) =>
          tracedStatement(
            (target as unknown as postgres.Sql).unsafe(
              query,
              params as never,
              params?.length && !variableText.test(query) ? { ...options, prepare: true } : options,
            ),
            query,
            tracer,
          );
      }
      if (prop === "begin") {
        return async (...args: unknown[]) => {
          const fn = args.pop() as (tx: postgres.TransactionSql) => unknown;
          const trace = tracer.trace;
          // Inside, the statements are observed only to name the transaction and its connection.
          const inner: PostgresTracer = trace ? { trace: () => {} } : {};
          // Times and the background mark only when traced: every transaction of the service passes here.
          const background = trace ? isBackground() : false;
          const calledAt = trace ? performance.now() : 0;
          let startedAt = calledAt;
          const pending: Promise<unknown>[] = [];
          try {
            const result = await ((target as unknown as postgres.Sql).begin as (...a: unknown[]) => Promise<unknown>)(
              ...args,
              (tx: postgres.TransactionSql) => {
                if (trace) startedAt = performance.now();
                const scoped = preparedByDefault(tx, inner);
                untilCommit.set(scoped, pending);
                return fn(scoped);
              },
            );
            // A statement answered after the COMMIT was sent: had it failed, PostgreSQL answered the COMMIT with ROLLBACK,
            // which the driver reports as a success. Its error is the transaction's.
            if (pending.length) await Promise.all(pending);
            return result;
          } finally {
            trace?.({
              label: `transaction: ${inner.first ?? ""}`,
              background,
              queuedMs: startedAt - calledAt,
              heldMs: performance.now() - startedAt,
              connection: inner.connection,
            });
          }
        };
      }
      if (prop === "savepoint") {
        return (fn: (tx: postgres.TransactionSql) => unknown) =>
          (target as unknown as postgres.TransactionSql).savepoint((tx) => fn(preparedByDefault(tx, tracer)) as never);
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** A PostgreSQL transaction's statements sent with no wait for their answer (withCommit), by its scoped client. */
const untilCommit = new WeakMap<object, Promise<unknown>[]>();

/**
 * Runs `statement` (not yet run: a drizzle query) in `tx` and, at the top level of a PostgreSQL transaction, returns
 * without waiting for its answer: the statement travels with whatever the transaction sends next, its COMMIT at the
 * latest, so it costs no round trip of its own (docs/benchmarks.md#the-audit-log). The transaction answers only once
 * it is answered, and fails with it: a statement after a failed one fails too, and the COMMIT behind it rolls back.
 * For a write whose answer nothing reads. Elsewhere (PGlite, a savepoint, no transaction) it is simply awaited.
 */
export async function withCommit(tx: Db | Tx, statement: PromiseLike<unknown>): Promise<void> {
  const pending = untilCommit.get((tx as unknown as { session?: { client?: object } }).session?.client as object);
  if (!pending) {
    await statement;
    return;
  }
  // Sent now, in the order of the transaction's statements (the driver queues them as they are started).
  const answer = Promise.resolve(statement.then(() => undefined));
  answer.catch(() => {}); // awaited after the COMMIT; not an unhandled rejection meanwhile
  pending.push(answer);
}

/**
 * The benches' trace on PostgreSQL (traceConnection): `trace` gets every top-level statement and transaction. Inside a
 * transaction the statements only name it (`first`) and its connection.
 */
interface PostgresTracer {
  trace?: (turn: Turn) => void;
  first?: string;
  connection?: number;
}

const postgresTracerKey = Symbol.for("group-campaigns.postgres-tracer");

/**
 * A statement's times as the driver sees them, when traced: issued, handed to a connection (`state` set: the pool may
 * have queued it, all connections taken), started (`active` set: on a busy connection the driver pipelines it behind the
 * statements sent before it, and it starts when the one before it completes), completed. The driver sets those fields
 * on the query; getters and setters of the query's own observe them (bench instrumentation, off by default).
 */
function tracedStatement<Q extends object>(q: Q, query: string, tracer: PostgresTracer): Q {
  const { trace } = tracer;
  if (!trace) return q;
  const issuedAt = performance.now();
  const background = isBackground();
  let state: { pid?: number } | null = null;
  let active = false;
  let assignedAt = issuedAt;
  let startedAt: number | undefined;
  const fields = q as unknown as { state: unknown; active: boolean; resolve: (x: unknown) => void; reject: (x: unknown) => void };
  Object.defineProperty(q, "state", {
    configurable: true,
    get: () => state,
    set(v: { pid?: number } | null) {
      state = v;
      if (!v) return;
      assignedAt = performance.now();
      tracer.first ??= query;
      tracer.connection ??= v.pid;
    },
  });
  Object.defineProperty(q, "active", {
    configurable: true,
    get: () => active,
    set(v: boolean) {
      active = v;
      if (v) startedAt ??= performance.now();
    },
  });
  // Reported in the context that issued it (the driver resolves it from its socket's): the benches tie it to a request.
  const done = AsyncResource.bind(() => {
    const started = startedAt ?? assignedAt;
    trace({
      label: query,
      background,
      queuedMs: started - issuedAt,
      pipelinedMs: started - assignedAt,
      heldMs: performance.now() - started,
      connection: state?.pid,
    });
  });
  const { resolve, reject } = fields;
  fields.resolve = (x) => {
    done();
    resolve(x);
  };
  fields.reject = (x) => {
    done();
    reject(x);
  };
  return q;
}

/** On the handle itself, not in a module-level set: the handle is shared by every copy of this module. */
const embeddedBrand = Symbol.for("group-campaigns.embedded-database");

/** An embedded PGlite database: one process owns it (the data-directory lock), no other can open it. */
export const isEmbedded = (db: Db | Tx) => embeddedBrand in db;

const schedulerKey = Symbol.for("group-campaigns.connection-scheduler");

/** The engines' runners mark their work with it (inngest/ reaches db/ through this file only). */
export { inBackground } from "./connection-priority";

/**
 * The benches: every turn on embedded PGlite's connection reported (how long it waited, how long it held it), and
 * `fifo` to order them first come first served as PGlite alone does (the before of a comparison). No-op on PostgreSQL.
 */
export function traceConnection(db: Db, trace: (turn: Turn) => void, opts: { fifo?: boolean } = {}) {
  const tracer = (db as unknown as Record<symbol, PostgresTracer | undefined>)[postgresTracerKey];
  if (tracer) tracer.trace = trace;
  const scheduler = (db as unknown as Record<symbol, ConnectionScheduler | undefined>)[schedulerKey];
  if (!scheduler) return;
  scheduler.trace = trace;
  scheduler.prioritize = !opts.fifo;
}

/** The types drizzle's PGlite session reads as raw strings (its own mappers parse them). */
const rawTypes = [types.TIMESTAMP, types.TIMESTAMPTZ, types.INTERVAL, types.DATE, 1231, 1115, 1185, 1187, 1182];

/**
 * drizzle hands PGlite its raw-string parsers for those types with every query, and PGlite copies its
 * whole table of ~300 parsers to merge them, per query: 0.5 ms instead of 0.2 ms for a one-row select.
 * The client's own table gets the same parsers once, and drizzle's copies are dropped on the way in.
 */
function withDrizzleParsers(client: PGlite, scheduler: ConnectionScheduler, count?: (query: string) => void): PGlite {
  const raw = (value: string) => value;
  for (const oid of rawTypes) client.parsers[oid] = raw;
  return withoutQueryParsers(client, count, scheduler);
}

/**
 * The client, or a transaction on it: a query without drizzle's parsers, counted when asked. On the client itself
 * (`scheduler` given) a query or a transaction takes its turn on the connection (connection-priority.ts); the
 * statements inside a transaction run in its turn.
 */
function withoutQueryParsers<T extends PGlite | Transaction>(target: T, count?: (query: string) => void, scheduler?: ConnectionScheduler): T {
  const turn = <R>(label: () => string, fn: () => Promise<R>) => (scheduler ? scheduler.run(label, fn) : fn());
  return new Proxy(target, {
    get(t, prop) {
      if (prop === "query") {
        return (query: string, params?: unknown[], options?: QueryOptions) => {
          count?.(query);
          return turn(
            () => query,
            () => t.query(query, params, options?.parsers ? { ...options, parsers: undefined } : options),
          );
        };
      }
      if (prop === "transaction" && "transaction" in t) {
        return (fn: (tx: Transaction) => Promise<unknown>) => {
          count?.("begin");
          let first = "";
          const traced = (query: string) => {
            count?.(query);
            first ||= query;
          };
          return turn(
            () => `transaction: ${first}`,
            () => (t as PGlite).transaction((tx) => fn(withoutQueryParsers(tx, traced))),
          );
        };
      }
      // PGlite keeps its state in private fields: methods must run on the client itself.
      const value = Reflect.get(t, prop, t) as unknown;
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}

/** Counts statements by text and writes the counts to `file` once a second (OpenOptions.statementLog). */
function statementCounter(file: string): (query: string) => void {
  const counts = new Map<string, number>();
  const timer = setInterval(() => writeFileSync(file, JSON.stringify(Object.fromEntries(counts))), 1000);
  timer.unref();
  return (query) => {
    const key = query.replace(/\s+/g, " ").trim().slice(0, 400);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
}

/**
 * PGlite's own start parameters plus smaller shared buffers: its default 128 MB sits inside the server's
 * memory (peak RSS 440 → ~350 MB in the bench, no throughput loss measured).
 */
function pgliteStartParams(): string[] | undefined {
  const defaults = (PGlite as unknown as { defaultStartParams?: string[] }).defaultStartParams;
  return defaults ? [...defaults, "-c", "shared_buffers=32MB"] : undefined;
}

/** Several processes may start at once (server, CLI, test workers): one migrates at a time. */
async function migrateOnPostgres(url: string) {
  const client = postgres(url, { ...driverOptions, max: 1 });
  try {
    await client`select pg_advisory_lock(727274)`;
    await migratePostgres(drizzlePostgres(client), { migrationsFolder });
  } finally {
    await client`select pg_advisory_unlock(727274)`.catch(() => {});
    await client.end({ timeout: 5 });
  }
}

const holder = globalThis as unknown as { __gcsDatabase?: Promise<Database> };

/**
 * The process-wide database, opened and migrated on first use with `config` (server/database.ts passes
 * the server's DATABASE_URL and DATA_DIR: db/ reads no configuration of its own). Without `config` it
 * must already be open (or installed by setDatabase).
 */
export function getDatabase(config?: { url?: string; dataDir: string; statementLog?: string; poolSize?: number }): Promise<Database> {
  if (!holder.__gcsDatabase) {
    if (!config) return Promise.reject(new Error("The database is not open: open it through server/database.ts first."));
    holder.__gcsDatabase = openDatabase(config).catch((err) => {
      holder.__gcsDatabase = undefined;
      throw err;
    });
  }
  return holder.__gcsDatabase;
}

/** The process-wide database once opening it has begun (no configuration read), else undefined. */
export const openedDatabase = (): Promise<Database> | undefined => holder.__gcsDatabase;

export async function getDb(): Promise<Db> {
  return (await getDatabase()).db;
}

/** Tests and scripts install their own database (a PGlite snapshot, a test database). */
export function setDatabase(database: Promise<Database>) {
  holder.__gcsDatabase = database;
}
