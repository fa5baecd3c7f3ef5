/**
 * The whole service with MESSAGING_PROVIDER=evolution against the fake gateway (test/fake-evolution.ts):
 * the fake started, the variables set, the HTTP test server started (the gateway's webhooks go to it) and
 * its services built — after the variables, since the provider is chosen when they are first built.
 */
import { getServices } from "../server/services";
import { startFakeEvolution, type FakeEvolutionOptions } from "./fake-evolution";
import { startTestServer } from "./http-server";

export async function startEvolutionService(opts: { fake?: FakeEvolutionOptions; env?: Record<string, string> } = {}) {
  const fake = await startFakeEvolution(opts.fake);
  Object.assign(process.env, {
    MESSAGING_PROVIDER: "evolution",
    EVOLUTION_API_URL: fake.url,
    EVOLUTION_API_KEY: fake.apiKey,
    EVOLUTION_TIMEOUT_MS: "1000",
    EVOLUTION_RETRIES: "1",
    ...opts.env,
  });
  const server = await startTestServer();
  process.env.EVOLUTION_WEBHOOK_BASE_URL = server.url;
  const services = await getServices();
  if (services.provider.name !== "evolution") throw new Error(`expected the evolution provider, got ${services.provider.name}`);
  return { fake, server, services };
}
