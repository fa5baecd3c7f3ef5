/**
 * Buyer removal (CONTRACT §9; docs/launches.md#buyers-leave-the-groups) with MESSAGING_PROVIDER=evolution against the
 * fake gateway, which answers as Evolution 2.3.7 does: `group/updateParticipant` `{action: "remove"}` 201 with WhatsApp's
 * status per participant (404 for one not in the group), a `group-participants.update` webhook for the removal, and the
 * read-back through findGroupInfos (docs/evolution.md#group-settings-group-actions). The buyer joined with the 8-digit
 * form WhatsApp still shows for older accounts and bought with the 9-digit one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeEvolution } from "../fake-evolution";
import { until } from "../helpers";
import type { TestServer } from "../http-server";
import { evolutionLaunch, evolutionWithGroupActions, groupActivity } from "../launches/fixtures";
import { hotmartBody, hotmartHook, postHotmartTo } from "../launches/purchases";

let fake: FakeEvolution;
let server: TestServer;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ fake, server, stop } = await evolutionWithGroupActions());
});
afterAll(() => stop?.());

describe("buyer removal on Evolution", () => {
  it("the buyer (joined as 553187654321, bought as 5531987654321) is removed once through updateParticipant; the notice again removes nothing", async () => {
    const l = await evolutionLaunch(server.url, fake, { groups: 2 });
    const [g1, g2] = l.groups;
    expect((await l.api("PUT", `/api/external/edit-launch/${l.id}`, { buyers: { remove_from_groups: true } })).status).toBe(200);
    await fake.groupJoin(l.channel, g1, ["553187654321", "5511944445555"]);
    await until(
      async () => (await l.api("GET", `/api/external/info-launch/${l.id}`)).json.totals.joins,
      (n) => n >= 2,
    );
    const hook = await hotmartHook(l.api.tenantId);
    const notice = hotmartBody("PURCHASE_APPROVED", "HP-EVO-1", "5531987654321");
    expect((await postHotmartTo(server.url, hook, notice)).status).toBe(200);

    const removed = await until(
      async () => (await groupActivity(l.api.tenantId)).filter((e) => e.event === "buyer_removed"),
      (e) => e.length >= 1,
      60_000,
    );
    expect(removed.map((e) => [e.id_group, e.participant, e.id_purchase])).toEqual([[g1, "553187654321", "HP-EVO-1"]]);
    const removals = () => fake.participantUpdates.filter((u) => u.action === "remove");
    // One call, to the group they were in, naming only them (g2 was read and left alone).
    expect(removals()).toEqual([{ instance: l.channel, group: g1, action: "remove", participants: ["553187654321"] }]);
    expect((fake.group(l.channel, g1)?.participants ?? []).map((p) => p.id)).not.toContain("553187654321@s.whatsapp.net");
    expect(fake.group(l.channel, g2)).toBeTruthy();
    // The removal's webhook recorded the leave: nobody left to remove.
    const t = await until(
      async () => (await l.api("GET", `/api/external/info-launch/${l.id}`)).json.totals,
      (x) => x.buyers_in_groups === 0,
      30_000,
    );
    expect(t.buyers_removed).toBe(1);

    expect((await postHotmartTo(server.url, hook, notice)).json).toMatchObject({ recorded: false });
    await new Promise((r) => setTimeout(r, 1000));
    expect(removals()).toHaveLength(1);
    expect((await groupActivity(l.api.tenantId)).filter((e) => e.event === "buyer_removed")).toHaveLength(1);
  }, 180_000);
});
