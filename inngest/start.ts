/**
 * The one place that picks who runs the background work (docs/decisions.md#running-the-service): Inngest when it is
 * configured (server/env.ts `inngestConfigured()`), else this process. It starts the registry's periodic jobs
 * (inngest/jobs/) and event-driven engines (inngest/engines/) alike; instrumentation.ts calls startBackground.
 */
import { inngestConfigured } from "../server/env";
import type { Services } from "../server/services";
import { dispatchEngine } from "./engines/dispatch";
import { type EngineDefinition, Forwarder } from "./engines/engine";
import { engines } from "./engines/index";
import { groupActionsEngine } from "./engines/group-actions";
import { launchesEngine } from "./engines/launches";
import { webhooksEngine } from "./engines/webhooks";
import { JobTimer, type JobTimerOptions } from "./in-process/job-timer";
import type { GroupActionRunnerOptions } from "./in-process/group-action-runner";
import type { LaunchRunnerOptions } from "./in-process/launch-runner";
import { periodicJobs } from "./jobs/index";
import type { PeriodicJobDefinition } from "./jobs/job";

export interface Started {
  /**
   * `in-process`: this process runs it; `inngest`: Inngest's functions do (an engine's wake-ups are forwarded to
   * them); `off`: a job with nothing to do for these services (or an interval of 0).
   */
  kind: "inngest" | "in-process" | "off";
  /** Stops listening and waits for the work in progress. */
  stop(): Promise<void>;
}

/** One engine: Inngest's (this process forwards its wake-ups) when Inngest is configured, else this process's runner. */
export function startEngine<O>(engine: EngineDefinition<O>, services: Services, opts?: O): Started {
  if (!inngestConfigured()) {
    const runner = engine.inProcess(services, opts);
    return { kind: "in-process", stop: () => runner.stop() };
  }
  const forwarder = new Forwarder(engine.id);
  const off = engine.forward(services, forwarder);
  return {
    kind: "inngest",
    async stop() {
      off();
      await forwarder.settle();
    },
  };
}

/** One job: off when it does not apply, Inngest's cron when Inngest is configured, else this process's timer. */
export function startJob(job: PeriodicJobDefinition, services: Services, opts: JobTimerOptions = {}): Started {
  if ((job.appliesTo && !job.appliesTo(services)) || !((opts.intervalMs ?? job.intervalMs()) > 0)) return { kind: "off", stop: async () => {} };
  if (inngestConfigured()) return { kind: "inngest", stop: async () => {} };
  const timer = new JobTimer(job, services, opts).start();
  return { kind: "in-process", stop: () => timer.stop() };
}

/** Every engine and periodic job of the registry (instrumentation.ts, at start). */
export function startBackground(services: Services): Started[] {
  return [...engines.map((engine) => startEngine(engine, services)), ...periodicJobs.map((job) => startJob(job, services))];
}

export const startDispatchEngine = (services: Services) => startEngine(dispatchEngine, services);
export const startWebhookEngine = (services: Services) => startEngine(webhooksEngine, services);
export const startLaunchEngine = (services: Services, opts?: Partial<LaunchRunnerOptions>) => startEngine(launchesEngine, services, opts);
export const startGroupActionEngine = (services: Services, opts?: Partial<GroupActionRunnerOptions>) => startEngine(groupActionsEngine, services, opts);
