import { runGroupActions } from "../../server/groups/actions/run-group-actions";
import { getServices } from "../../server/services";
import { groupActionWakeRequested, inngest } from "../client";
import { cronEvery } from "../jobs/job";

/**
 * The group-action engine under Inngest (the embedded GroupActionRunner does it without): passes over the due actions on
 * the cron of the engine's interval (inngest/engines/group-actions.ts) and on `group-action/wake.requested`, one step per
 * pass while work is left (each pass is bounded; every group's result is recorded before the step ends, so a retried step
 * reads back what it finds being applied).
 */
export function createGroupActionEngine(passEveryMs: number) {
  return inngest.createFunction(
    {
      id: "group-action-engine",
      name: "Group actions (close, open, rename… every group)",
      triggers: [{ cron: cronEvery(passEveryMs) }, groupActionWakeRequested],
      concurrency: 1,
    },
    async ({ event, step }) => {
      const actionId = (event.data as { id_action?: string } | undefined)?.id_action;
      for (let i = 0; i < 30; i++) {
        const more = await step.run(`pass-${i}`, async () => {
          const { db, provider } = await getServices();
          return (await runGroupActions(db, provider, new Date(), actionId)).more;
        });
        if (!more) break;
      }
    },
  );
}
