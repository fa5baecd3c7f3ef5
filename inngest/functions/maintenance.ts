import { runMaintenanceAndLog } from "../../server/maintenance/purge-expired";
import { getServices } from "../../server/services";
import { inngest } from "../client";

/**
 * The one retention job (docs/decisions.md#limits-abuse-retention, "Retention") under Inngest: hourly, the same domain function the embedded
 * MaintenanceRunner calls. One step: its batches are short statements, and a retried run simply finds
 * less to delete. `clock` is for tests; the served function uses the real time.
 */
export function createMaintenance({ clock = () => new Date() }: { clock?: () => Date } = {}) {
  return inngest.createFunction(
    { id: "maintenance", name: "Retention (hourly maintenance)", triggers: [{ cron: "0 * * * *" }], concurrency: 1 },
    async ({ step }) => step.run("purge-expired", async () => runMaintenanceAndLog((await getServices()).db, clock())),
  );
}

export const maintenance = createMaintenance();
