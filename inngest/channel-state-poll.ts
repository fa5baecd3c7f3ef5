import { env, inngestConfigured } from "../server/env";
import type { MessagingProvider } from "../server/messaging/provider";
import type { Services } from "../server/services";
import { PeriodicJob } from "./periodic-job";

/** The providers that can poll their channels' states (Evolution: a missed webhook is recovered). */
interface PollingProvider extends MessagingProvider {
  pollStates(): Promise<number>;
}

const canPoll = (p: MessagingProvider): p is PollingProvider => typeof (p as Partial<PollingProvider>).pollStates === "function";

export interface ChannelStatePollOptions {
  /** Between two polls (default EVOLUTION_STATE_POLL_SECONDS, 60 s). */
  intervalMs?: number;
}

/**
 * The embedded state poll: every minute, the gateway is asked for the state of each channel that is
 * not connected, so a missed `connection.update` webhook is recovered (and a lost instance created
 * again).
 */
export class ChannelStatePoller extends PeriodicJob {
  constructor(provider: PollingProvider, intervalMs: number) {
    super(() => provider.pollStates(), { intervalMs, failure: "[evolution] state poll failed" });
  }

  /** One poll now (tests; the timer calls it too). */
  poll() {
    return this.runOnce();
  }
}

export interface ChannelStatePollEngine {
  kind: "inngest" | "in-process" | "off";
  stop(): Promise<void>;
}

/** With Inngest configured the `channel-state-poll` cron function polls; otherwise this process does (Evolution only). */
export function startChannelStatePoll({ provider }: Services, opts: ChannelStatePollOptions = {}): ChannelStatePollEngine {
  const intervalMs = opts.intervalMs ?? env.evolution.statePollSeconds * 1000;
  if (!canPoll(provider) || !(intervalMs > 0)) return { kind: "off", stop: async () => {} };
  if (inngestConfigured()) return { kind: "inngest", stop: async () => {} };
  const poller = new ChannelStatePoller(provider, intervalMs).start();
  return { kind: "in-process", stop: () => poller.stop() };
}
