/**
 * Embedded PGlite is one connection, run on the Node thread: every statement and transaction of the process waits its
 * turn for it, first come first served. A request handler's short statement (an inbound message judged, an
 * info-campaign read) then waited behind whatever a background engine had queued: a campaign's steps, each a
 * transaction or a statement writing thousands of rows, run back to back without letting a timer or a socket in
 * (docs/benchmarks.md#moderation). An engine's turn now first yields to them (setImmediate); the scheduler hands the
 * connection to one top-level statement or transaction at a time, and when it frees, a waiting request's goes before
 * the engines' (but after `requestsBeforeAnEngine` requests in a row while engines wait, an engine's turn: engines are
 * delayed, never starved, and keep a share of the connection under a stream of requests). It only orders: PGlite's
 * own lock still keeps one at a time.
 *
 * Background is marked where the engines run (inBackground: the in-process runners' rounds); everything else (route
 * handlers, the inbound events a gateway posts, scripts) is a request. PostgreSQL needs none of this: its pool has
 * connections of their own, and a query waits for one of them, not for a statement.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** One copy for the process: Next may load this module more than once (the engines' copy and the routes'). */
const holder = globalThis as unknown as { __gcsBackground?: AsyncLocalStorage<true> };
holder.__gcsBackground ??= new AsyncLocalStorage<true>();
const background = holder.__gcsBackground;

/** Runs `fn` (and everything it starts) as background work: its statements go after a request's on embedded PGlite. */
export function inBackground<T>(fn: () => T): T {
  return background.run(true, fn);
}

export const isBackground = () => background.getStore() === true;

/** Requests' turns in a row while an engine waits, before an engine's: a stream of requests never starves the engines. */
export const requestsBeforeAnEngine = 4;

/** What the scheduler reports of each turn when traced (the benches): how long it waited for the connection, and held it. */
export interface Turn {
  label: string;
  background: boolean;
  queuedMs: number;
  heldMs: number;
  /** PostgreSQL: the backend's pid, and of `queuedMs` the part spent pipelined behind other statements on it. */
  connection?: number;
  pipelinedMs?: number;
}

interface Waiter {
  since: number;
  start: () => void;
}

export class ConnectionScheduler {
  private busy = false;
  private requestsInARow = 0;
  private readonly requests: Waiter[] = [];
  private readonly engines: Waiter[] = [];
  /** Set by traceConnection (the benches): every turn is reported once it ends. */
  trace: ((turn: Turn) => void) | undefined;
  /** False: first come first served, as PGlite alone (the benches' before, BENCH_DB_FIFO=1). */
  prioritize = true;

  /** Runs `fn` when the connection is this caller's turn; `label` names it in a trace. */
  async run<T>(label: () => string, fn: () => Promise<T>): Promise<T> {
    const queuedAt = performance.now();
    const back = isBackground();
    // PGlite runs on the Node thread and an engine's statements follow one another without letting timers or sockets
    // in: each first yields to them, so a request due meanwhile is received and takes its turn first.
    if (back && this.prioritize) await new Promise((r) => setImmediate(r));
    if (this.busy || this.requests.length > 0 || this.engines.length > 0) {
      await new Promise<void>((start) => (back ? this.engines : this.requests).push({ since: queuedAt, start }));
    }
    this.busy = true;
    const startedAt = performance.now();
    try {
      return await fn();
    } finally {
      this.trace?.({ label: label(), background: back, queuedMs: startedAt - queuedAt, heldMs: performance.now() - startedAt });
      this.next();
    }
  }

  private next() {
    const [request] = this.requests;
    const [engine] = this.engines;
    const engineFirst = !request || (engine !== undefined && (this.prioritize ? this.requestsInARow >= requestsBeforeAnEngine : engine.since < request.since));
    const waiter = engineFirst ? this.engines.shift() : this.requests.shift();
    this.requestsInARow = !engineFirst && engine ? this.requestsInARow + 1 : 0;
    if (waiter) waiter.start();
    else this.busy = false;
  }
}
