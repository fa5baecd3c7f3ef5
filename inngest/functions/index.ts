import { inngestFunctionOf } from "../jobs/inngest-functions";
import { periodicJobs } from "../jobs/index";
import { deliverWebhook } from "./deliver-webhook";
import { dispatchCampaign } from "./dispatch-campaign";
import { launchEngine } from "./launch-engine";
import { sweepDueCampaigns } from "./sweep-due-campaigns";
import { sweepWebhooks } from "./sweep-webhooks";

/** The periodic jobs' cron functions (inngest/jobs/), one per definition. */
export const periodicFunctions = periodicJobs.map((job) => inngestFunctionOf(job));

/** Every function served at /api/inngest. */
export const functions = [dispatchCampaign, sweepDueCampaigns, deliverWebhook, sweepWebhooks, launchEngine, ...periodicFunctions];
