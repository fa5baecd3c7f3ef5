import { runMaintenanceAndLog } from "../../server/maintenance/purge-expired";
import { defineJob } from "./job";

/**
 * The one retention job (docs/decisions.md#limits-abuse-retention, "Retention"): a minute after start, then
 * hourly. One step: its batches are short statements, and a retried run simply finds less to delete.
 */
export const maintenanceJob = defineJob({
  id: "maintenance",
  name: "Retention (hourly maintenance)",
  intervalMs: () => 3_600_000,
  firstRunMs: 60_000,
  failure: "[maintenance] retention failed",
  run: ({ services, now, step }) => step("purge-expired", () => runMaintenanceAndLog(services.db, now)),
});
