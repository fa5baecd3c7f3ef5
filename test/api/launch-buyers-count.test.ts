/**
 * info-launch's `buyers_in_groups` is kept on the launch's row and counted again only when an input changed
 * (docs/launches.md#buyers-leave-the-groups): through the REST facade, the marketplaces' webhook and the simulator's
 * controls, the figure follows a purchase, a join, a leave, a refund and a removal, and repeated GETs in between
 * answer it from the row (the count stored is the one answered).
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launches } from "../../db/schema";
import { getServices } from "../../server/services";
import { type Api, until } from "../helpers";
import type { TestServer } from "../http-server";
import { joinGroup, launchWithGroups, serverWithGroupActions } from "../launches/fixtures";
import { hotmartBody, hotmartHook, postHotmartTo } from "../launches/purchases";

let server: TestServer;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ server, stop } = await serverWithGroupActions());
});
afterAll(() => stop?.());

const inGroups = async (api: Api, id: string) => (await api("GET", `/api/external/info-launch/${id}`)).json.totals.buyers_in_groups as number;
const stored = async (id: string) => {
  const { db } = await getServices();
  const [row] = await db.select({ n: launches.buyersInGroupsCount }).from(launches).where(eq(launches.id, id));
  return row?.n;
};

async function leave(api: Api, group: string, phones: string[]) {
  const res = await api("POST", `/api/simulator/groups/${encodeURIComponent(group)}/participants`, { leave: phones });
  expect(res.status, res.text).toBe(200);
}

describe("buyers_in_groups, kept", () => {
  it("follows a purchase, a join, a leave, a refund and a removal; GETs in between answer the stored count", async () => {
    const l = await launchWithGroups(server.url, { groups: 2 });
    const [g1, g2] = l.groups;
    // dry_run: nothing leaves by itself, the figure moves only with what is done below.
    const edited = await l.api("PUT", `/api/external/edit-launch/${l.id}`, { buyers: { remove_from_groups: true, dry_run: true } });
    expect(edited.status, edited.text).toBe(200);
    await joinGroup(l.api, g1, ["5521987650011", "5521987650012"]);
    expect(await inGroups(l.api, l.id)).toBe(0);
    const hook = await hotmartHook(l.api.tenantId);
    const buy = async (transaction: string, phone: string, event = "PURCHASE_APPROVED") => {
      const res = await postHotmartTo(server.url, hook, hotmartBody(event, transaction, phone));
      expect(res.status, res.text).toBe(200);
    };

    // A purchase by a member: counted at the next GET, and the same figure from the row after.
    await buy("HP-KEPT-1", "5521987650011");
    expect(await inGroups(l.api, l.id)).toBe(1);
    expect(await inGroups(l.api, l.id)).toBe(1);
    expect(await stored(l.id)).toBe(1);

    // A buyer who joins a group after buying (bought first, joined later): counted once they join.
    await buy("HP-KEPT-2", "5521987650013");
    expect(await inGroups(l.api, l.id)).toBe(1);
    await joinGroup(l.api, g2, ["5521987650013"]);
    expect(await inGroups(l.api, l.id)).toBe(2);
    // The same person in a second group is still one buyer.
    await joinGroup(l.api, g2, ["5521987650011"]);
    expect(await inGroups(l.api, l.id)).toBe(2);

    // A leave: the first buyer leaves one of their two groups (still in), then the other.
    await leave(l.api, g1, ["5521987650011"]);
    expect(await inGroups(l.api, l.id)).toBe(2);
    await leave(l.api, g2, ["5521987650011"]);
    expect(await inGroups(l.api, l.id)).toBe(1);

    // A refund takes a buyer out of the figure.
    await buy("HP-KEPT-3", "5521987650012");
    expect(await inGroups(l.api, l.id)).toBe(2);
    await buy("HP-KEPT-3", "5521987650012", "PURCHASE_REFUNDED");
    expect(await inGroups(l.api, l.id)).toBe(1);

    // A removal ("Remover agora"): the platform takes them out, the figure follows.
    const now = await l.api("POST", `/api/external/remove-buyers/${l.id}`, {});
    expect(now.status, now.text).toBe(200);
    expect(now.json.removals).toBe(1);
    // The removal is confirmed (buyers_removed) once the platform's list is read back, after the leave it caused.
    const t = await until(
      async () => (await l.api("GET", `/api/external/info-launch/${l.id}`)).json.totals,
      (x) => x.buyers_in_groups === 0 && x.buyers_removed === 1,
      60_000,
    );
    expect([t.buyers_in_groups, t.buyers_removed]).toEqual([0, 1]);
    expect(await stored(l.id)).toBe(0);
  }, 180_000);
});
