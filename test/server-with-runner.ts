import { afterAll, beforeAll } from "vitest";
import { InProcessRunner } from "../inngest/in-process/dispatch-runner";
import { getServices } from "../server/services";
import { startTestServer, type TestServer } from "./http-server";

/**
 * A test server and the embedded dispatch runner for a test file: started before its tests, stopped after
 * (call at the top level). `url` is set once started.
 */
export function testServerWithRunner(): Pick<TestServer, "url"> {
  const server = { url: "" };
  let started: TestServer | undefined;
  let runner: InProcessRunner | undefined;
  beforeAll(async () => {
    started = await startTestServer();
    server.url = started.url;
    runner = new InProcessRunner(await getServices(), { maxSleepMs: 50 }).start();
  });
  afterAll(async () => {
    await runner?.stop();
    await started?.close();
  });
  return server;
}
