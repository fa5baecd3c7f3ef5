import { runGroupActions } from "../../server/groups/actions/run-group-actions";
import { onGroupActionWake } from "../../server/groups/actions/wake";
import type { Services } from "../../server/services";
import { PassRunner } from "./pass-runner";

export interface GroupActionRunnerOptions {
  /** Between two passes over the due group actions when the last one left nothing to do now (inngest/engines/group-actions.ts). */
  intervalMs: number;
}

/**
 * The embedded group-action engine (no Inngest): a pass over the due actions every `intervalMs`, at once again while a
 * pass left work (an action's pass is bounded; its next groups are the next pass's), and at once when `wakeGroupAction`
 * names an action (created). See PassRunner.
 */
export class GroupActionRunner extends PassRunner {
  constructor(services: Services, opts: GroupActionRunnerOptions) {
    super(
      {
        label: "group-actions",
        pass: async (stopping) => (await runGroupActions(services.db, services.provider, new Date(), undefined, { stopping })).more,
        onWake: (wake) => onGroupActionWake(() => wake()),
      },
      opts.intervalMs,
    );
  }
}
