import { asc, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outboxEvents } from "../../db/schema";
import type { EvolutionProvider } from "../../server/messaging/evolution";
import type { Services } from "../../server/services";
import type { FakeEvolution } from "../fake-evolution";
import { newTenant, until, type Api } from "../helpers";
import type { TestServer } from "../http-server";
import { startEvolutionService } from "../evolution-service";

// docs/evolution.md#disconnect-reasons-and-number-health: connection.update's statusReason on Evolution (the codes it
// does not reconnect) → the number's health; a new pairing clears it; the channel's phone from the pairing's wuid.
let fake: FakeEvolution;
let server: TestServer;
let api: Api;
let services: Services;

beforeAll(async () => {
  ({ fake, server, services } = await startEvolutionService());
  api = await newTenant(server.url, { channelLimit: 50 });
});
afterAll(async () => {
  await server.close();
  await fake.close();
});

/** The channel's `channel_status` webhook events so far: status and health state, oldest first. */
async function statusEvents(channelId: string) {
  const rows = await services.db
    .select({ payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(sql`${outboxEvents.type} = 'channel_status' and ${outboxEvents.payload} -> 'data' ->> 'id_channel' = ${channelId}`)
    .orderBy(asc(outboxEvents.id));
  return rows.map((r) => {
    const data = (r.payload as { data: { status: string; health: { state: string } } }).data;
    return `${data.status}/${data.health.state}`;
  });
}

const poll = () => (services.provider as EvolutionProvider).pollStates();

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
  it("statusReason 403 → banned, 402 → restricted, 401 → logged_out, 406 → banned; pairing again clears it", async () => {
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
  });

  it("408 on 2.3.7 is a silent reconnect (no verdict on the number); on 2.4 a logout: logged_out, in one channel_status", async () => {
    // 2.3.7: Evolution reconnects (codesToNotReconnect lacks 408): `connecting`, then `open` again; nothing changes.
    const old = await connectedChannel();
    const before = await statusEvents(old);
    await fake.setState(old, "close", 408);
    expect(fake.instances.get(old)!.state).toBe("connecting");
    expect(await info(old)).toMatchObject({ status: "connected", health: { state: "ok" } });
    await fake.pair(old);
    expect(await info(old)).toMatchObject({ status: "connected", health: { state: "ok" } });
    expect(await statusEvents(old)).toEqual(before);

    // The operator upgrades to 2.4 (activated); the gateway restarts and the instance opens again.
    const id = await connectedChannel();
    fake.upgrade("2.4.0-rc2");
    fake.activate();
    try {
      await fake.pair(id);
      const events = await statusEvents(id);
      // 2.4.0-rc2 does not reconnect 408: logout.instance (its handler deletes the session), then close 408.
      await fake.setState(id, "close", 408);
      const got = await until(
        () => info(id),
        (i) => i.status === "disconnected" && i.health.state === "logged_out",
      );
      expect(got.health.reason).toBe("statusReason 408 (timed out; Evolution 2.4 ends the session)");
      await poll();
      expect(await statusEvents(id)).toEqual([...events, "disconnected/logged_out"]);
      // Paired again: the state clears.
      await fake.pair(id);
      await until(
        () => info(id),
        (i) => i.status === "connected" && i.health.state === "ok",
      );
    } finally {
      fake.upgrade("2.3.7");
    }
  });

  it("a session that never opened has no number to judge: its close (the pairing-code flow's own logout) keeps ok", async () => {
    const { json } = await api("POST", "/api/external/create-channel", { name: "Nova" });
    await fake.setState(json.id_channel, "close", 401);
    await fake.setState(json.id_channel, "connecting");
    expect(await info(json.id_channel)).toMatchObject({ status: "connecting", phone: null, health: { state: "ok" } });
  });
});

// docs/evolution.md#missed-webhooks-the-state-poll: a close the gateway did not reconnect, whose webhooks were lost,
// is found by the next state poll (connectionState says `close`; the instance's stored row keeps its
// disconnectionReasonCode), applied as the webhook would be.
describe("the state poll on Evolution API", () => {
  it.each([
    [403, "banned", "statusReason 403 (forbidden)"],
    [401, "logged_out", "statusReason 401 (loggedOut)"],
  ])(
    "a %i whose webhooks were lost: one poll makes the channel offline, %s with the reason, one channel_status; the late webhooks change nothing",
    async (code, state, reason) => {
      const id = await connectedChannel();
      const before = await statusEvents(id);
      fake.holdWebhooks(id);
      await fake.setState(id, "close", code);
      expect(await info(id)).toMatchObject({ status: "connected", health: { state: "ok" } });

      await poll();
      expect(await info(id)).toMatchObject({ status: "disconnected", health: { state, reason } });
      expect(await statusEvents(id)).toEqual([...before, `disconnected/${state}`]);

      // logout.instance and connection.update {close, statusReason} arrive after all, then the next poll: nothing more.
      await fake.releaseWebhooks(id);
      await poll();
      expect(await info(id)).toMatchObject({ status: "disconnected", health: { state, reason } });
      expect(await statusEvents(id)).toEqual([...before, `disconnected/${state}`]);
    },
  );

  it("the webhook first, then the poll: one channel_status", async () => {
    const id = await connectedChannel();
    const before = await statusEvents(id);
    await fake.setState(id, "close", 403);
    await until(
      () => info(id),
      (i) => i.health.state === "banned",
    );
    await poll();
    await poll();
    expect(await statusEvents(id)).toEqual([...before, "disconnected/banned"]);
  });

  it("a pass reads each channel's connectionState (the gateway's memory), never fetchInstances (which counts every instance's messages, contacts and chats): connected healthy numbers stay untouched", async () => {
    const ids = [await connectedChannel(), await connectedChannel(), await connectedChannel()];
    const events = await Promise.all(ids.map(statusEvents));
    const lists = fake.counters.fetchInstances;
    const states = fake.counters.connectionStates;
    const polled = await poll();
    expect(polled).toBeGreaterThanOrEqual(ids.length);
    expect(fake.counters.fetchInstances - lists).toBe(0);
    expect(fake.counters.connectionStates - states).toBe(polled);
    for (const [i, id] of ids.entries()) {
      expect(await info(id)).toMatchObject({ status: "connected", health: { state: "ok" } });
      expect(await statusEvents(id)).toEqual(events[i]);
    }
  });
});
