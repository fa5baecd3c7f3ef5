import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { WebhookRunner } from "../../inngest/in-process/webhook-runner";
import { getServices } from "../../server/services";
import { startTestServer, type TestServer } from "../http-server";
import { startReceiver, type Receiver } from "./receiver";

/**
 * For a test file: the REST test server and a loopback receiver, started once and closed at the end;
 * the receiver answers 200 again after every test. Read them through the returned object.
 */
export function withServerAndReceiver() {
  const ctx = {} as { server: TestServer; receiver: Receiver };
  beforeAll(async () => {
    ctx.server = await startTestServer();
    ctx.receiver = await startReceiver();
  });
  afterEach(() => ctx.receiver.respond({}));
  afterAll(async () => {
    await ctx.receiver.close();
    await ctx.server.close();
  });
  return ctx;
}

/**
 * An in-process webhook runner for each test, with a short retry schedule. `start()` again after
 * stopping it mid-test; it is stopped after each test.
 */
export function withWebhookRunner(retrySchedule: string) {
  const ctx = {
    runner: undefined as unknown as WebhookRunner,
    async start() {
      ctx.runner = new WebhookRunner((await getServices()).db, { maxSleepMs: 50 }).start();
    },
  };
  beforeEach(async () => {
    process.env.WEBHOOK_RETRY_SCHEDULE = retrySchedule;
    await ctx.start();
  });
  afterEach(async () => {
    await ctx.runner.stop();
    delete process.env.WEBHOOK_RETRY_SCHEDULE;
  });
  return ctx;
}
