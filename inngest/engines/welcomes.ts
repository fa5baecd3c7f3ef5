import { createWelcomeEngine } from "../functions/welcome-engine";
import { WelcomeRunner, type WelcomeRunnerOptions } from "../in-process/welcome-runner";
import { defineEngine } from "./engine";

/** A pass over the launches' welcomes: every 5 s in this process, every minute (Inngest's finest) under Inngest. */
const passEveryMs = 5_000;

/** The `welcome-engine` Inngest function. */
export const welcomeEngine = createWelcomeEngine(passEveryMs);

/**
 * The welcome engine (server/launches/funnel/run-welcomes.ts greets each launch group's newcomers, CONTRACT §8 "Welcome"): the
 * in-process WelcomeRunner, woken by the launches' wake-ups (joins recorded), or the `welcome-engine` function, which
 * `launch/wake.requested` triggers too: the launches engine (launches.ts) already forwards those events, so this one
 * forwards nothing of its own.
 */
export const welcomesEngine = defineEngine<Partial<WelcomeRunnerOptions>>({
  id: "welcomes",
  inProcess: (services, opts) => new WelcomeRunner(services, { intervalMs: passEveryMs, ...opts }).start(),
  forward: () => () => {},
  functions: [welcomeEngine],
});
