import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { createTenant } from "../../server/auth/create-tenant";
import { tenantWithSegment } from "../campaigns";
import { request } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { signIn } from "../oauth-client";
import { dashboard, joinThroughInvitation, ownerAccount, password, sessionCookieOf } from "./team-client";

/**
 * CONTRACT §10 (docs/team.md): members and roles through /api/trpc as the dashboard calls it: invitations by a
 * single-use link, roles enforced by the server (403 `forbidden` naming the role), sessions ended by a role change,
 * the last owner kept, the account switcher.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const forbiddenNaming = (res: { status: number; json: any; text: string }, role: string) => {
  expect(res.status, res.text).toBe(403);
  expect(res.json.error.data.domainCode).toBe("forbidden");
  expect(res.json.error.message).toContain(role);
};

describe("a team in one account", () => {
  it("the owner invites an editor and a viewer; each link works once; each sees the owner's campaigns; the server holds the roles", async () => {
    const owner = await ownerAccount(server.url);
    const { segment } = await tenantWithSegment(server.url, 2, 5, owner.api);
    const first = await owner.api("POST", "/api/external/create-campaign/message", { name: "Da dona", id_segment: segment, message: "Olá!" });
    expect(first.status, first.text).toBe(201);

    const editor = await joinThroughInvitation(server.url, owner, "editor");
    const viewer = await joinThroughInvitation(server.url, owner, "viewer");
    expect(editor.path).toMatch(/^\/convite\/[A-Za-z0-9_-]{43}$/);

    // Once: the link is spent, for a sign-up and for the preview.
    const again = await request(
      server.url,
      "POST",
      "/api/trpc/members.signUpWithInvitation",
      { token: editor.token, name: "Outro", password },
      { origin: server.url },
    );
    expect(again.status, again.text).toBe(404);
    expect((await dashboard(server.url, "").query("members.invitation", { token: editor.token })).json.result.data).toEqual({ valid: false });

    for (const member of [editor, viewer]) {
      const list = await member.trpc.query("campaigns.list", {});
      expect(list.status, list.text).toBe(200);
      expect(JSON.stringify(list.json.result.data)).toContain(first.json.id_campaign);
    }

    // The editor creates a campaign; an API key, a webhook, a settings change are 403 through the tRPC endpoint itself.
    const created = await editor.trpc.mutate("campaigns.createMessage", { name: "Do editor", id_segment: segment, message: "Oi" });
    expect(created.status, created.text).toBe(200);
    forbiddenNaming(await editor.trpc.mutate("apiKeys.create", { name: "minha" }), "admin");
    forbiddenNaming(await editor.trpc.mutate("webhooks.edit", { url: "https://example.com/hook" }), "admin");
    forbiddenNaming(await editor.trpc.mutate("settings.edit", { dispatch: { messages_per_minute: 5 } }), "admin");
    forbiddenNaming(await editor.trpc.mutate("members.invite", { email: "x@example.test", role: "viewer" }), "admin");
    // The viewer reads, and creates nothing.
    forbiddenNaming(await viewer.trpc.mutate("campaigns.createMessage", { name: "Do leitor", id_segment: segment, message: "Oi" }), "editor");
    forbiddenNaming(await viewer.trpc.mutate("segments.create", { name: "S", id_channel: [], groups: [] }), "editor");
    // The owner sees both members.
    const members = await owner.trpc.query("members.list");
    expect(members.json.result.data.members.map((m: { email: string; role: string }) => [m.email, m.role]).sort()).toEqual(
      [
        [owner.email, "owner"],
        [editor.email, "editor"],
        [viewer.email, "viewer"],
      ].sort(),
    );
  }, 120_000);

  it("a role change ends the member's session at once; nobody changes their own role; the last owner stays; an admin cannot touch an owner", async () => {
    const owner = await ownerAccount(server.url);
    const editor = await joinThroughInvitation(server.url, owner, "editor");
    const admin = await joinThroughInvitation(server.url, owner, "admin");
    const members = (await owner.trpc.query("members.list")).json.result.data.members as { userId: string; email: string }[];
    const idOf = (email: string) => members.find((m) => m.email === email)!.userId;

    expect((await editor.trpc.query("campaigns.list", {})).status).toBe(200);
    const changed = await owner.trpc.mutate("members.changeRole", { userId: idOf(editor.email), role: "viewer" });
    expect(changed.status, changed.text).toBe(200);
    const ended = await editor.trpc.query("campaigns.list", {});
    expect(ended.status, ended.text).toBe(401);
    // Signed in again: a viewer.
    const asViewer = dashboard(server.url, await signIn(server.url, editor.email, password));
    forbiddenNaming(await asViewer.mutate("segments.create", { name: "S", id_channel: [], groups: [] }), "editor");

    forbiddenNaming(await owner.trpc.mutate("members.changeRole", { userId: owner.userId, role: "admin" }), "own role");
    forbiddenNaming(await admin.trpc.mutate("members.changeRole", { userId: owner.userId, role: "viewer" }), "owner");
    forbiddenNaming(await admin.trpc.mutate("members.remove", { userId: owner.userId }), "owner");
    forbiddenNaming(await admin.trpc.mutate("members.changeRole", { userId: idOf(editor.email), role: "owner" }), "owner");

    // A second owner demotes the first; then the last owner cannot be demoted or removed.
    expect((await owner.trpc.mutate("members.changeRole", { userId: idOf(admin.email), role: "owner" })).status).toBe(200);
    const secondOwner = dashboard(server.url, await signIn(server.url, admin.email, password));
    expect((await secondOwner.mutate("members.changeRole", { userId: owner.userId, role: "admin" })).status).toBe(200);
    const firstAsAdmin = dashboard(server.url, await signIn(server.url, owner.email, password));
    const lastOwner = await firstAsAdmin.mutate("members.changeRole", { userId: idOf(admin.email), role: "admin" });
    forbiddenNaming(lastOwner, "owner");
    const removed = await secondOwner.mutate("members.remove", { userId: idOf(editor.email) });
    expect(removed.status).toBe(200);
    expect((await asViewer.query("campaigns.list", {})).status).toBe(401);
  }, 120_000);

  it("the last owner cannot demote themselves away, nor be removed by the operator's rules (409 last_owner)", async () => {
    const owner = await ownerAccount(server.url);
    const other = await joinThroughInvitation(server.url, owner, "owner");
    const members = (await owner.trpc.query("members.list")).json.result.data.members as { userId: string; email: string }[];
    const otherId = members.find((m) => m.email === other.email)!.userId;
    expect((await owner.trpc.mutate("members.remove", { userId: otherId })).status).toBe(200);
    // Now alone: another owner's attempt is impossible, and the CLI path shares the rule (server/members/manage-members.ts).
    const { changeRole } = await import("../../server/members/manage-members");
    await expect(
      changeRole(
        await getDb(),
        { tenantId: owner.tenantId, actor: { type: "cli", id: null, label: "admin CLI" }, now: new Date() },
        { userId: owner.userId, role: "admin" },
      ),
    ).rejects.toMatchObject({ code: "last_owner" });
  }, 60_000);

  it("a person in two accounts switches between them; the session is checked against membership on every request", async () => {
    const owner = await ownerAccount(server.url, "Conta A");
    const email = `dupla-${randomUUID()}@example.test`;
    const own = await createTenant(await getDb(), { name: "Conta B", email, password });
    const cookie = await signIn(server.url, email, password);
    const person = dashboard(server.url, cookie);

    const invited = await owner.trpc.mutate("members.invite", { email, role: "editor" });
    const token = (invited.json.result.data.path as string).split("/").pop();
    const accepted = await person.mutate("members.accept", { token });
    expect(accepted.status, accepted.text).toBe(200);
    const inA = sessionCookieOf(accepted.headers)!;
    const accounts = await dashboard(server.url, inA).query("members.myAccounts");
    expect(accounts.json.result.data.map((a: { name: string; role: string; current: boolean }) => [a.name, a.role, a.current]).sort()).toEqual([
      ["Conta A", "editor", true],
      ["Conta B", "owner", false],
    ]);
    // In account A as an editor: no API keys there.
    forbiddenNaming(await dashboard(server.url, inA).query("apiKeys.list"), "admin");

    const back = await dashboard(server.url, inA).mutate("members.switchAccount", { tenantId: own.tenantId });
    expect(back.status).toBe(200);
    const inB = sessionCookieOf(back.headers)!;
    expect((await dashboard(server.url, inB).query("apiKeys.list")).status).toBe(200);
    // An account the person is not in: refused.
    const stranger = await ownerAccount(server.url, "Conta C");
    expect((await dashboard(server.url, inB).mutate("members.switchAccount", { tenantId: stranger.tenantId })).status).toBe(403);
  }, 120_000);
});
