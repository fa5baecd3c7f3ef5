import { getServices } from "../../server/services";
import { inngest } from "../client";

/**
 * The channel state poll under Inngest (the embedded ChannelStatePoller does it without): every minute,
 * the state of each Evolution channel that is not connected is read from the gateway, so a missed
 * webhook is recovered. A no-op with the simulator.
 */
export const pollChannelStates = inngest.createFunction(
  { id: "channel-state-poll", name: "Channel state poll (missed gateway webhooks)", triggers: [{ cron: "* * * * *" }], concurrency: 1 },
  async ({ step }) =>
    step.run("poll-states", async () => {
      const { provider } = await getServices();
      const poll = (provider as { pollStates?: () => Promise<number> }).pollStates;
      return { polled: poll ? await poll.call(provider) : 0 };
    }),
);
