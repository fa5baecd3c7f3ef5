import { env } from "../../server/env";
import type { MessagingProvider } from "../../server/messaging/provider";
import { defineJob } from "./job";

/** The providers that can poll their channels' states (Evolution: a missed webhook is recovered). */
interface PollingProvider extends MessagingProvider {
  pollStates(): Promise<number>;
}

const canPoll = (p: MessagingProvider): p is PollingProvider => typeof (p as Partial<PollingProvider>).pollStates === "function";

/**
 * The channel state poll (docs/evolution.md): the gateway is asked for the state of each channel that is not
 * connected, so a missed `connection.update` webhook is recovered (and a lost instance created again). Every
 * EVOLUTION_STATE_POLL_SECONDS in this process (0: off), every minute under Inngest; nothing to do with the simulator.
 */
export const channelStatePollJob = defineJob({
  id: "channel-state-poll",
  name: "Channel state poll (missed gateway webhooks)",
  intervalMs: () => env.evolution.statePollSeconds * 1000,
  appliesTo: ({ provider }) => canPoll(provider),
  failure: "[evolution] state poll failed",
  run: ({ services: { provider }, step }) => step("poll-states", async () => ({ polled: canPoll(provider) ? await provider.pollStates() : 0 })),
});
