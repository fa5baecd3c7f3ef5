/**
 * Undo of a moderation removal (docs/moderation.md#undo), through the REST facade: the person's blocklist entry (any
 * ninth-digit form) is cleared, the group's invite link answered, a group that is not the launch's is 404, and no one is
 * re-added.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectEnvelope } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { groupParticipants, launchWithGroups } from "../launches/fixtures";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe("undo-moderation", () => {
  it("clears the blocklist entry, answers the invite link, re-adds no one", async () => {
    const l = await launchWithGroups(server.url, { groups: 2 });
    const [g1, g2] = l.groups;
    expect((await l.api("PUT", "/api/external/edit-blocklist", { add: ["5531987650009", "5531987650010"] })).json.total).toBe(2);
    const before = await groupParticipants(l.api, g1);
    const res = await l.api("POST", `/api/external/undo-moderation/${l.id}`, { id_group: g1, participant: "553187650009" });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ success: true, invite_link: `https://chat.whatsapp.com/code1${l.slug}` });
    expect((await l.api("GET", "/api/external/list-blocklist")).json.numbers.map((n: { phone: string }) => n.phone)).toEqual(["5531987650010"]);
    expect(await groupParticipants(l.api, g1)).toEqual(before);
    const again = await l.api("POST", `/api/external/undo-moderation/${l.id}`, { id_group: g2, participant: "553187650009" });
    expect(again.json).toEqual({ success: true, invite_link: `https://chat.whatsapp.com/code2${l.slug}` });

    const other = await launchWithGroups(server.url, { groups: 1 });
    expectEnvelope(await l.api("POST", `/api/external/undo-moderation/${l.id}`, { id_group: other.groups[0], participant: "5531987650010" }), 404, "Not Found");
    expectEnvelope(await other.api("POST", `/api/external/undo-moderation/${l.id}`, { id_group: g1, participant: "5531987650010" }), 404, "Not Found");
    expectEnvelope(await l.api("POST", `/api/external/undo-moderation/${l.id}`, { id_group: g1 }), 400, "Bad Request");

    // Both changes are in the account's audit log, with the key as actor and no number of the blocklist in it.
    const log = await l.api("GET", "/api/external/list-audit-log?action=moderation.");
    const entries = log.json.entries as { action: string; target: string | null; actor: { type: string } }[];
    expect(entries.filter((e) => e.action === "moderation.undo").map((e) => [e.target, e.actor.type])).toEqual([
      [l.id, "api_key"],
      [l.id, "api_key"],
    ]);
    expect(entries.filter((e) => e.action === "moderation.edit_blocklist")).toHaveLength(1);
    expect(log.text).not.toContain("87650009");
  }, 120_000);
});
