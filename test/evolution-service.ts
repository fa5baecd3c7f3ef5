/**
 * The whole service with MESSAGING_PROVIDER=evolution against the fake gateway (test/fake-evolution.ts):
 * the fake started, the variables set, the HTTP test server started (the gateway's webhooks go to it) and
 * its services built — after the variables, since the provider is chosen when they are first built.
 */
import { expect } from "vitest";
import { InProcessRunner } from "../inngest/in-process/dispatch-runner";
import { getServices } from "../server/services";
import { startFakeEvolution, type FakeEvolutionOptions } from "./fake-evolution";
import { newTenant, zeroPacingWith } from "./helpers";
import { startTestServer } from "./http-server";

export async function startEvolutionService(opts: { fake?: FakeEvolutionOptions; env?: Record<string, string> } = {}) {
  const fake = await startFakeEvolution(opts.fake);
  // Node's fetch loads undici at its first call (hundreds of milliseconds on a loaded machine): done here, on the
  // gateway's welcome route (no key, nothing counted), so the test's first gateway call is not timed out by it.
  await (await fetch(fake.url)).arrayBuffer();
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

/**
 * The Evolution test files' setup: startEvolutionService, the embedded dispatch runner (50 ms sleeps) and a tenant
 * (`api`) with room for `channelLimit` channels on zero pacing at `dispatchesPerLoop` groups a loop (default 10).
 * `stop` stops the runner, then the server, then the fake.
 */
export async function startEvolutionWithRunner(opts: {
  fake?: FakeEvolutionOptions;
  env?: Record<string, string>;
  channelLimit: number;
  dispatchesPerLoop?: number;
}) {
  const started = await startEvolutionService(opts);
  const runner = new InProcessRunner(started.services, { maxSleepMs: 50 }).start();
  const api = await newTenant(started.server.url, { channelLimit: opts.channelLimit });
  expect((await api("PATCH", "/api/external/edit-settings", zeroPacingWith(opts.dispatchesPerLoop ?? 10))).status).toBe(200);
  const stop = async () => {
    await runner.stop();
    await started.server.close();
    await started.fake.close();
  };
  return { ...started, api, stop };
}
