import { afterAll, afterEach, beforeAll } from "vitest";
import { startTestServer, type TestServer } from "../http-server";
import { startReceiver, type Receiver } from "./receiver";

/**
 * For a test file: the REST test server and a loopback receiver, started once and closed at the end;
 * the receiver answers 200 again after every test. Read them through the returned object.
 */
export function useServerAndReceiver() {
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
