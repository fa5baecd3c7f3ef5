/**
 * docs/decisions.md#limits-abuse-retention ("Fairness") for webhooks: with every worker busy, a tenant with a flood of due deliveries
 * does not keep the workers; another tenant's delivery goes within one turn (one claimed batch) of the
 * flooding tenant's. The pool is saturated on purpose (maxTenants: 1, as 64 busy tenants would with the
 * default 64): below saturation each tenant simply has its own worker.
 */
import { afterEach, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { WebhookRunner } from "../../inngest/in-process/webhook-runner";
import { recordMarkerEvent } from "./marker-events";
import { getServices } from "../../server/services";
import { newTenant, waitFor, type Api } from "../helpers";
import { withServerAndReceiver } from "./fixtures";

const fx = withServerAndReceiver();
let runner: WebhookRunner | undefined;
afterEach(async () => {
  await runner?.stop();
  runner = undefined;
});

async function configure(api: Api, path: string) {
  const res = await api("PATCH", "/api/external/edit-webhooks", { campaign_progress_url: `${fx.receiver.url}${path}` });
  expect(res.status).toBe(200);
}

/** `count` campaign_progress events over `campaigns` campaigns, recorded as the domain does (in one transaction here). */
async function flood(tenantId: string, campaigns: number, count: number) {
  const db = await getDb();
  await db.transaction(async (tx) => {
    for (let i = 0; i < count; i++) {
      const campaign = `c${i % campaigns}`;
      await recordMarkerEvent(
        tx,
        tenantId,
        "campaign_progress",
        { id_campaign: campaign, name: "C", status: "sending", seq: i, groups: { total: 1, sent: 0, pending: 1, failed: 0 } },
        new Date(),
      );
    }
  });
}

it("a tenant's 1,600 due deliveries do not hold the only worker: another tenant's delivery goes within a turn", async () => {
  const a = await newTenant(fx.server.url);
  const b = await newTenant(fx.server.url);
  const pathA = `/flood-${a.tenantId}`;
  const pathB = `/paced-${b.tenantId}`;
  await configure(a, pathA);
  await configure(b, pathB);
  // The receiver takes 30 ms an answer: a turn of A (200 deliveries, 40 campaigns of 5 in order, 16 lanes) is about 0.5 s; all of A about 4 s.
  fx.receiver.respond({ delayMs: 30 });
  await flood(a.tenantId, 40, 1600);

  runner = new WebhookRunner((await getServices()).db, { maxSleepMs: 50, maxTenants: 1 }).start();
  const received = (path: string) => fx.receiver.received.filter((r) => r.path === path).length;
  await waitFor("A's deliveries under way", () => received(pathA) > 0);

  const recordedAt = Date.now();
  const aBefore = received(pathA);
  await flood(b.tenantId, 1, 1);
  await waitFor("B's delivery", () => received(pathB) === 1, 15_000);
  const waited = Date.now() - recordedAt;
  const aDone = received(pathA);
  console.log(
    `[fairness] webhooks: B's delivery arrived ${waited} ms after its event; A had ${aDone} of 1600 delivered by then (${aDone - aBefore} after B's event)`,
  );
  // A's flood was still going: B did not simply wait for it to end (the old runner: after all 1,600).
  expect(aDone).toBeLessThan(1600);
  // Counted, not timed (the count does not depend on the machine's load): between B's event and its
  // delivery, A got at most the turn under way and one more (a turn is one claimed batch of 200).
  expect(aDone - aBefore).toBeLessThanOrEqual(2 * 200);
});
