/**
 * BENCH_DB_TRACE=1 (embedded PGlite): what a slow request waits behind on the one connection. Every turn on the
 * connection (a statement or a transaction, db/connection-priority.ts) is reported with how long it waited and held
 * it; a request's turns are tied to the request (`within`), and the engines' turns that held the connection while a
 * slow request waited are summed by statement. BENCH_DB_FIFO=1 orders the turns first come first served, as PGlite
 * alone does (the before of a comparison).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Turn } from "../db/connection-priority";
import { traceConnection, type Db } from "../db/client";
import { printTable, quantile, round } from "./common";

interface Span extends Turn {
  end: number;
}

export function connectionTrace(db: Db) {
  const on = process.env.BENCH_DB_TRACE === "1";
  const fifo = process.env.BENCH_DB_FIFO === "1";
  const current = new AsyncLocalStorage<number>();
  const byRequest = new Map<number, Span[]>();
  /** Every turn: the messages', the engines', and other requests' (the bench's own polls, its campaigns' creation). */
  const others: Span[] = [];
  let recording = false;
  if (on || fifo)
    traceConnection(
      db,
      (turn) => {
        if (!recording) return;
        const span = { ...turn, end: performance.now(), label: turn.label.replace(/\s+/g, " ").trim().slice(0, 140) };
        // An engine woken by a message (its deletion queued) runs in the message's context too: background first.
        const id = turn.background ? undefined : current.getStore();
        if (id !== undefined) byRequest.set(id, [...(byRequest.get(id) ?? []), span]);
        others.push({ ...span, label: `${turn.background ? "engine" : id !== undefined ? "message" : "request"}: ${span.label}` });
      },
      { fifo },
    );
  return {
    on,
    fifo,
    start: () => {
      recording = on || fifo;
    },
    stop: () => {
      recording = false;
    },
    /** Runs one request (a message), its turns tied to `id`. */
    within: <T>(id: number, fn: () => Promise<T>) => current.run(id, fn),
    /** Prints where the slow requests' time went; answers the figures for the JSON line. */
    report(latencies: Map<number, number>, slowMs: number, lateness = new Map<number, number>()) {
      if (!on) return {};
      const rows = [...latencies].map(([id, ms]) => {
        const spans = byRequest.get(id) ?? [];
        return {
          id,
          ms,
          late: lateness.get(id) ?? 0,
          queued: spans.reduce((s, t) => s + t.queuedMs, 0),
          pipelined: spans.reduce((s, t) => s + (t.pipelinedMs ?? 0), 0),
          held: spans.reduce((s, t) => s + t.heldMs, 0),
          turns: spans.length,
          spans,
        };
      });
      const slow = rows.filter((r) => r.ms >= slowMs);
      const sum = (rs: typeof rows, f: (r: (typeof rows)[number]) => number) => rs.reduce((s, r) => s + f(r), 0);
      console.log(
        `[trace] ${rows.length} messages, ${slow.length} at or over ${slowMs} ms; of their time: received late (the event loop's delay) ${round(sum(slow, (r) => r.late))} ms, waiting for a connection ${round(sum(slow, (r) => r.queued - r.pipelined))} ms, pipelined behind another statement on its connection (PostgreSQL) ${round(sum(slow, (r) => r.pipelined))} ms, holding it (the statement running) ${round(sum(slow, (r) => r.held))} ms, elsewhere (their own JavaScript, or the thread busy) ${round(sum(slow, (r) => r.ms - r.late - r.queued - r.held))} ms`,
      );
      // The turns that held the connection while a slow message's turn waited, by statement (PostgreSQL: on its connection).
      const behind = new Map<string, { ms: number; turns: number; longest: number }>();
      for (const r of slow)
        for (const s of r.spans) {
          const waitFrom = s.end - s.heldMs - s.queuedMs;
          const waitTo = s.end - s.heldMs;
          for (const e of others) {
            if (s.connection !== undefined && e.connection !== s.connection) continue;
            const overlap = Math.min(waitTo, e.end) - Math.max(waitFrom, e.end - e.heldMs);
            if (overlap <= 0) continue;
            const b = behind.get(e.label) ?? { ms: 0, turns: 0, longest: 0 };
            b.ms += overlap;
            b.turns++;
            b.longest = Math.max(b.longest, e.heldMs);
            behind.set(e.label, b);
          }
        }
      const top = [...behind].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12);
      console.log("[trace] what the slow messages waited behind (other turns holding the connection meanwhile):");
      printTable([["waited ms", "turns", "longest held ms", "statement"], ...top.map(([l, b]) => [round(b.ms), b.turns, round(b.longest), l])]);
      // The slow messages' own turns by statement: how long each waited and ran.
      const mine = new Map<string, { queued: number[]; held: number[] }>();
      for (const r of slow)
        for (const t of r.spans) {
          const m = mine.get(t.label) ?? { queued: [], held: [] };
          m.queued.push(t.queuedMs);
          m.held.push(t.heldMs);
          mine.set(t.label, m);
        }
      console.log("[trace] the slow messages' own turns by statement:");
      printTable([
        ["turns", "waited p50 / p99 ms", "ran p50 / p99 ms", "statement"],
        ...[...mine].map(([l, m]) => [
          m.held.length,
          `${round(quantile(m.queued, 0.5), 1)} / ${round(quantile(m.queued, 0.99), 1)}`,
          `${round(quantile(m.held, 0.5), 1)} / ${round(quantile(m.held, 0.99), 1)}`,
          l,
        ]),
      ]);
      const held = others.filter((e) => e.background).map((e) => e.heldMs);
      // The engines' turns by statement, longest first: what holds the connection (and, PGlite running on the Node
      // thread, the thread itself while a statement runs).
      const byLabel = new Map<string, number[]>();
      for (const e of others) if (e.background) byLabel.set(e.label, [...(byLabel.get(e.label) ?? []), e.heldMs]);
      const longest = [...byLabel].sort((a, b) => quantile(b[1], 0.99) - quantile(a[1], 0.99)).slice(0, 12);
      console.log("[trace] the engines' turns by statement, by their p99 held:");
      printTable([
        ["turns", "held p50 ms", "p99 ms", "max ms", "total ms", "statement"],
        ...longest.map(([l, h]) => [
          h.length,
          round(quantile(h, 0.5), 2),
          round(quantile(h, 0.99), 1),
          round(Math.max(...h), 1),
          round(h.reduce((a, b) => a + b, 0)),
          l,
        ]),
      ]);
      console.log(
        `[trace] engines' turns: ${held.length}, held p50 / p99 / max ${round(quantile(held, 0.5), 2)} / ${round(quantile(held, 0.99), 2)} / ${round(Math.max(...held), 1)} ms`,
      );
      const queued = rows.flatMap((r) => r.spans.map((s) => s.queuedMs));
      const turnHeld = rows.flatMap((r) => r.spans.map((s) => s.heldMs));
      return {
        trace_message_turn_queued_p99_ms: round(quantile(queued, 0.99), 2),
        trace_message_turn_held_p99_ms: round(quantile(turnHeld, 0.99), 2),
        trace_message_received_late_p99_ms: round(quantile([...lateness.values()], 0.99), 2),
        trace_slow_messages: slow.length,
        trace_engine_turn_held_p99_ms: round(quantile(held, 0.99), 2),
      };
    },
  };
}
