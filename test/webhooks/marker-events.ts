import type { Db, Tx } from "../../db/client";
import { recordEvent } from "../../server/outbox/record-event";
import type { EventData, EventType } from "../../server/webhooks/events";

// No vitest here: bench/webhooks.ts records these too.

/**
 * Records an outbox event whose `data` is a marker for the delivery tests (a `seq` to check order, a made-up
 * campaign or channel id to key the ordering), not a payload the service builds: delivery reads only `type`
 * and the ordering id, and event-schemas.test.ts checks the payloads the service really builds.
 */
export function recordMarkerEvent<T extends EventType>(tx: Db | Tx, tenantId: string, type: T, data: Record<string, unknown>, at: Date) {
  return recordEvent(tx, tenantId, type, data as unknown as EventData<T>, at);
}
