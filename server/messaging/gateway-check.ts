import { processSlot } from "../process-state";
import type { EvolutionProvider, GatewayCheck } from "./evolution";
import type { MessagingProvider } from "./provider";

const lastCheck = processSlot<GatewayCheck>("gatewayCheck");

/** The last start-up check of the gateway (null before the first, and always with the simulator). */
export function lastGatewayCheck(): GatewayCheck | null {
  return lastCheck.get() ?? null;
}

/**
 * Checks the gateway (Evolution only), keeps the result for the dashboard and prints it in the log:
 * the version, a warning per problem found, and the prerequisites that cannot be checked as reminders.
 */
export async function runGatewayCheck(provider: MessagingProvider, log: Pick<Console, "info" | "warn"> = console): Promise<GatewayCheck | null> {
  // Not instanceof: Next may bundle the caller apart from the services (see simulator-control.ts).
  if (provider.name !== "evolution") return null;
  const check = await (provider as EvolutionProvider).checkGateway();
  lastCheck.set(check);
  log.info(`[evolution] gateway ${check.reachable ? `reachable, version ${check.version ?? "unknown"}` : "unreachable"}`);
  for (const w of check.warnings) log.warn(`[evolution] ${w}`);
  for (const r of check.reminders) log.info(`[evolution] reminder: ${r}`);
  return check;
}
