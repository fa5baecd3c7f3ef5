import { eventType, Inngest, staticSchema } from "inngest";
import type { Db } from "../db/client";
import { campaignTenants } from "../server/campaigns/campaign-tenants";

/**
 * The Inngest client. The SDK reads its own environment: INNGEST_DEV (1, or the dev server's URL)
 * selects dev mode; INNGEST_EVENT_KEY sends events and INNGEST_SIGNING_KEY verifies Inngest's calls
 * in cloud mode. server/env.ts `inngestConfigured()` looks at the same variables to pick the engine.
 */
export const inngest = new Inngest({ id: "group-campaigns" });

/**
 * Inngest's safety nets for lost events (sweep-due-campaigns, sweep-webhooks) run this often: what a wake-up lost
 * while Inngest was unreachable costs at most.
 */
export const sweepEveryMs = 60_000;

/** A campaign may have work: run its dispatch loop. tenant_id is informational (logs, filters). */
export const dispatchRequested = eventType("campaign/dispatch.requested", {
  schema: staticSchema<{ id_campaign: string; tenant_id?: string }>(),
});

/** The user canceled a campaign: stop its run (cancelOn), rather than let it find out at its next step. */
export const campaignCanceled = eventType("campaign/canceled", {
  schema: staticSchema<{ id_campaign: string }>(),
});

export type DispatchRequestedData = { id_campaign: string; tenant_id?: string };

/** `campaign/dispatch.requested` events for these campaigns, with their tenant (unknown ids are dropped). */
export async function dispatchRequests(db: Db, campaignIds: string[]) {
  const rows = await campaignTenants(db, campaignIds);
  return rows.map((r) => ({ name: dispatchRequested.name, data: { id_campaign: r.id, tenant_id: r.tenantId } satisfies DispatchRequestedData }));
}

/** A launch may need groups now (server/launches/launch/wake.ts): run the launch engine for it. */
export const launchWakeRequested = eventType("launch/wake.requested", {
  schema: staticSchema<{ id_launch: string }>(),
});

/** A group action may have work now (server/groups/actions/wake.ts): run the group-action engine for it. */
export const groupActionWakeRequested = eventType("group-action/wake.requested", {
  schema: staticSchema<{ id_action: string }>(),
});

/**
 * A webhook delivery (one event for one target) should be attempted. `queue` keys the concurrency: the
 * tenant's id for its own deliveries, `<tenant>:apps` for its partner apps' copies, so a slow app
 * endpoint does not take the slots of the tenant's own webhooks.
 */
export const webhookDeliveryRequested = eventType("webhook/delivery.requested", {
  schema: staticSchema<{ id_delivery: number; tenant_id: string; queue: string }>(),
});

export const webhookDeliveryEvents = (rows: { id: number; tenantId: string; target: string }[]) =>
  rows.map((r) => ({
    name: webhookDeliveryRequested.name,
    data: { id_delivery: r.id, tenant_id: r.tenantId, queue: r.target === "tenant" ? r.tenantId : `${r.tenantId}:apps` },
  }));
