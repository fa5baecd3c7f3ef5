import { dueCampaigns } from "../server/dispatch/due-campaigns";
import { onCampaignCanceled, onDispatchWake } from "../server/dispatch/wake";
import { inngestConfigured } from "../server/env";
import type { Services } from "../server/services";
import { campaignCanceled, dispatchRequests, inngest } from "./client";
import { InProcessRunner } from "./runner";

export interface DispatchEngine {
  kind: "inngest" | "in-process";
  /** Stops listening (and, for the runner, waits for the step in progress). */
  stop(): Promise<void>;
}

/**
 * Picks the engine that drives dispatch (docs/decisions.md#running-the-service): Inngest when it is configured, else the
 * in-process runner. Either way the domain only calls wakeDispatch / notifyCampaignCanceled.
 */
export function startDispatchEngine(services: Services): DispatchEngine {
  if (!inngestConfigured()) {
    const runner = new InProcessRunner(services).start();
    return { kind: "in-process", stop: () => runner.stop() };
  }
  const inFlight = new Set<Promise<void>>();
  const track = (what: string, work: Promise<unknown>) => {
    // A lost event is not lost work: the sweep function requests overdue campaigns every minute.
    const p = work.then(
      () => undefined,
      (err) => console.error(`[dispatch] could not send ${what} to Inngest`, err),
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  const offWake = onDispatchWake((campaignId) => track("campaign/dispatch.requested", requestDispatch(services, campaignId)));
  const offCancel = onCampaignCanceled((campaignId) => track("campaign/canceled", inngest.send(campaignCanceled.create({ id_campaign: campaignId }))));
  return {
    kind: "inngest",
    async stop() {
      offWake();
      offCancel();
      await Promise.all(inFlight);
    },
  };
}

/** One campaign, or (a channel reconnected, no id) every campaign due now, as the runner would look. */
async function requestDispatch({ db }: Services, campaignId?: string) {
  const ids = campaignId ? [campaignId] : await dueCampaigns(db, new Date(), 500);
  const events = await dispatchRequests(db, ids);
  if (events.length > 0) await inngest.send(events);
}
