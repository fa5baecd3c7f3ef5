import { dispatchCampaign } from "./dispatch-campaign";
import { sweepDueCampaigns } from "./sweep-due-campaigns";
import { deliverWebhook } from "./deliver-webhook";
import { sweepWebhooks } from "./sweep-webhooks";
import { maintenance } from "./maintenance";
import { pollChannelStates } from "./poll-channel-states";
import { launchEngine } from "./launch-engine";
import { launchFunnel } from "./launch-funnel";
import { numberHealthSweep } from "./number-health-sweep";

/** Every function served at /api/inngest. */
export const functions = [
  dispatchCampaign,
  sweepDueCampaigns,
  deliverWebhook,
  sweepWebhooks,
  maintenance,
  pollChannelStates,
  launchEngine,
  launchFunnel,
  numberHealthSweep,
];
