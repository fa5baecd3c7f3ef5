/**
 * Buyers leave the lead groups (CONTRACT §9; docs/launches.md#buyers-leave-the-groups), through the REST facade, the
 * marketplaces' inbound webhook, the simulator's control endpoints and the group-action engine's in-process runner: a
 * buyer who joined with the 8-digit form and bought with the 9-digit form is removed from each group once (a
 * `buyer_removed` event each, buyers_removed), a repeated notice removes nothing more and a refund re-adds nobody; a
 * staff member who buys stays; dry_run removes nothing and buyers_in_groups / launch-buyers-in-groups show who would
 * be, until remove-buyers (the dashboard's "Remover agora") removes them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, until } from "../helpers";
import type { TestServer } from "../http-server";
import { groupActivity, groupParticipants, joinGroup, launchWithGroups, serverWithGroupActions } from "../launches/fixtures";
import { hotmartBody, hotmartHook, postHotmartTo } from "../launches/purchases";

let server: TestServer;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ server, stop } = await serverWithGroupActions());
});
afterAll(() => stop?.());

const join = joinGroup;
const listed = groupParticipants;

const removedEvents = async (tenantId: string) => (await groupActivity(tenantId)).filter((e) => e.event === "buyer_removed");
const totals = async (api: Api, id: string) => (await api("GET", `/api/external/info-launch/${id}`)).json.totals;
const actions = async (api: Api, id: string) => (await api("GET", `/api/external/list-group-actions?id_launch=${id}`)).json.actions as unknown[];

async function buyersSetting(api: Api, id: string, buyers: Record<string, boolean>) {
  const res = await api("PUT", `/api/external/edit-launch/${id}`, { buyers });
  expect(res.status, res.text).toBe(200);
  return res.json.buyers;
}

describe("buyer removal", () => {
  it("a buyer who joined as 553187654321 and bought as 5531987654321 is removed from both groups once; a repeated notice and a refund change nothing; a staff buyer stays", async () => {
    const staff = "5511988887777";
    const l = await launchWithGroups(server.url, { groups: 2, staff: [staff] });
    const [g1, g2] = l.groups;
    expect((await l.api("GET", `/api/external/info-launch/${l.id}`)).json.buyers).toEqual({ remove_from_groups: false, dry_run: false });
    expect(await buyersSetting(l.api, l.id, { remove_from_groups: true })).toEqual({ remove_from_groups: true, dry_run: false });
    await join(l.api, g1, ["553187654321", staff, "5511977776666"]);
    await join(l.api, g2, ["553187654321"]);
    const hook = await hotmartHook(l.api.tenantId);

    const notice = hotmartBody("PURCHASE_APPROVED", "HP-RM-1", "+55 (31) 98765-4321");
    const first = await postHotmartTo(server.url, hook, notice);
    expect(first.status, first.text).toBe(200);
    const staffBuys = await postHotmartTo(server.url, hook, hotmartBody("PURCHASE_APPROVED", "HP-RM-2", staff));
    expect(staffBuys.status, staffBuys.text).toBe(200);

    // Within 60 s (here: as soon as the engine's turn comes) the platform no longer lists them in either group.
    const events = await until(
      () => removedEvents(l.api.tenantId),
      (e) => e.length >= 2,
      60_000,
    );
    expect(events.map((e) => [e.id_group, e.participant, e.id_purchase]).sort()).toEqual(
      [
        [g1, "553187654321", "HP-RM-1"],
        [g2, "553187654321", "HP-RM-1"],
      ].sort(),
    );
    expect(await listed(l.api, g1)).not.toContain("553187654321");
    expect(await listed(l.api, g2)).not.toContain("553187654321");
    // The staff member and the member who did not buy stay.
    expect(await listed(l.api, g1)).toEqual(expect.arrayContaining([staff, "5511977776666"]));
    const t = await until(
      () => totals(l.api, l.id),
      (x) => x.buyers_in_groups === 0,
      30_000,
    );
    expect(t.buyers_removed).toBe(2);
    const made = (await actions(l.api, l.id)).length;
    expect(made).toBe(1);

    // The same notice again (the marketplace retries), and the buyer's refund: nothing more is removed, nobody re-added.
    expect((await postHotmartTo(server.url, hook, notice)).json).toMatchObject({ recorded: false });
    const refund = await postHotmartTo(server.url, hook, hotmartBody("PURCHASE_REFUNDED", "HP-RM-1", "5531987654321"));
    expect(refund.json).toMatchObject({ recorded: true, status: "refunded" });
    await new Promise((r) => setTimeout(r, 1000));
    expect(await actions(l.api, l.id)).toHaveLength(made);
    expect(await removedEvents(l.api.tenantId)).toHaveLength(2);
    expect(await listed(l.api, g1)).not.toContain("553187654321");
    expect((await totals(l.api, l.id)).buyers_removed).toBe(2);
  }, 180_000);

  it("dry_run removes nothing and sends no event; buyers_in_groups and launch-buyers-in-groups show who would be; remove-buyers removes them", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const [g1] = l.groups;
    expect(await buyersSetting(l.api, l.id, { remove_from_groups: true, dry_run: true })).toEqual({ remove_from_groups: true, dry_run: true });
    await join(l.api, g1, ["5521987650001", "5521987650002"]);
    const hook = await hotmartHook(l.api.tenantId);
    expect((await postHotmartTo(server.url, hook, hotmartBody("PURCHASE_APPROVED", "HP-DRY-1", "21987650001"))).status).toBe(200);

    await new Promise((r) => setTimeout(r, 1500));
    expect(await listed(l.api, g1)).toContain("5521987650001");
    expect(await removedEvents(l.api.tenantId)).toEqual([]);
    expect(await actions(l.api, l.id)).toEqual([]);
    const t = await totals(l.api, l.id);
    expect([t.buyers_in_groups, t.buyers_removed]).toEqual([1, 0]);
    const list = await l.api("GET", `/api/external/launch-buyers-in-groups/${l.id}`);
    expect(list.status, list.text).toBe(200);
    expect(list.json.buyers).toEqual([
      { participant: "5521987650001", id_group: g1, group_name: "Turma 7 #1", platform: "hotmart", transaction: "HP-DRY-1", removal: null },
    ]);

    // "Remover agora": a group action of type remove for them, through the same engine.
    const now = await l.api("POST", `/api/external/remove-buyers/${l.id}`, {});
    expect(now.status, now.text).toBe(200);
    expect(now.json.removals).toBe(1);
    expect(now.json.id_action).toHaveLength(1);
    const done = await until(
      () => l.api("GET", `/api/external/info-group-action/${now.json.id_action[0]}`),
      (r) => r.json.status === "completed",
      60_000,
    );
    expect(done.json.action).toMatchObject({ type: "remove", participants: ["5521987650001"] });
    expect(done.json.groups).toMatchObject({ total: 1, done: 1, failed: 0 });
    expect(await listed(l.api, g1)).not.toContain("5521987650001");
    expect(await listed(l.api, g1)).toContain("5521987650002");
    expect((await removedEvents(l.api.tenantId)).map((e) => e.participant)).toEqual(["5521987650001"]);
    const after = await until(
      () => totals(l.api, l.id),
      (x) => x.buyers_in_groups === 0,
      30_000,
    );
    expect(after.buyers_removed).toBe(1);
    // Nobody left: nothing queued.
    expect((await l.api("POST", `/api/external/remove-buyers/${l.id}`, {})).json).toMatchObject({ id_action: [], removals: 0 });
  }, 180_000);
});
