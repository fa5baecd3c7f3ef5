import { dispatchCampaign } from "./dispatch-campaign";
import { sweepDueCampaigns } from "./sweep-due-campaigns";

/** Every function served at /api/inngest. */
export const functions = [dispatchCampaign, sweepDueCampaigns];
