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
  const { startDispatchEngine } = await import("./inngest/engine");
  const { startWebhookEngine } = await import("./inngest/webhook-engine");
  const { startLaunchEngine } = await import("./inngest/launch-runner");
  const { startPeriodicJobs } = await import("./inngest/jobs/in-process");
  const { runGatewayCheck } = await import("./server/messaging/gateway-check");
  const services = await getServices();
  startDispatchEngine(services);
  startWebhookEngine(services);
  startLaunchEngine(services);
  // The periodic jobs of inngest/jobs/ (maintenance, the state poll, the launches' pass, the number health sweep, Meta's events).
  startPeriodicJobs(services);
  // Printed in the log at start and kept for the dashboard's channels page; it never blocks the start.
  void runGatewayCheck(services.provider).catch((err) => console.error("[evolution] gateway check failed", err));
}
