/** Runs once when the Next.js server starts: open and migrate the database, wire the provider, start dispatch, webhooks and the hourly maintenance job. */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startupWarnings, validateEnv } = await import("./server/env");
  // Every variable is checked here, at start: a typo stops the server naming it.
  validateEnv();
  for (const warning of startupWarnings()) console.warn(`[env] ${warning}`);
  const { getServices } = await import("./server/services");
  const { startDispatchEngine } = await import("./inngest/engine");
  const { startWebhookEngine } = await import("./inngest/webhook-engine");
  const { startMaintenance } = await import("./inngest/maintenance-runner");
  const services = await getServices();
  startDispatchEngine(services);
  startWebhookEngine(services);
  startMaintenance(services);
}
