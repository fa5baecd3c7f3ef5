/**
 * Webhook figures of the embedded runner (`npm run bench` calls benchWebhooks per database):
 *  - webhook_deliveries_per_second: 3,000 recorded events (300 campaigns × 10, 3 tenants), delivered
 *    signed to a loopback receiver answering 204, from starting the runner to the last one received;
 *  - webhook_latency_p50_ms / p99_ms: 400 events recorded one by one (~40/s) while the runner runs,
 *    from the commit of the event's transaction to its arrival at the receiver.
 * Runs in this process (no Next.js server): the runner and the domain steps are the ones `npm start` uses.
 */
import { fork } from "node:child_process";
import { openDatabase, type Database } from "../db/client";
import { rowsOf } from "../db/params";
import { WebhookRunner } from "../inngest/in-process/webhook-runner";
import { createTenant } from "../server/auth/create-tenant";
import { recordMarkerEvent } from "../test/webhooks/marker-events";
import { editWebhooks } from "../server/webhooks/webhook-config";

export interface WebhookFigures {
  webhook_deliveries_per_second: number;
  webhook_latency_p50_ms: number;
  webhook_latency_p99_ms: number;
}

const quantile = (values: number[], q: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

export async function benchWebhooks(open: { url?: string }, log: (line: string) => void): Promise<WebhookFigures> {
  process.env.WEBHOOK_ALLOW_PRIVATE = "1";
  const database: Database = await openDatabase({ url: open.url });
  // The receiver runs in its own process, as a tenant's server would; it reports each arrival.
  const arrivals = new Map<string, number>();
  const receiver = fork(new URL("./webhook-receiver.ts", import.meta.url).pathname, [], { execArgv: ["--import", "tsx"] });
  const origin = Date.now() - performance.now();
  const port = await new Promise<number>((resolve) =>
    receiver.on("message", (m: { port?: number; id?: string; at?: number }) => {
      if (m.port) resolve(m.port);
      else arrivals.set(m.id!, m.at! - origin);
    }),
  );
  const url = `http://127.0.0.1:${port}/hook`;
  const { db } = database;
  let runner: WebhookRunner | undefined;
  try {
    const tenants: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { tenantId } = await createTenant(db, { name: `Bench ${i}`, email: `wh-bench-${i}-${Date.now()}@example.com`, password: "senha-segura-bench-123" });
      await editWebhooks(db, tenantId, { campaign_progress_url: url }, new Date());
      tenants.push(tenantId);
    }

    // Throughput: a backlog of 3,000 events, then the runner drains it.
    const total = 3000;
    for (let batch = 0; batch < total / 100; batch++) {
      await db.transaction(async (tx) => {
        for (let i = 0; i < 100; i++) {
          const n = batch * 100 + i;
          const tenantId = tenants[n % tenants.length];
          await recordMarkerEvent(
            tx,
            tenantId,
            "campaign_progress",
            { id_campaign: `campaign_bench_${n % 300}`, name: "Bench", status: "sending", seq: n },
            new Date(),
          );
        }
      });
    }
    const started = performance.now();
    runner = new WebhookRunner(db).start();
    while (arrivals.size < total) {
      if (performance.now() - started > 120_000) throw new Error(`only ${arrivals.size} of ${total} webhooks arrived in 120 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const perSecond = Math.round(total / ((performance.now() - started) / 1000));
    log(`webhooks: ${total} deliveries in ${Math.round(performance.now() - started)} ms`);

    // Latency: events recorded one at a time while the runner runs.
    arrivals.clear();
    const committedAt = new Map<number, number>();
    const latencyEvents = 400;
    for (let n = 0; n < latencyEvents; n++) {
      const [row] = await db
        .transaction(async (tx) => {
          await recordMarkerEvent(
            tx,
            tenants[n % tenants.length],
            "campaign_progress",
            { id_campaign: `campaign_latency_${n % 20}`, name: "Bench", status: "sending", seq: n },
            new Date(),
          );
          return tx.execute<{ id: number }>("select currval(pg_get_serial_sequence('outbox_events','id')) as id" as never) as unknown as Promise<unknown>;
        })
        .then((r) => rowsOf<{ id: number }>(r));
      committedAt.set(Number(row.id), performance.now());
      await new Promise((r) => setTimeout(r, 25));
    }
    const waitUntil = performance.now() + 30_000;
    while (arrivals.size < latencyEvents && performance.now() < waitUntil) await new Promise((r) => setTimeout(r, 10));
    const latencies = [...committedAt].flatMap(([id, at]) => {
      const arrived = arrivals.get(`msg_${id}`);
      return arrived === undefined ? [] : [arrived - at];
    });
    if (latencies.length < latencyEvents) throw new Error(`only ${latencies.length} of ${latencyEvents} latency webhooks arrived`);
    return {
      webhook_deliveries_per_second: perSecond,
      webhook_latency_p50_ms: Math.round(quantile(latencies, 0.5)),
      webhook_latency_p99_ms: Math.round(quantile(latencies, 0.99)),
    };
  } finally {
    await runner?.stop();
    receiver.kill();
    await database.close();
  }
}
