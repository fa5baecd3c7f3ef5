/**
 * Moderation's exemptions and persons (docs/moderation.md#messages, #a-member-known-only-by-a-lid) on the simulator:
 * a member promoted (the simulator's control, as an admin on a phone; or our own group action) is exempt from the next
 * message on, and judged again once demoted; a member known only by a LID is struck under it, and once the LID ⇄ phone
 * pairing is learned the strikes are the person's (one count), a later LID-only message counts under the number, and
 * the removal names the member as the group lists them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, restPollMs, until } from "../helpers";
import type { TestServer } from "../http-server";
import { groupParticipants, joinGroup, launchWithGroups, serverWithGroupActions } from "../launches/fixtures";

let server: TestServer;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ server, stop } = await serverWithGroupActions());
});
afterAll(() => stop?.());

const enc = encodeURIComponent;
type Event = { participant: string; action: string };
/** Oldest first: [participant, action]. Moderation judges inside the post's control call: read right after, it is there. */
const events = async (api: Api, id: string) => {
  const res = await api("GET", `/api/external/list-moderation-events/${id}`);
  expect(res.status, res.text).toBe(200);
  return (res.json.events as Event[]).map((e) => [e.participant, e.action]).reverse();
};
const post = async (api: Api, group: string, from: string, text: string, phone?: string) => {
  const res = await api("POST", `/api/simulator/groups/${enc(group)}/messages`, { from, text, ...(phone ? { phone } : {}) });
  expect(res.status, res.text).toBe(200);
};
const groupAction = async (api: Api, launchId: string, action: Record<string, unknown>) => {
  const res = await api("POST", "/api/external/create-group-action", { id_launch: launchId, action });
  expect(res.status, res.text).toBe(200);
  const done = await until(
    () => api("GET", `/api/external/info-group-action/${res.json.id_action}`),
    (r) => r.json.status === "completed",
    60_000,
    restPollMs,
  );
  expect(done.json.groups.done, done.text).toBe(1);
};

describe("moderation: admins promoted and demoted", () => {
  it("a member promoted (control or group action) is exempt at once; demoted, judged again", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const [g1] = l.groups;
    const edit = await l.api("PUT", `/api/external/edit-launch/${l.id}`, { moderation: { mode: "enforce", strikes_to_remove: 10 } });
    expect(edit.status, edit.text).toBe(200);
    const [member, other] = ["5511987651001", "5511987651002"];
    await joinGroup(l.api, g1, [member, other]);

    // Judged: the group's admins are read (and remembered) now.
    await post(l.api, g1, member, "https://renda-extra.xyz/1");
    expect(await events(l.api, l.id)).toEqual([[member, "deleted"]]);

    // An admin on a phone promotes them (the platform's event): their next link is not judged.
    const promoted = await l.api("POST", `/api/simulator/groups/${enc(g1)}/participants`, { promote: [member] });
    expect(promoted.json.promoted, promoted.text).toEqual([member]);
    await post(l.api, g1, member, "https://renda-extra.xyz/2");
    expect(await events(l.api, l.id)).toHaveLength(1);

    // Our own group action demotes them: judged again.
    await groupAction(l.api, l.id, { type: "demote", participants: [member] });
    await post(l.api, g1, member, "https://renda-extra.xyz/3");
    expect(await events(l.api, l.id)).toEqual([
      [member, "deleted"],
      [member, "deleted"],
    ]);

    // Our group action promotes the other member: exempt; the demoted one still is not.
    await post(l.api, g1, other, "https://renda-extra.xyz/4");
    await groupAction(l.api, l.id, { type: "promote", participants: [other] });
    await post(l.api, g1, other, "https://renda-extra.xyz/5");
    await post(l.api, g1, member, "https://renda-extra.xyz/6");
    expect(await events(l.api, l.id)).toEqual([
      [member, "deleted"],
      [member, "deleted"],
      [other, "deleted"],
      [member, "deleted"],
    ]);
  }, 180_000);
});

describe("moderation: a member known only by a LID", () => {
  it("struck under the LID; once paired, one count under the number (a LID-only message too), and removed as the group lists them", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const [g1] = l.groups;
    const edit = await l.api("PUT", `/api/external/edit-launch/${l.id}`, { moderation: { mode: "enforce", strikes_to_remove: 3 } });
    expect(edit.status, edit.text).toBe(200);
    const [lid, phone] = ["203948571230001@lid", "5511987652001"];
    await joinGroup(l.api, g1, [lid]);

    await post(l.api, g1, lid, "https://renda-extra.xyz/a");
    expect(await events(l.api, l.id)).toEqual([[lid, "deleted"]]);
    // The message carries the number beside the LID: the pairing is learned, the LID's strike becomes the number's.
    await post(l.api, g1, lid, "https://renda-extra.xyz/b", phone);
    // A LID alone again: counted under the number (the third strike), and the member removed.
    await post(l.api, g1, lid, "https://renda-extra.xyz/c");
    expect(await events(l.api, l.id)).toEqual([
      [lid, "deleted"],
      [phone, "deleted"],
      [phone, "deleted"],
      [phone, "removed"],
    ]);
    const members = await until(
      () => groupParticipants(l.api, g1),
      (m) => !m.includes(lid),
      60_000,
      restPollMs,
    );
    expect(members).not.toContain(lid);

    // Undo by the LID the first event shows clears the person's strikes: back in, one more offence is a strike only.
    const undo = await l.api("POST", `/api/external/undo-moderation/${l.id}`, { id_group: g1, participant: lid });
    expect(undo.status, undo.text).toBe(200);
    await joinGroup(l.api, g1, [lid]);
    await post(l.api, g1, lid, "https://renda-extra.xyz/d");
    expect((await events(l.api, l.id)).slice(4)).toEqual([[phone, "deleted"]]);
  }, 180_000);

  it("strikes under the LID and under the number add up when paired, one short of removal at most: the next offence removes both ids", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const [g1] = l.groups;
    const edit = await l.api("PUT", `/api/external/edit-launch/${l.id}`, { moderation: { mode: "enforce", strikes_to_remove: 3 } });
    expect(edit.status, edit.text).toBe(200);
    // One person the platform showed by both ids before anything paired them.
    const [lid, phone] = ["203948571230002@lid", "5511987652002"];
    await joinGroup(l.api, g1, [lid, phone]);
    await post(l.api, g1, phone, "https://renda-extra.xyz/p1");
    for (const n of [1, 2]) await post(l.api, g1, lid, `https://renda-extra.xyz/l${n}`);
    expect(await events(l.api, l.id)).toEqual([
      [phone, "deleted"],
      [lid, "deleted"],
      [lid, "deleted"],
    ]);
    // Paired: 1 + 2 would reach 3 without an offence doing it; it stops at 2, and this offence is the third.
    await post(l.api, g1, lid, "https://renda-extra.xyz/l3", phone);
    expect((await events(l.api, l.id)).slice(3)).toEqual([
      [phone, "deleted"],
      [phone, "removed"],
    ]);
    // Both ids the group lists go.
    const members = await until(
      () => groupParticipants(l.api, g1),
      (m) => !m.includes(lid) && !m.includes(phone),
      60_000,
      restPollMs,
    );
    expect(members.filter((m) => m === lid || m === phone)).toEqual([]);
  }, 180_000);
});
