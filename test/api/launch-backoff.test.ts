/**
 * The creation backoff holds every caller, not only the engine (CONTRACT §7 "Launches on several numbers";
 * docs/launches.md#when-a-creation-fails): after a failed creation, launch-groups of that launch and create-launch on
 * that number answer 503 `group_create_backoff` and ask nothing of the gateway; another number of a launch creates.
 * The whole service against the fake Evolution API 2.3.7 (its group/create answering 500 "Connection Closed").
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { listLaunches } from "../../server/launches/info-launch";
import { startEvolutionService } from "../evolution-service";
import type { FakeEvolution } from "../fake-evolution";
import { expectEnvelope, newTenant, until, type Api } from "../helpers";
import type { TestServer } from "../http-server";

let fake: FakeEvolution;
let server: TestServer;
let api: Api;

beforeAll(async () => {
  ({ fake, server } = await startEvolutionService({ env: { EVOLUTION_TIMEOUT_MS: "5000" } }));
  api = await newTenant(server.url, { channelLimit: 10 });
});
afterAll(async () => {
  await server.close();
  await fake.close();
});

async function connectedChannel() {
  const { json } = await api("POST", "/api/external/create-channel", { name: "Evo BH" });
  await fake.pair(json.id_channel);
  await until(
    async () => (await api("PUT", `/api/external/edit-channel/${json.id_channel}`, { name: "Evo BH" })).json.status,
    (s) => s === "connected",
  );
  return json.id_channel as string;
}

const template = (name: string) => ({ name, admins_only: false, admins: ["5531987650001"] });
const posts = (ch: string) => fake.createRequests.filter((r) => r.instance === ch).length;

it("after a failed creation, launch-groups of the launch and create-launch on the number answer 503 group_create_backoff without asking the gateway; another number creates", async () => {
  const [a, b] = [await connectedChannel(), await connectedChannel()];
  const made = await api("POST", "/api/external/create-launch", {
    name: "Espera",
    id_channel: [a],
    group_template: template("Espera #{n}"),
    auto_create: false,
    initial_groups: 0,
  });
  expect(made.status, made.text).toBe(201);
  const launchId = made.json.id_launch as string;

  // WhatsApp fails the creation: one request to the gateway, 503; the launch's and the number's creations wait.
  fake.failCreate({ message: "Connection Closed", after: false, times: 100 });
  try {
    const failed = await api("POST", `/api/external/launch-groups/${launchId}`, { create: 1 });
    expect(failed.status, failed.text).toBe(503);
    const afterFailure = posts(a);
    expect(afterFailure).toBeGreaterThanOrEqual(1);

    // Asked again at once: held by the backoff, nothing asked of the gateway.
    const again = await api("POST", `/api/external/launch-groups/${launchId}`, { create: 1 });
    expectEnvelope(again, 503, "Service Unavailable");
    expect(again.json.code).toBe("group_create_backoff");
    expect(posts(a)).toBe(afterFailure);

    // A new launch on the same number: held too (the number is the unit of failure), nothing kept.
    const other = await api("POST", "/api/external/create-launch", {
      name: "Outra",
      id_channel: [a],
      group_template: template("Outra #{n}"),
      initial_groups: 1,
    });
    expectEnvelope(other, 503, "Service Unavailable");
    expect(other.json.code).toBe("group_create_backoff");
    expect(posts(a)).toBe(afterFailure);
    expect((await listLaunches(await getDb(), api.tenantId)).launches.some((l) => l.name === "Outra")).toBe(false);
  } finally {
    fake.knobs.createFailures = [];
  }

  // A launch on both numbers: the one that failed waits, the other makes the group.
  const both = await api("POST", "/api/external/create-launch", { name: "Dois", id_channel: [a, b], group_template: template("Dois #{n}"), initial_groups: 1 });
  expect(both.status, both.text).toBe(201);
  expect((both.json.groups as { id_channel: string }[]).map((g) => g.id_channel)).toEqual([b]);
});
