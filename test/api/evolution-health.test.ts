import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeEvolution } from "../fake-evolution";
import { newTenant, until, type Api } from "../helpers";
import type { TestServer } from "../http-server";
import { startEvolutionService } from "../evolution-service";

// docs/evolution.md#disconnect-reasons-and-number-health: connection.update's statusReason on Evolution (the codes it
// does not reconnect) → the number's health; a new pairing clears it; the channel's phone from the pairing's wuid.
let fake: FakeEvolution;
let server: TestServer;
let api: Api;

beforeAll(async () => {
  ({ fake, server } = await startEvolutionService());
  api = await newTenant(server.url, { channelLimit: 50 });
});
afterAll(async () => {
  await server.close();
  await fake.close();
});

const info = async (id: string) => (await api("GET", `/api/external/info-channel/${id}`)).json;

async function connectedChannel() {
  const { json } = await api("POST", "/api/external/create-channel", { name: "Evo" });
  await fake.pair(json.id_channel);
  await until(
    () => info(json.id_channel),
    (i) => i.status === "connected",
  );
  return json.id_channel as string;
}

describe("number health on Evolution API", () => {
  it("statusReason 403 → banned, 402 → restricted, 401 → logged_out, 406 → banned; a plain close keeps ok; pairing again clears it", async () => {
    const id = await connectedChannel();
    expect(await info(id)).toMatchObject({ status: "connected", phone: fake.instances.get(id)!.owner, health: { state: "ok" } });

    const closeWith = async (statusReason: number | undefined, state: string, reason: string | null) => {
      await fake.setState(id, "close", statusReason);
      const got = await until(
        () => info(id),
        (i) => i.status === "disconnected" && i.health.state === state,
      );
      expect(got.health.reason).toBe(reason);
      await fake.pair(id);
      await until(
        () => info(id),
        (i) => i.status === "connected" && i.health.state === "ok",
      );
    };
    await closeWith(403, "banned", "statusReason 403 (forbidden)");
    await closeWith(402, "restricted", "statusReason 402 (temporary ban)");
    await closeWith(401, "logged_out", "statusReason 401 (loggedOut)");
    await closeWith(406, "banned", "statusReason 406 (permanent ban)");
    // 408 (2.4.0-rc: a lost connection it does not reconnect) is no verdict on the number.
    await closeWith(408, "ok", null);
  });

  it("a session that never opened has no number to judge: its close (the pairing-code flow's own logout) keeps ok", async () => {
    const { json } = await api("POST", "/api/external/create-channel", { name: "Nova" });
    await fake.setState(json.id_channel, "close", 401);
    await fake.setState(json.id_channel, "connecting");
    expect(await info(json.id_channel)).toMatchObject({ status: "connecting", phone: null, health: { state: "ok" } });
  });
});
