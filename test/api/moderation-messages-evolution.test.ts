/**
 * Moderation of members' messages (CONTRACT §9; docs/moderation.md#messages) with MESSAGING_PROVIDER=evolution against
 * the fake gateway, which posts group messages as Evolution 2.3.7 does (`messages.upsert`, `key.participant` the member's
 * LID and `key.participantAlt` their phone JID) and answers `DELETE /chat/deleteMessageForEveryone` 201 with the revoke
 * and `group/updateParticipant` remove with WhatsApp's status per participant (docs/evolution.md#moderation-messages-in-groups):
 * an allowed domain passes, a link is deleted naming the sender's LID, the second offence removes them, and the same
 * message delivered again is judged once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GroupActionRunner } from "../../inngest/in-process/group-action-runner";
import { startEvolutionService } from "../evolution-service";
import type { FakeEvolution } from "../fake-evolution";
import { until } from "../helpers";
import type { TestServer } from "../http-server";
import { evolutionLaunch } from "../launches/fixtures";

let fake: FakeEvolution;
let server: TestServer;
let runner: GroupActionRunner;

beforeAll(async () => {
  process.env.GROUP_ACTION_GAP_MS = "50";
  const started = await startEvolutionService({ env: { EVOLUTION_TIMEOUT_MS: "5000" } });
  ({ fake, server } = started);
  runner = new GroupActionRunner(started.services, { intervalMs: 200 }).start();
});
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  await fake?.close();
  delete process.env.GROUP_ACTION_GAP_MS;
});

describe("moderation of members' messages on Evolution", () => {
  it("enforce: a link is deleted through deleteMessageForEveryone, the second offence removes through updateParticipant; a redelivery is judged once", async () => {
    const l = await evolutionLaunch(server.url, fake, { groups: 1 });
    const [g1] = l.groups;
    const edit = await l.api("PUT", `/api/external/edit-launch/${l.id}`, {
      moderation: { mode: "enforce", allowed_domains: ["exemplo.com.br"], strikes_to_remove: 2 },
    });
    expect(edit.status, edit.text).toBe(200);
    const member = "5511944445555";
    const lid = "203948571234567@lid";
    await fake.groupJoin(l.channel, g1, [member]);

    await fake.groupPost(l.channel, g1, member, "aula: https://www.exemplo.com.br/aula", { lid });
    const spam = await fake.groupPost(l.channel, g1, member, "Renda extra: https://renda-extra.xyz", { lid });
    // Evolution sends the same message again (e.g. after a lost answer): nothing is decided twice.
    await fake.groupPost(l.channel, g1, member, "Renda extra: https://renda-extra.xyz", { lid, id: spam });
    await until(
      async () => fake.groupPosts.filter((p) => p.deleted).map((p) => p.id),
      (d) => d.length >= 1,
      60_000,
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect(fake.deleteRequests).toEqual([{ instance: l.channel, body: { id: spam, fromMe: false, remoteJid: g1, participant: lid } }]);
    const list = async () => (await l.api("GET", `/api/external/list-moderation-events/${l.id}`)).json.events as { participant: string; action: string }[];
    expect((await list()).map((e) => [e.participant, e.action])).toEqual([[member, "deleted"]]);

    await fake.groupPost(l.channel, g1, member, "entra aqui chat.whatsapp.com/XyZ987", { lid });
    await until(
      async () => fake.participantUpdates.filter((u) => u.action === "remove"),
      (r) => r.length >= 1,
      60_000,
    );
    expect(fake.participantUpdates.filter((u) => u.action === "remove")).toEqual([
      { instance: l.channel, group: g1, action: "remove", participants: [member] },
    ]);
    await until(
      async () => fake.groupPosts.filter((p) => p.deleted).length,
      (n) => n >= 2,
      60_000,
    );
    expect((await list()).map((e) => e.action)).toEqual(["removed", "deleted", "deleted"]);
    expect(fake.deleteRequests).toHaveLength(2);
  }, 180_000);
});
