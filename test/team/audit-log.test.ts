import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowsOf } from "../../db/params";
import { tenantWithSegment } from "../campaigns";
import { startTestServer, type TestServer } from "../http-server";
import { joinThroughInvitation, ownerAccount, password } from "./team-client";

/**
 * CONTRACT §10 (docs/team.md#audit-log): every change recorded with its actor (a member's e-mail, an API key's
 * prefix), refused attempts too, no secret in it; GET /api/external/list-audit-log answers only the key's account.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

type Entry = {
  at: string;
  actor: { type: string; id: string | null; label: string | null };
  action: string;
  target: string | null;
  ip: string | null;
  outcome: string;
};

describe("the audit log", () => {
  it("shows the editor's campaign with their e-mail, a REST create with the key's prefix, a denied attempt; no secret; another account sees none", async () => {
    const owner = await ownerAccount(server.url);
    const { segment } = await tenantWithSegment(server.url, 2, 5, owner.api);
    const editor = await joinThroughInvitation(server.url, owner, "editor");

    const byEditor = await editor.trpc.mutate("campaigns.createMessage", { name: "Do editor", id_segment: segment, message: "Corpo secreto da mensagem" });
    expect(byEditor.status, byEditor.text).toBe(200);
    const byKey = await owner.api("POST", "/api/external/create-campaign/message", { name: "Pela API", id_segment: segment, message: "Outro corpo" });
    expect(byKey.status, byKey.text).toBe(201);
    expect((await editor.trpc.mutate("apiKeys.create", { name: "tentativa" })).status).toBe(403);

    const res = await owner.api("GET", "/api/external/list-audit-log");
    expect(res.status, res.text).toBe(200);
    const entries: Entry[] = res.json.entries;
    expect(res.json.next_cursor).toBeNull();
    // Newest first.
    expect([...entries].sort((a, b) => b.at.localeCompare(a.at))).toEqual(entries);

    expect(entries).toContainEqual(
      expect.objectContaining({
        action: "campaign.create",
        target: byEditor.json.result.data.id_campaign,
        actor: expect.objectContaining({ type: "member", label: editor.email }),
        outcome: "ok",
      }),
    );
    expect(entries).toContainEqual(
      expect.objectContaining({
        action: "campaign.create",
        target: byKey.json.id_campaign,
        actor: expect.objectContaining({ type: "api_key", label: owner.apiKey.slice(0, 12) }),
      }),
    );
    expect(entries).toContainEqual(
      expect.objectContaining({ action: "apiKeys.create", outcome: "denied", actor: expect.objectContaining({ type: "member", label: editor.email }) }),
    );
    expect(entries).toContainEqual(expect.objectContaining({ action: "member.invite", actor: expect.objectContaining({ label: owner.email }) }));
    expect(entries).toContainEqual(expect.objectContaining({ action: "member.join", actor: expect.objectContaining({ label: editor.email }) }));
    expect(entries.every((e) => e.ip !== null)).toBe(true);

    // Never a secret or a message body.
    const all = JSON.stringify(entries);
    for (const secret of [password, owner.apiKey, editor.token, "Corpo secreto da mensagem", "Outro corpo"]) expect(all).not.toContain(secret);

    // Filters: by actor type and by action.
    const members = await owner.api("GET", "/api/external/list-audit-log?actor_type=member&action=campaign.create");
    expect(members.json.entries.map((e: Entry) => e.actor.label)).toEqual([editor.email]);
    const future = await owner.api("GET", `/api/external/list-audit-log?since=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`);
    expect(future.json.entries).toEqual([]);

    // The dashboard's Registro de atividades: owners and admins; an editor is 403.
    expect((await owner.trpc.query("audit.list", {})).json.result.data.entries.length).toBe(entries.length);
    expect((await editor.trpc.query("audit.list", {})).status).toBe(403);

    // Another account's key sees none of it.
    const stranger = await ownerAccount(server.url, "Outra loja");
    const theirs = await stranger.api("GET", "/api/external/list-audit-log");
    expect(theirs.status).toBe(200);
    expect(JSON.stringify(theirs.json.entries)).not.toContain(editor.email);
    expect(JSON.stringify(theirs.json.entries)).not.toContain(byKey.json.id_campaign);
  }, 120_000);

  it("an entry commits with its change or not at all: a failed entry undoes the change, a failure after it undoes both", async () => {
    const { api, segment } = await tenantWithSegment(server.url, 1);
    const { getDb } = await import("../../db/client");
    const { segments } = await import("../../db/schema");
    const { audited, auditWrite } = await import("../../server/audit/audited");
    const { auditOf, recordAudit } = await import("../../server/audit/record-audit");
    const { editSegment } = await import("../../server/segments/edit-segment");
    const { provider } = await (await import("../../server/services")).getServices();
    const { eq } = await import("drizzle-orm");
    const db = await getDb();
    const tenantId = api.tenantId;
    const ctx = {
      db,
      caller: { kind: "apiKey" as const, tenantId, apiKeyId: "k", apiKeyPrefix: "gcs_test" },
      clientIp: "127.0.0.1",
      now: new Date(),
      tenantId,
    };
    const rename = (name: string) => (tx: typeof db) => tx.update(segments).set({ name }).where(eq(segments.id, segment));
    const nameNow = async () => (await db.select({ name: segments.name }).from(segments).where(eq(segments.id, segment)))[0].name;
    const edits = async () => (await api("GET", "/api/external/list-audit-log?action=segment.edit")).json.entries as Entry[];

    // The entry's insert fails (no action: NOT NULL): the rename made before it in the transaction is undone.
    await expect(audited(ctx, null as unknown as string, rename("Sem registro"), () => segment)).rejects.toThrow();
    // The entry is written, then the transaction around it fails: neither stays.
    await expect(
      db.transaction(async (tx) => {
        await audited({ ...ctx, db: tx }, "segment.edit", rename("Desfeito"), () => segment);
        throw new Error("after the entry");
      }),
    ).rejects.toThrow("after the entry");
    // On PostgreSQL the entry is sent with the transaction's next statement or its COMMIT, not awaited alone: a
    // failed entry still fails the call and undoes the change, whether a statement or the COMMIT follows it.
    await expect(
      editSegment(db, provider, tenantId, segment, { name: "Sem registro" }, new Date(), auditWrite(ctx, null as unknown as string)),
    ).rejects.toThrow();
    await expect(
      db.transaction(async (tx) => {
        await recordAudit(tx, auditOf(ctx, null as unknown as string));
        await rename("Depois do registro")(tx);
      }),
    ).rejects.toThrow();
    expect(await nameNow()).toBe("Seg");
    expect(await edits()).toEqual([]);

    await audited(ctx, "segment.edit", rename("Feito"), () => segment);
    expect(await nameNow()).toBe("Feito");
    expect((await edits()).map((e) => [e.action, e.target, e.actor.label])).toEqual([["segment.edit", segment, "gcs_test"]]);
  }, 120_000);

  it("a segment's create and rename and a settings edit: each entry rides in its change's own statement (a CTE)", async () => {
    // tenantWithSegment edits the settings and creates the segment through REST.
    const { api, segment } = await tenantWithSegment(server.url, 1);
    const { getDb } = await import("../../db/client");
    const { sql } = await import("drizzle-orm");
    const db = await getDb();
    // xmin is the transaction that wrote a row, cmin the command within it: the same for both only when one statement
    // wrote the change and its entry.
    const sameCommand = async (row: ReturnType<typeof sql>, action: string) => {
      const [{ change, entry }] = rowsOf<{ change: string | null; entry: string | null }>(
        await db.execute(sql`
        select (select xmin::text || '/' || cmin::text from (${row}) r) as change,
               (select xmin::text || '/' || cmin::text from audit_log where tenant_id = ${api.tenantId} and action = ${action}) as entry`),
      );
      return change !== null && change === entry;
    };
    const segmentRow = sql`select xmin, cmin from segments where id = ${segment}`;
    expect(await sameCommand(segmentRow, "segment.create")).toBe(true);
    expect(await sameCommand(sql`select xmin, cmin from tenant_settings where tenant_id = ${api.tenantId}`, "settings.edit")).toBe(true);
    expect((await api("PUT", `/api/external/edit-segment/${segment}`, { name: "Numa só instrução" })).status).toBe(200);
    expect(await sameCommand(segmentRow, "segment.edit")).toBe(true);
  }, 120_000);

  it("pages of 100, newest first, through next_cursor", async () => {
    const owner = await ownerAccount(server.url, "Muitas mudanças");
    const { getDb } = await import("../../db/client");
    const { recordAudit } = await import("../../server/audit/record-audit");
    const db = await getDb();
    const base = Date.now() - 60_000;
    for (let i = 0; i < 105; i++) {
      await recordAudit(db, {
        tenantId: owner.tenantId,
        actor: { type: "cli", id: null, label: "admin CLI" },
        action: "test.page",
        target: `t${i}`,
        at: new Date(base + i),
      });
    }
    const first = await owner.api("GET", "/api/external/list-audit-log?action=test.page");
    expect(first.json.entries).toHaveLength(100);
    expect(first.json.entries[0].target).toBe("t104");
    const second = await owner.api("GET", `/api/external/list-audit-log?action=test.page&cursor=${first.json.next_cursor}`);
    expect(second.json.entries.map((e: Entry) => e.target)).toEqual(["t4", "t3", "t2", "t1", "t0"]);
    expect(second.json.next_cursor).toBeNull();
  }, 120_000);
});
