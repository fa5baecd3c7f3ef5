/**
 * Runs once when the Next.js server starts: open and migrate the database, wire the provider, start
 * dispatch, webhooks, the hourly maintenance job, the launches' periodic work (members reports, invite links), the number health sweep and (Evolution) the channel state poll, and check the gateway.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startupWarnings, validateEnv } = await import("./server/env");
  // Every variable is checked here, at start: a typo stops the server naming it.
  validateEnv();
  for (const warning of startupWarnings()) console.warn(`[env] ${warning}`);
  const { getServices } = await import("./server/services");
  const { startBackground } = await import("./inngest/start");
  const { runGatewayCheck } = await import("./server/messaging/gateway-check");
  const services = await getServices();
  // The registry's engines (dispatch, webhooks, launches) and periodic jobs (inngest/engines/, inngest/jobs/), run by
  // Inngest when it is configured, else by this process.
  startBackground(services);
  // Printed in the log at start and kept for the dashboard's channels page; it never blocks the start.
  void runGatewayCheck(services.provider).catch((err) => console.error("[evolution] gateway check failed", err));
}
