import { runWelcomes } from "../../server/launches/funnel/run-welcomes";
import { onLaunchWake } from "../../server/launches/launch/wake";
import type { Services } from "../../server/services";
import { PassRunner } from "./pass-runner";

export interface WelcomeRunnerOptions {
  /** Between two passes (inngest/engines/welcomes.ts): how late a batch due by `max_wait_minutes` may go at most. */
  intervalMs: number;
  /** The pass's time (tests: a later clock makes `max_wait_minutes` pass). */
  clock?: () => Date;
}

/**
 * The embedded welcome engine (no Inngest): a pass over every launch's welcomes (server/launches/funnel/run-welcomes.ts) every
 * `intervalMs`, and at once when a launch is woken (its joins recorded: a batch may be complete). See PassRunner.
 */
export class WelcomeRunner extends PassRunner {
  constructor(services: Services, opts: WelcomeRunnerOptions) {
    const clock = opts.clock ?? (() => new Date());
    super(
      {
        label: "welcomes",
        pass: async () => {
          const { made, sent } = await runWelcomes(services.db, services.provider, clock());
          // A pass that made or sent something may have left more (its bounded batch); one with nothing to do waits.
          return made + sent > 0;
        },
        onWake: (wake) => onLaunchWake(() => wake()),
      },
      opts.intervalMs,
    );
  }
}
