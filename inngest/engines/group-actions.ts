import { onGroupActionWake } from "../../server/groups/actions/wake";
import { groupActionWakeRequested, inngest } from "../client";
import { createGroupActionEngine } from "../functions/group-action-engine";
import { GroupActionRunner, type GroupActionRunnerOptions } from "../in-process/group-action-runner";
import { defineEngine } from "./engine";

/** A pass over the due group actions: every 5 s in this process (a scheduled action starts within its minute), every minute under Inngest. */
const passEveryMs = 5_000;

/** The `group-action-engine` Inngest function. */
export const groupActionEngine = createGroupActionEngine(passEveryMs);

/**
 * The group-action engine (server/groups/actions/run-group-actions.ts applies an action to its groups): the in-process
 * GroupActionRunner, or the `group-action-engine` function fed with `group-action/wake.requested` events for this
 * process's wake-ups (a lost one costs latency only: the cron finds the action).
 */
export const groupActionsEngine = defineEngine<Partial<GroupActionRunnerOptions>>({
  id: "group-actions",
  inProcess: (services, opts) => new GroupActionRunner(services, { intervalMs: passEveryMs, ...opts }).start(),
  forward: (_services, forwarder) =>
    onGroupActionWake((actionId) => forwarder.track("group-action/wake.requested", inngest.send(groupActionWakeRequested.create({ id_action: actionId })))),
  functions: [groupActionEngine],
});
