import { env, inngestConfigured } from "../server/env";
import type { MessagingProvider } from "../server/messaging/provider";
import type { Services } from "../server/services";

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
 * again). The timer is unref'd (it never keeps the process alive); stop() waits for a poll in progress.
 */
export class ChannelStatePoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;

  constructor(
    private readonly provider: PollingProvider,
    private readonly intervalMs: number,
  ) {}

  start() {
    this.stopped = false;
    this.schedule();
    return this;
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One poll now (tests; the timer calls it too). */
  async poll() {
    this.running = this.provider.pollStates().catch((err) => console.error("[evolution] state poll failed", err));
    return this.running;
  }

  private schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(async () => {
      if (this.stopped) return;
      await this.poll();
      this.schedule();
    }, this.intervalMs);
    this.timer.unref?.();
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
