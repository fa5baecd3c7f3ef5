import { channelStatePollJob } from "./channel-state-poll";
import { launchFunnelJob } from "./launch-funnel";
import { maintenanceJob } from "./maintenance";
import { metaEventsJob } from "./meta-events";
import { numberHealthSweepJob } from "./number-health-sweep";
import { seriesRunsJob } from "./series-runs";

/** Every periodic job: this process runs them on timers without Inngest (inngest/in-process/job-timer.ts); Inngest serves them as crons (inngest/functions/periodic-job.ts). */
export const periodicJobs = [maintenanceJob, channelStatePollJob, launchFunnelJob, numberHealthSweepJob, seriesRunsJob, metaEventsJob];
