import { engines } from "./engines/index";
import { inngestFunctionOf } from "./functions/periodic-job";
import { periodicJobs } from "./jobs/index";

/** The periodic jobs' cron functions (inngest/jobs/), one per definition. */
export const periodicFunctions = periodicJobs.map((job) => inngestFunctionOf(job));

/** Every function served at /api/inngest: the engines' (inngest/engines/), then the periodic jobs'. */
export const functions = [...engines.flatMap((engine) => engine.functions), ...periodicFunctions];
