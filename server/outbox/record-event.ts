import { sql, type SQL } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { isoOf, type At } from "../../db/params";
import { outboxEvents } from "../../db/schema";
import type { EventData, EventPayload, EventType } from "../webhooks/events";
import { wakeWebhooks } from "../webhooks/wake";

export type OutboxEventType = EventType;

/** Call inside the transaction of the change that causes the event: no event lost, none invented. */
export async function recordEvent<T extends EventType>(tx: Db | Tx, tenantId: string, type: T, data: EventData<T>, at: Date) {
  const payload: EventPayload<T> = { type, timestamp: at.toISOString(), data };
  await tx.insert(outboxEvents).values({ tenantId, type, payload, createdAt: at });
  // The webhook engine looks a moment later (after the commit); it also polls, so nothing depends on this.
  wakeWebhooks();
}

/** An event of `type` built in SQL from the rows of `source` (a FROM clause with its condition). */
export interface EventSelect {
  type: OutboxEventType;
  tenantId: SQL;
  payload: SQL;
  source: SQL;
}

/**
 * The INSERT of recordEvent for an event built in SQL: a statement that changes a row and writes its event
 * at once puts this in a CTE (one round trip instead of a transaction's five). Call eventsRecorded() after.
 */
export function insertEventSql(e: EventSelect, at: Date): SQL {
  return insertEventsSql([e], at);
}

/**
 * Several events built in SQL, in one INSERT and in this order (their ids, which the webhooks deliver by,
 * follow it): two INSERTs in CTEs of one statement run in no defined order.
 */
export function insertEventsSql(events: EventSelect[], at: At): SQL {
  const parts = events.map(
    (e, i) => sql`select ${i}::int as ord, ${e.tenantId} as tenant_id, ${e.type}::text as type, ${e.payload} as payload from ${e.source}`,
  );
  return sql`insert into ${outboxEvents} (tenant_id, type, payload, created_at)
    select e.tenant_id, e.type, e.payload, ${isoOf(at)}::timestamptz from (${sql.join(parts, sql` union all `)}) e order by e.ord`;
}

/** recordEvent for an event built in SQL, inside the change's transaction. */
export async function recordEventSql(tx: Db | Tx, e: EventSelect, at: Date) {
  await tx.execute(insertEventSql(e, at));
  eventsRecorded();
}

/** Wakes the webhook engine after events were written by a statement of one's own (insertEventSql). */
export function eventsRecorded() {
  wakeWebhooks();
}
