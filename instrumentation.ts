/** Runs once when the Next.js server starts: open and migrate the database, wire the provider, start dispatch. */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { getServices } = await import("./server/services");
  const { inngestConfigured } = await import("./server/env");
  const services = await getServices();
  if (!inngestConfigured()) {
    const { InProcessRunner } = await import("./inngest/runner");
    new InProcessRunner(services).start();
  }
}
