/**
 * An event-driven engine defined once (docs/architecture.md#background-jobs): the work a wake-up of the domain starts
 * (a campaign's dispatch, a webhook delivery, a launch's groups). Like a periodic job (inngest/jobs/job.ts) it has two
 * halves, picked in one place (inngest/start.ts): this process's runner (inngest/in-process/) when no Inngest is
 * configured, and otherwise the Inngest functions (inngest/functions/) fed by the wake-ups this process forwards as
 * events. Adding an engine is one file in inngest/engines/ and one line in index.ts.
 */
import type { InngestFunction } from "inngest";
import type { Services } from "../../server/services";

/** What a started half answers: stop() stops listening and waits for the work in progress. */
export interface Stoppable {
  stop(): Promise<void>;
}

export interface EngineDefinition<O = undefined> {
  /** The engine's name in logs: `[dispatch] …`. */
  id: string;
  /** Without Inngest: this process's runner, subscribed to the engine's wake source and started. */
  inProcess(services: Services, opts?: O): Stoppable;
  /**
   * With Inngest: subscribes to the engine's wake source and forwards each wake-up as Inngest events (through
   * `forwarder`, which logs a failed send and lets stop() wait for those in flight); answers the unsubscribe.
   */
  forward(services: Services, forwarder: Forwarder): () => void;
  /** Its Inngest functions, served at /api/inngest (inngest/served.ts). */
  functions: InngestFunction.Any[];
}

export const defineEngine = <O = undefined>(engine: EngineDefinition<O>) => engine;

/** The sends of wake-ups to Inngest that are under way: a failure is logged, stop() waits for the rest. */
export class Forwarder {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly label: string) {}

  /** `work` (sending `what`) in the background; answers it settled, so a caller may chain sends in order. */
  track(what: string, work: Promise<unknown>): Promise<void> {
    // A lost event is not lost work: the engine's Inngest sweep or cron finds it (sweepEveryMs, inngest/client.ts).
    const p = work.then(
      () => undefined,
      (err) => console.error(`[${this.label}] could not send ${what} to Inngest`, err),
    );
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
    return p;
  }

  async settle() {
    await Promise.all(this.inFlight);
  }
}
