/**
 * Moderation's exemptions and persons (docs/moderation.md#messages, #a-member-known-only-by-a-lid) with
 * MESSAGING_PROVIDER=evolution against the fake gateway as 2.3.7 posts it: a member promoted on a phone
 * (`group-participants.update` promote) is exempt at once, demoted (our group action: `updateParticipant` demote) judged
 * again; a member known only by a LID (`key.participant` a LID, no `participantAlt`) is struck under it and its message
 * deleted naming the LID; once a message carries the pairing the strikes are the person's, and the removal names the
 * member as the group lists them (by the LID).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeEvolution } from "../fake-evolution";
import { restPollMs, until } from "../helpers";
import type { TestServer } from "../http-server";
import { evolutionLaunch, evolutionWithGroupActions } from "../launches/fixtures";

let fake: FakeEvolution;
let server: TestServer;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ fake, server, stop } = await evolutionWithGroupActions());
});
afterAll(() => stop?.());

type Launch = Awaited<ReturnType<typeof evolutionLaunch>>;
/** Oldest first: [participant, action]. Judged inside the webhook's answer: read right after a post, it is there. */
const events = async (l: Launch) => {
  const res = await l.api("GET", `/api/external/list-moderation-events/${l.id}`);
  expect(res.status, res.text).toBe(200);
  return (res.json.events as { participant: string; action: string }[]).map((e) => [e.participant, e.action]).reverse();
};

describe("moderation on Evolution: admins and LIDs", () => {
  it("promoted on a phone: exempt at once; demoted by our group action: judged again", async () => {
    const l = await evolutionLaunch(server.url, fake, { groups: 1 });
    const [g1] = l.groups;
    const edit = await l.api("PUT", `/api/external/edit-launch/${l.id}`, { moderation: { mode: "enforce", strikes_to_remove: 10 } });
    expect(edit.status, edit.text).toBe(200);
    const member = "5511944446001";
    await fake.groupJoin(l.channel, g1, [member]);

    await fake.groupPost(l.channel, g1, member, "https://renda-extra.xyz/1");
    expect(await events(l)).toEqual([[member, "deleted"]]);
    await fake.groupAdmin(l.channel, g1, [member], "promote");
    await fake.groupPost(l.channel, g1, member, "https://renda-extra.xyz/2");
    expect(await events(l)).toHaveLength(1);

    const res = await l.api("POST", "/api/external/create-group-action", { id_launch: l.id, action: { type: "demote", participants: [member] } });
    expect(res.status, res.text).toBe(200);
    await until(
      () => l.api("GET", `/api/external/info-group-action/${res.json.id_action}`),
      (r) => r.json.status === "completed",
      60_000,
      restPollMs,
    );
    expect(fake.participantUpdates.filter((u) => u.action === "demote")).toHaveLength(1);
    await fake.groupPost(l.channel, g1, member, "https://renda-extra.xyz/3");
    expect(await events(l)).toEqual([
      [member, "deleted"],
      [member, "deleted"],
    ]);
  }, 180_000);

  it("a LID alone is struck and deleted under the LID; paired later, one count, removed by the LID the group lists", async () => {
    const l = await evolutionLaunch(server.url, fake, { groups: 1 });
    const [g1] = l.groups;
    const edit = await l.api("PUT", `/api/external/edit-launch/${l.id}`, { moderation: { mode: "enforce", strikes_to_remove: 2 } });
    expect(edit.status, edit.text).toBe(200);
    const [lid, phone] = ["203948571236001@lid", "5511944446002"];
    // Joined by the LID alone: the group lists them by it, with no number.
    await fake.groupJoin(l.channel, g1, [lid], { listOnly: true });

    const first = await fake.groupPost(l.channel, g1, lid, "https://renda-extra.xyz/a");
    expect(await events(l)).toEqual([[lid, "deleted"]]);
    // The next message carries the number (participantAlt): one person, the second strike removes them.
    await fake.groupPost(l.channel, g1, phone, "https://renda-extra.xyz/b", { lid });
    expect(await events(l)).toEqual([
      [lid, "deleted"],
      [phone, "deleted"],
      [phone, "removed"],
    ]);
    const removals = await until(
      async () => fake.participantUpdates.filter((u) => u.action === "remove" && u.group === g1),
      (r) => r.length >= 1,
      60_000,
    );
    expect(removals).toEqual([{ instance: l.channel, group: g1, action: "remove", participants: [lid] }]);
    await until(
      async () => fake.groupPosts.filter((p) => p.groupJid === g1 && p.deleted).length,
      (n) => n >= 2,
      60_000,
    );
    expect(fake.deleteRequests.find((d) => d.body.id === first)?.body).toMatchObject({ remoteJid: g1, participant: lid });
  }, 180_000);
});
