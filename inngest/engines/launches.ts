import { onLaunchWake } from "../../server/launches/launch/wake";
import { inngest, launchWakeRequested } from "../client";
import { createLaunchEngine } from "../functions/launch-engine";
import { LaunchRunner, type LaunchRunnerOptions } from "../in-process/launch-runner";
import { defineEngine } from "./engine";

/** A pass over every active auto_create launch: every 30 s in this process, every minute (Inngest's finest) under Inngest. */
const passEveryMs = 30_000;

/** The `launch-engine` Inngest function (a pass on its cron, or over one launch on `launch/wake.requested`). */
export const launchEngine = createLaunchEngine(passEveryMs);

/**
 * The launch engine (server/launches/launch/launch-engine.ts makes a launch's next groups): the in-process LaunchRunner, or
 * the `launch-engine` function fed with `launch/wake.requested` events for this process's wake-ups (a lost one costs
 * latency only: the next cron pass finds the launch).
 */
export const launchesEngine = defineEngine<Partial<LaunchRunnerOptions>>({
  id: "launches",
  inProcess: (services, opts) => new LaunchRunner(services, { intervalMs: passEveryMs, ...opts }).start(),
  forward: (_services, forwarder) =>
    onLaunchWake((launchId) => forwarder.track("launch/wake.requested", inngest.send(launchWakeRequested.create({ id_launch: launchId })))),
  functions: [launchEngine],
});
