/**
 * A launch's welcome with MESSAGING_PROVIDER=evolution against the fake gateway (CONTRACT §8 "Welcome";
 * docs/evolution.md#mentions): the gateway's `group-participants.update` webhooks make a batch, and the welcome goes
 * out as one `message/sendText` whose `mentioned` holds the newcomers' numbers (Evolution's schema: digits), with one
 * `@<number>` each in the text. A LID newcomer is mentioned by its id.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { WelcomeRunner } from "../../inngest/in-process/welcome-runner";
import type { Services } from "../../server/services";
import { startEvolutionService } from "../evolution-service";
import type { FakeEvolution } from "../fake-evolution";
import { newTenant, until, waitFor, type Api } from "../helpers";
import type { TestServer } from "../http-server";

let fake: FakeEvolution;
let server: TestServer;
let services: Services;
let runner: WelcomeRunner;
let api: Api;

beforeAll(async () => {
  ({ fake, server, services } = await startEvolutionService({ env: { EVOLUTION_TIMEOUT_MS: "5000", EVOLUTION_RECONCILE_AFTER_SECONDS: "1" } }));
  runner = new WelcomeRunner(services, { intervalMs: 200 }).start();
  api = await newTenant(server.url, { channelLimit: 10 });
});
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  await fake?.close();
});

it("three joins on the gateway are one sendText mentioning the three; welcomes_sent counts it", async () => {
  const ch = (await api("POST", "/api/external/create-channel", { name: "Evo boas-vindas" })).json.id_channel as string;
  await fake.pair(ch);
  await until(
    async () => (await api("PUT", `/api/external/edit-channel/${ch}`, { name: "Evo boas-vindas" })).json.status,
    (s) => s === "connected",
  );
  const res = await api("POST", "/api/external/create-launch", {
    name: "Turma Evo",
    id_channel: [ch],
    group_template: { name: "Turma Evo #{n}", admins_only: true, admins: ["5511900000001"] },
    welcome: { text: "Bem-vindos!", after_joins: 3, max_wait_minutes: 60 },
  });
  expect(res.status, res.text).toBe(201);
  const group = res.json.groups[0].id_group as string;
  await fake.groupJoin(ch, group, ["5511944440001", "5511944440002", "987654321012345@lid"]);
  const sent = await waitFor(
    "the welcome's sendText",
    () => {
      const r = fake.messages.filter((m) => m.number === group && m.endpoint === "sendText");
      return r.length > 0 && r;
    },
    30_000,
  );
  expect(sent).toHaveLength(1);
  expect(sent[0].body.mentioned).toEqual(["5511944440001", "5511944440002", "987654321012345@lid"]);
  expect(sent[0].body.text).toBe("Bem-vindos!\n\n@5511944440001 @5511944440002 @987654321012345");
  await until(
    async () => (await api("GET", `/api/external/info-launch/${res.json.id_launch}`)).json.totals.welcomes_sent,
    (n) => n === 1,
  );
});
