/**
 * Moderation of members' messages (CONTRACT §9; docs/moderation.md#messages) through the REST facade, the simulator's
 * control endpoints (a member posts; the group's messages with `deleted`) and the group-action engine's in-process
 * runner: in `enforce` a link is deleted for everyone with a strike, an allowed domain passes, the second offence with
 * strikes_to_remove 2 removes the member, and undo clears their strikes; banned words (whole word, accents, case) and
 * floods; staff exempt; `shadow` records would_delete / would_remove and touches nothing; a redelivered message is judged
 * once; the `moderation` webhook event batches a group's decisions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { reportModeration } from "../../server/moderation/report-moderation";
import { type Api, until } from "../helpers";
import type { TestServer } from "../http-server";
import { groupActivity, groupParticipants, joinGroup, launchWithGroups, serverWithGroupActions } from "../launches/fixtures";

let server: TestServer;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ server, stop } = await serverWithGroupActions());
});
afterAll(() => stop?.());

const enc = encodeURIComponent;
type Event = { id_group: string; participant: string; rule: string; action: string; excerpt: string };
const events = async (api: Api, id: string) => {
  const res = await api("GET", `/api/external/list-moderation-events/${id}`);
  expect(res.status, res.text).toBe(200);
  return (res.json.events as Event[]).slice().reverse();
};
const post = async (api: Api, group: string, from: string, text: string, idMessage?: string) => {
  const res = await api("POST", `/api/simulator/groups/${enc(group)}/messages`, { from, text, ...(idMessage ? { id_message: idMessage } : {}) });
  expect(res.status, res.text).toBe(200);
  return res.json.id_message as string;
};
const posts = async (api: Api, group: string) => {
  const res = await api("GET", `/api/simulator/groups/${enc(group)}/messages`);
  expect(res.status, res.text).toBe(200);
  return res.json.messages as { id_message: string; from: string; text: string; deleted: boolean }[];
};
const deleted = async (api: Api, group: string) => (await posts(api, group)).filter((p) => p.deleted).map((p) => p.text);
const brief = (e: Event[]) => e.map((x) => [x.participant, x.rule, x.action, x.excerpt]);

describe("moderation of members' messages (simulator)", () => {
  it("enforce: a link is deleted with a strike, an allowed domain passes, the second offence removes; undo clears the strikes", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const [g1] = l.groups;
    const edit = await l.api("PUT", `/api/external/edit-launch/${l.id}`, {
      moderation: { mode: "enforce", allowed_domains: ["exemplo.com.br"], strikes_to_remove: 2 },
    });
    expect(edit.status, edit.text).toBe(200);
    const spammer = "5511987650001";
    await joinGroup(l.api, g1, [spammer, "5511987650002"]);

    await post(l.api, g1, spammer, "Veja a aula em https://aulas.exemplo.com.br/1");
    await post(l.api, g1, "5511987650002", "Bom dia, pessoal");
    await post(l.api, g1, spammer, "Renda extra aqui: https://renda-extra.xyz/ganhe");
    await until(
      () => deleted(l.api, g1),
      (d) => d.length >= 1,
      60_000,
    );
    expect(await deleted(l.api, g1)).toEqual(["Renda extra aqui: https://renda-extra.xyz/ganhe"]);
    expect(brief(await events(l.api, l.id))).toEqual([[spammer, "link", "deleted", "Renda extra aqui: https://renda-extra.xyz/ganhe"]]);
    expect(await groupParticipants(l.api, g1)).toContain(spammer);

    // The second offence (an invite to another group is a link) deletes and removes.
    await post(l.api, g1, spammer, "Entrem no meu grupo chat.whatsapp.com/AbCdEf123");
    await until(
      () => groupParticipants(l.api, g1),
      (m) => !m.includes(spammer),
      60_000,
    );
    await until(
      () => deleted(l.api, g1),
      (d) => d.length >= 2,
      60_000,
    );
    expect(brief(await events(l.api, l.id)).slice(1)).toEqual([
      [spammer, "link", "deleted", "Entrem no meu grupo chat.whatsapp.com/AbCdEf123"],
      [spammer, "link", "removed", "Entrem no meu grupo chat.whatsapp.com/AbCdEf123"],
    ]);
    const actions = (await l.api("GET", `/api/external/list-group-actions?id_launch=${l.id}`)).json.actions as { action: { type: string } }[];
    expect(actions.map((a) => a.action.type).sort()).toEqual(["delete_message", "delete_message", "remove"]);

    // Undo: strikes cleared and the invite link answered; back in the group, one more offence is a strike, not a removal.
    const undo = await l.api("POST", `/api/external/undo-moderation/${l.id}`, { id_group: g1, participant: spammer });
    expect(undo.json).toEqual({ success: true, invite_link: `https://chat.whatsapp.com/code1${l.slug}` });
    expect(await groupParticipants(l.api, g1)).not.toContain(spammer);
    await joinGroup(l.api, g1, [spammer]);
    await post(l.api, g1, spammer, "de novo https://renda-extra.xyz");
    await until(
      () => deleted(l.api, g1),
      (d) => d.length >= 3,
      60_000,
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect(await groupParticipants(l.api, g1)).toContain(spammer);
    expect((await events(l.api, l.id)).map((e) => e.action)).toEqual(["deleted", "deleted", "removed", "deleted"]);

    // The decisions go out batched: one `moderation` event for the group.
    const db = await getDb();
    await reportModeration(db, new Date());
    const reported = (await groupActivity(l.api.tenantId)).filter((e) => e.event === "moderation");
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ id_launch: l.id, id_group: g1 });
    expect(reported[0].decisions.map((d: Event) => d.action)).toEqual(["deleted", "deleted", "removed", "deleted"]);
    await reportModeration(db, new Date());
    expect((await groupActivity(l.api.tenantId)).filter((e) => e.event === "moderation")).toHaveLength(1);
  }, 240_000);

  it("banned words (whole word, any case or accent) and floods; staff and the channel's number are exempt; a redelivery is judged once", async () => {
    const staff = "5511987650099";
    const l = await launchWithGroups(server.url, { groups: 1, staff: [staff] });
    const [g1] = l.groups;
    const edit = await l.api("PUT", `/api/external/edit-launch/${l.id}`, {
      moderation: { mode: "enforce", block_links: true, banned_words: ["grátis", "renda extra"], max_messages_per_minute: 3, strikes_to_remove: 10 },
    });
    expect(edit.status, edit.text).toBe(200);
    const [a, b] = ["5511987650011", "5511987650012"];
    await joinGroup(l.api, g1, [a, b, staff]);

    await post(l.api, g1, a, "Curso GRATIS hoje");
    await post(l.api, g1, a, "gratisfeito não conta");
    await post(l.api, g1, a, "quem quer Renda Extra?");
    const id = await post(l.api, g1, staff, "grátis para a equipe https://outro.site.com");
    // The platform delivers the staff message again, and a member's once more: each judged once.
    await post(l.api, g1, staff, "", id);
    for (let i = 1; i <= 4; i++) await post(l.api, g1, b, `mensagem ${i}`);
    const again = await post(l.api, g1, b, "mensagem 5");
    await post(l.api, g1, b, "ignored: a redelivery carries the first text", again);

    await until(
      () => deleted(l.api, g1),
      (d) => d.length >= 4,
      60_000,
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect((await deleted(l.api, g1)).sort()).toEqual(["Curso GRATIS hoje", "mensagem 4", "mensagem 5", "quem quer Renda Extra?"].sort());
    expect(brief(await events(l.api, l.id))).toEqual([
      [a, "banned_word", "deleted", "Curso GRATIS hoje"],
      [a, "banned_word", "deleted", "quem quer Renda Extra?"],
      [b, "flood", "deleted", "mensagem 4"],
      [b, "flood", "deleted", "mensagem 5"],
    ]);
    expect(await groupParticipants(l.api, g1)).toEqual(expect.arrayContaining([a, b, staff]));
  }, 240_000);

  it("shadow: would_delete and would_remove are recorded, nothing is deleted or removed; off reads nothing", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const [g1] = l.groups;
    const member = "5511987650021";
    await joinGroup(l.api, g1, [member]);
    await post(l.api, g1, member, "antes: https://spam.com");
    expect(await events(l.api, l.id)).toEqual([]);
    expect((await l.api("PUT", `/api/external/edit-launch/${l.id}`, { moderation: { mode: "shadow", strikes_to_remove: 1 } })).status).toBe(200);
    const id = await post(l.api, g1, member, "https://spam.com/oferta");
    await post(l.api, g1, member, "", id);
    const got = await until(
      () => events(l.api, l.id),
      (e) => e.length >= 2,
      30_000,
    );
    expect(brief(got)).toEqual([
      [member, "link", "would_delete", "https://spam.com/oferta"],
      [member, "link", "would_remove", "https://spam.com/oferta"],
    ]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await deleted(l.api, g1)).toEqual([]);
    expect(await groupParticipants(l.api, g1)).toContain(member);
    expect((await l.api("GET", `/api/external/list-group-actions?id_launch=${l.id}`)).json.actions).toEqual([]);
    expect(await events(l.api, l.id)).toHaveLength(2);
  }, 180_000);

  it("the simulator's controls: only members post; another account's group is 404", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const other = await launchWithGroups(server.url, { groups: 1 });
    const res = await l.api("POST", `/api/simulator/groups/${enc(l.groups[0])}/messages`, { from: "5511900000000", text: "oi" });
    expect(res.status).toBe(400);
    expect((await other.api("GET", `/api/simulator/groups/${enc(l.groups[0])}/messages`)).status).toBe(404);
  }, 60_000);
});
