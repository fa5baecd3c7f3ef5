import { deliverMetaEvents } from "../../server/launches/funnel/deliver-meta-events";
import { defineJob } from "./job";

/**
 * Meta's Conversions API (server/launches/funnel/deliver-meta-events.ts; docs/launches.md#metas-conversions-api): the
 * server events of the join link's counted clicks, sent from their outbox (meta_events) and retried on the
 * webhooks' schedule. Every 2 s in this process, every minute under Inngest (Meta takes events up to 7 days old).
 */
export const metaEventsJob = defineJob({
  id: "meta-events",
  name: "Launches: Meta Conversions API events of the join link's clicks",
  intervalMs: () => 2_000,
  failure: "[launches] Meta Conversions API pass failed",
  run: ({ services, now, step }) => step("deliver", () => deliverMetaEvents(services.db, now)),
});
