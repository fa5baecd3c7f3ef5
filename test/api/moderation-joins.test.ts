/**
 * Moderation at join and the account's blocklist (CONTRACT §9; docs/moderation.md), through the REST facade, the
 * simulator's control endpoints and the group-action engine's in-process runner: in `enforce`, a number on the
 * blocklist (added with the ninth digit, joining without it) and a number outside `country_codes` are removed as they
 * join (events `removed`), staff are exempt; in `shadow` the same joins are `would_remove` and nobody is removed;
 * list-blocklist / edit-blocklist with their limits; list-moderation-events pages.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, expectEnvelope, until } from "../helpers";
import type { TestServer } from "../http-server";
import { groupParticipants, joinGroup, launchWithGroups, serverWithGroupActions } from "../launches/fixtures";

let server: TestServer;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ server, stop } = await serverWithGroupActions());
});
afterAll(() => stop?.());

const enc = encodeURIComponent;
const join = joinGroup;
const listed = groupParticipants;
const events = async (api: Api, id: string) => {
  const res = await api("GET", `/api/external/list-moderation-events/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.json as { events: { id_group: string; participant: string; rule: string; action: string; excerpt: string }[]; next_cursor: string | null };
};

describe("moderation at join", () => {
  it("enforce: a blocklisted number and one outside country_codes are removed as they join; staff and others stay", async () => {
    const staff = "14155550199";
    const l = await launchWithGroups(server.url, { groups: 1, staff: [staff] });
    const [g1] = l.groups;
    const edit = await l.api("PUT", `/api/external/edit-launch/${l.id}`, { moderation: { mode: "enforce", country_codes: ["55"] } });
    expect(edit.status, edit.text).toBe(200);
    expect(edit.json.moderation).toMatchObject({ mode: "enforce", country_codes: ["55"], block_links: true, strikes_to_remove: 3 });
    const block = await l.api("PUT", "/api/external/edit-blocklist", { add: ["5531987650009"] });
    expect(block.json).toMatchObject({ success: true, added: 1, removed: 0, total: 1 });

    await join(l.api, g1, ["553187650009", "14155550100", staff, "5511987650001"]);
    const got = await until(
      () => events(l.api, l.id),
      (r) => r.events.length >= 2,
      60_000,
    );
    expect(got.events.map((e) => [e.participant, e.rule, e.action]).sort()).toEqual(
      [
        ["14155550100", "country_code", "removed"],
        ["553187650009", "blocklist", "removed"],
      ].sort(),
    );
    expect(got.next_cursor).toBeNull();
    const members = await until(
      () => listed(l.api, g1),
      (m) => !m.includes("553187650009") && !m.includes("14155550100"),
      60_000,
    );
    expect(members).toEqual(expect.arrayContaining([staff, "5511987650001"]));
  }, 180_000);

  it("shadow: the same joins are would_remove and nobody is removed; off judges nothing", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const [g1] = l.groups;
    expect((await l.api("PUT", "/api/external/edit-blocklist", { add: ["5521987650008"] })).status).toBe(200);
    await join(l.api, g1, ["5521987650008"]);
    expect((await events(l.api, l.id)).events).toEqual([]);
    expect((await l.api("PUT", `/api/external/edit-launch/${l.id}`, { moderation: { mode: "shadow", country_codes: ["55"] } })).status).toBe(200);
    await join(l.api, g1, ["5521987650007", "447700900123"]);
    await l.api("POST", `/api/simulator/groups/${enc(g1)}/participants`, { leave: ["5521987650008"] });
    await join(l.api, g1, ["5521987650008"]);
    const got = await until(
      () => events(l.api, l.id),
      (r) => r.events.length >= 2,
      30_000,
    );
    expect(got.events.map((e) => [e.participant, e.rule, e.action]).sort()).toEqual(
      [
        ["447700900123", "country_code", "would_remove"],
        ["5521987650008", "blocklist", "would_remove"],
      ].sort(),
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect(await listed(l.api, g1)).toEqual(expect.arrayContaining(["5521987650008", "447700900123", "5521987650007"]));
    expect((await l.api("GET", `/api/external/list-group-actions?id_launch=${l.id}`)).json.actions).toEqual([]);
  }, 180_000);

  it("list-blocklist and edit-blocklist: one entry per person (ninth digit or not), removals, limits", async () => {
    const { api, id } = await launchWithGroups(server.url, { groups: 1 });
    expect((await api("GET", "/api/external/list-blocklist")).json).toEqual({ success: true, numbers: [], total: 0 });
    const r1 = await api("PUT", "/api/external/edit-blocklist", { add: ["5531987654321", "553187654321", "447700900123"] });
    expect(r1.json).toMatchObject({ added: 2, total: 2 });
    const r2 = await api("PUT", "/api/external/edit-blocklist", { remove: ["5531987654321", "5511900000000"] });
    expect(r2.json).toMatchObject({ added: 0, removed: 1, total: 1 });
    expect((await api("GET", "/api/external/list-blocklist")).json.numbers.map((n: { phone: string }) => n.phone)).toEqual(["447700900123"]);
    const many = Array.from({ length: 1001 }, (_, i) => `55119${String(10_000_000 + i)}`);
    expectEnvelope(await api("PUT", "/api/external/edit-blocklist", { add: many }), 400, "Bad Request");
    expectEnvelope(await api("PUT", "/api/external/edit-blocklist", { add: ["abc"] }), 400, "Bad Request");
    expectEnvelope(await api("PUT", `/api/external/edit-launch/${id}`, { moderation: { mode: "loud" } }), 400, "Bad Request");
  }, 180_000);
});
