/** What both crash tests (simulator, Evolution API) read: info-campaign's counters and the server's reconcile log lines. */
import { existsSync, readFileSync } from "node:fs";

export interface Groups {
  total: number;
  sent: number;
  pending: number;
  failed: number;
}

/**
 * What reconcileInFlight decided for one campaign over every lifetime of the server (its log lines
 * `[dispatch] campaign <id> reconciled n in-flight: s sent at the provider, p back to pending, …`).
 */
export function reconciledFromLog(logFile: string, campaignId: string) {
  const text = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
  const total = { sent: 0, pending: 0, lookAgain: 0, unknown: 0 };
  const re = new RegExp(
    `\\[dispatch\\] campaign ${campaignId} reconciled \\d+ in-flight: (\\d+) sent at the provider, (\\d+) back to pending, (\\d+) to look up again, (\\d+) outcome unknown`,
    "g",
  );
  for (const m of text.matchAll(re)) {
    total.sent += Number(m[1]);
    total.pending += Number(m[2]);
    total.lookAgain += Number(m[3]);
    total.unknown += Number(m[4]);
  }
  return total;
}
