import { runCampaignStep } from "../../server/dispatch/run-campaign-step";
import { env } from "../../server/env";
import { getServices } from "../../server/services";
import { campaignCanceled, dispatchRequested, inngest } from "../client";

/**
 * Steps (runs + sleeps) one run takes before it continues in a fresh run: Inngest allows about
 * 1,000 steps and 4 MB of step data per run, and replays the whole history on every call.
 * DISPATCH_STEPS_PER_RUN overrides it (tests use a tiny budget).
 */
export const stepsPerRun = () => env.dispatchStepsPerRun;

/** Inngest caps one sleep (7 days on the free plan); a longer wait is a chain of sleeps, each after a fresh look. */
const maxSleepMs = 7 * 24 * 60 * 60_000;

/**
 * The Inngest engine for one campaign: a thin loop around the domain's step (runCampaignStep), the
 * same step the in-process runner calls. The domain decides what to send and when; this only sleeps.
 */
export const dispatchCampaign = inngest.createFunction(
  {
    id: "dispatch-campaign",
    name: "Dispatch a campaign",
    triggers: [dispatchRequested],
    // One run per campaign at a time, so wake-ups do not pile up runs. The tenant and channel queues
    // (settings.queue.concurrent_mode) are not an engine concern: the domain enforces them (queueFreeAt
    // in server/dispatch/queue.ts) and answers "wait until …", which the loop sleeps on. A second run
    // that still slips in (e.g. one sleeping while another starts) is harmless: the campaign lease
    // serializes steps, and pacing lives in the campaign's nextRunAt, not in the run.
    concurrency: [{ key: "event.data.id_campaign", limit: 1 }],
    cancelOn: [{ event: campaignCanceled, if: "async.data.id_campaign == event.data.id_campaign" }],
    // A step that throws is retried by Inngest (default 3 retries); runCampaignStep is safe to repeat:
    // it works under a lease and reconciles sends left in flight before sending again.
  },
  async ({ event, step }) => {
    const id = event.data.id_campaign;
    const budget = stepsPerRun();
    let used = 0;
    const continueInNewRun = async () => {
      await step.sendEvent("continue", { name: dispatchRequested.name, data: event.data });
      return { id_campaign: id, continued: true, steps: used };
    };
    for (let n = 1; ; n++) {
      if (used >= budget) return continueInNewRun();
      const outcome = await step.run(`step-${n}`, () => dispatchStep(id));
      used++;
      // Nothing to do until something external happens (resume, reconnect): that wakes a new run.
      if (!outcome.nextRunAt) return { id_campaign: id, status: outcome.status, steps: used };
      if (outcome.sleepUntil) {
        // The new run's first step plans again and sleeps there.
        if (used >= budget) return continueInNewRun();
        await step.sleepUntil(`wait-${n}`, new Date(outcome.sleepUntil));
        used++;
      }
    }
  },
);

/**
 * One domain step, with its result made JSON (step results are stored as JSON). Whether to sleep is
 * decided here, inside the memoized step, so every replay of the run takes the same path.
 */
async function dispatchStep(campaignId: string) {
  const outcome = await runCampaignStep(await getServices(), campaignId);
  const now = Date.now();
  const next = outcome.nextRunAt?.getTime();
  return {
    plan: outcome.plan,
    status: outcome.status ?? null,
    sent: outcome.sent,
    nextRunAt: outcome.nextRunAt?.toISOString() ?? null,
    sleepUntil: next !== undefined && next > now ? new Date(Math.min(next, now + maxSleepMs)).toISOString() : null,
  };
}
