/**
 * The launch funnel with MESSAGING_PROVIDER=evolution against the fake gateway (docs/launches.md,
 * docs/evolution.md#groups-for-launches): create-launch makes the group on the gateway and reads its
 * invite code; the join link redirects there; the gateway's `group-participants.update` webhooks (one
 * participant a LID) move the members; a full group makes the engine create the next one on the gateway.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { LaunchRunner } from "../../inngest/launch-runner";
import { newTenant, until, type Api } from "../helpers";
import type { FakeEvolution } from "../fake-evolution";
import type { TestServer } from "../http-server";
import { startEvolutionService } from "../evolution-service";

let fake: FakeEvolution;
let server: TestServer;
let runner: LaunchRunner;
let api: Api;

beforeAll(async () => {
  const started = await startEvolutionService({ env: { EVOLUTION_TIMEOUT_MS: "5000" } });
  ({ fake, server } = started);
  const services = started.services;
  runner = new LaunchRunner(services, { intervalMs: 60_000 }).start();
  api = await newTenant(server.url, { channelLimit: 10 });
});
afterAll(async () => {
  await runner.stop();
  await server.close();
  await fake.close();
});

async function connectedChannel() {
  const { json } = await api("POST", "/api/external/create-channel", { name: "Evo lançamento" });
  await fake.pair(json.id_channel);
  await until(
    async () => (await api("PUT", `/api/external/edit-channel/${json.id_channel}`, { name: "Evo lançamento" })).json.status,
    (s) => s === "connected",
  );
  return json.id_channel as string;
}

const info = async (id: string) => (await api("GET", `/api/external/info-launch/${id}`)).json;

it("a launch on Evolution: group made on the gateway, link to its invite code, joins with a LID counted, the next group made when full", async () => {
  const ch = await connectedChannel();
  const res = await api("POST", "/api/external/create-launch", {
    name: "Turma Evo",
    id_channel: [ch],
    group_template: { name: "Turma Evo #{n}", description: "Grupo oficial", admins_only: true, admins: ["5511900000001"] },
    capacity: 5,
    margin: 1,
    initial_groups: 1,
  });
  expect(res.status).toBe(201);
  const launch = res.json;
  const first = launch.groups[0];
  expect(first).toMatchObject({ position: 1, name: "Turma Evo #1" });
  const onGateway = fake.group(ch, first.id_group);
  expect(onGateway?.subject).toBe("Turma Evo #1");
  expect(first.invite_url).toMatch(/^https:\/\/chat\.whatsapp\.com\/\w+$/);

  // The join link sends people to the group's invite code on the gateway.
  const link = await fetch(`${server.url}/g/${launch.slug}`, { redirect: "manual" });
  expect(link.status).toBe(302);
  expect(link.headers.get("location")).toBe(first.invite_url);

  // People join through it: one arrives as a LID the gateway could not resolve (kept opaque), one as a number.
  const membersBefore = first.members as number;
  await fake.groupJoin(ch, first.id_group, ["987654321012345@lid", "5511944445555"]);
  const afterJoin = await until(
    () => info(launch.id_launch),
    (i) => i.totals.joins === 2,
  );
  expect(afterJoin.totals).toMatchObject({ joins: 2, unique_members: 2, members: membersBefore + 2 });
  const csv = await (await fetch(`${server.url}/api/external/launch-members/${launch.id_launch}?format=csv`, { headers: { "x-api-key": api.key } })).text();
  expect(csv).toContain("987654321012345@lid");
  expect(csv).toContain("5511944445555");

  // Fill group 1 (capacity 5 − margin 1): the engine makes group 2 on the gateway and the link moves there.
  const missing = 4 - (membersBefore + 2);
  if (missing > 0)
    await fake.groupJoin(
      ch,
      first.id_group,
      Array.from({ length: missing }, (_, i) => `55119777700${String(i).padStart(2, "0")}`),
    );
  const withSecond = await until(
    () => info(launch.id_launch),
    (i) => i.groups.length >= 2 && i.groups[1].invite_url,
    30_000,
  );
  expect(withSecond.groups[0].status).toBe("full");
  expect(withSecond.groups[1]).toMatchObject({ position: 2, name: "Turma Evo #2", status: "filling" });
  expect(fake.group(ch, withSecond.groups[1].id_group)?.subject).toBe("Turma Evo #2");
  const next = await until(
    async () => (await fetch(`${server.url}/g/${launch.slug}`, { redirect: "manual" })).headers.get("location"),
    (l) => l === withSecond.groups[1].invite_url,
    5_000,
  );
  expect(next).toBe(withSecond.groups[1].invite_url);
});
