import { dueCampaigns } from "../../server/dispatch/due-campaigns";
import { onCampaignCanceled, onDispatchWake } from "../../server/dispatch/wake";
import type { Services } from "../../server/services";
import { campaignCanceled, dispatchRequests, inngest } from "../client";
import { dispatchCampaign } from "../functions/dispatch-campaign";
import { sweepDueCampaigns } from "../functions/sweep-due-campaigns";
import { InProcessRunner } from "../in-process/dispatch-runner";
import { defineEngine } from "./engine";

/**
 * Campaign dispatch (docs/decisions.md#running-the-service): the in-process runner, or one `dispatch-campaign` run
 * per campaign under Inngest, each a loop of the same domain step (runCampaignStep). Either way the domain only calls
 * wakeDispatch / notifyCampaignCanceled; a wake-up lost on its way to Inngest is found by `sweep-due-campaigns`.
 */
export const dispatchEngine = defineEngine({
  id: "dispatch",
  inProcess: (services) => new InProcessRunner(services).start(),
  forward: (services, forwarder) => {
    const offWake = onDispatchWake((campaignId) => forwarder.track("campaign/dispatch.requested", requestDispatch(services, campaignId)));
    const offCancel = onCampaignCanceled((campaignId) =>
      forwarder.track("campaign/canceled", inngest.send(campaignCanceled.create({ id_campaign: campaignId }))),
    );
    return () => {
      offWake();
      offCancel();
    };
  },
  functions: [dispatchCampaign, sweepDueCampaigns],
});

/** One campaign, or (a channel reconnected, no id) every campaign due now, as the runner would look. */
async function requestDispatch({ db }: Services, campaignId?: string) {
  const ids = campaignId ? [campaignId] : await dueCampaigns(db, new Date(), 500);
  const events = await dispatchRequests(db, ids);
  if (events.length > 0) await inngest.send(events);
}
