/**
 * The dashboard's CSV downloads (docs/launches.md#exports): GET /api/dashboard/launches/{id}/leads.csv and members.csv in
 * the session, streamed, byte for byte the REST export (BOM included) with the same query options; not signed in 401,
 * another account's launch 404; the dashboard's tRPC no longer answers a CSV built in memory.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { users } from "../../db/schema";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { expectEnvelope, newTenant, request } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { signIn } from "../oauth-client";
import { emitParticipants, launchWithGroups } from "./fixtures";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** The account owner's session cookie (newTenant's password). */
async function sessionOf(tenantId: string) {
  const [user] = await (await getDb()).select({ email: users.email }).from(users).where(eq(users.tenantId, tenantId));
  return signIn(server.url, user.email, "senha-segura-123");
}

const bytes = async (res: Response) => new Uint8Array(await res.arrayBuffer());
const DOWNLOAD = (id: string, file: "leads" | "members", q = "") => `/api/dashboard/launches/${id}/${file}.csv${q}`;

describe("dashboard CSV downloads", () => {
  it("stream the REST export's bytes (BOM included) in the session, with its options; 401 signed out; 404 for another account's launch", async () => {
    const l = await launchWithGroups(server.url, { staff: ["5531900000001"] });
    const [g1] = l.groups;
    await emitParticipants(l.channel, g1, "join", ["5531987650001", "5531900000001"]);
    const leads = [
      { phone: "5531987650001", name: "Entrou" },
      { phone: "5531987650002", name: "=Não; entrou" },
      { phone: "5531987650003", name: 'Ana, "Bia"' },
    ];
    expect((await l.api("POST", `/api/external/launch-leads/${l.id}`, { leads })).status).toBe(200);
    const cookie = await sessionOf(l.api.tenantId);

    const cases: ["leads" | "members", string, string][] = [
      ["leads", "", `/api/external/launch-leads/${l.id}?format=csv`],
      ["leads", "?status=not_joined&delimiter=semicolon", `/api/external/launch-leads/${l.id}?format=csv&status=not_joined&delimiter=semicolon`],
      ["members", "", `/api/external/launch-members/${l.id}?format=csv`],
      ["members", "?delimiter=semicolon", `/api/external/launch-members/${l.id}?format=csv&delimiter=semicolon`],
    ];
    for (const [file, q, rest] of cases) {
      const res = await fetch(`${server.url}${DOWNLOAD(l.id, file, q)}`, { headers: { cookie } });
      expect([file, q, res.status]).toEqual([file, q, 200]);
      // Streamed: chunked, no length known in advance.
      expect(res.headers.get("content-length")).toBeNull();
      expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
      const viaRest = await fetch(`${server.url}${rest}`, { headers: { "x-api-key": l.api.key } });
      expect(res.headers.get("content-disposition")).toBe(viaRest.headers.get("content-disposition"));
      const got = await bytes(res);
      expect([...got.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      expect(Buffer.from(got).toString("utf8")).toBe(Buffer.from(await bytes(viaRest)).toString("utf8"));
    }
    // The rows are there: who never joined, and the staff member marked.
    const notJoined = Buffer.from(
      await bytes(await fetch(`${server.url}${DOWNLOAD(l.id, "leads", "?status=not_joined")}`, { headers: { cookie } })),
    ).toString();
    expect(
      notJoined
        .split("\r\n")
        .filter(Boolean)
        .map((r) => r.split(",")[0]),
    ).toEqual(["\uFEFFphone", "5531987650002", "5531987650003"]);
    const members = Buffer.from(await bytes(await fetch(`${server.url}${DOWNLOAD(l.id, "members")}`, { headers: { cookie } }))).toString();
    expect(members).toMatch(/\r\n5531900000001,[^\r]*,true,false\r\n/);

    // A bad option is 400 naming it, as over REST.
    const bad = expectEnvelope(await request(server.url, "GET", DOWNLOAD(l.id, "leads", "?status=maybe"), undefined, { cookie }), 400, "Bad Request");
    expect(bad.message).toContain("status");
    // Not signed in (an API key is not a session): 401.
    for (const file of ["leads", "members"] as const) {
      expectEnvelope(await request(server.url, "GET", DOWNLOAD(l.id, file)), 401, "Unauthorized");
      expectEnvelope(await request(server.url, "GET", DOWNLOAD(l.id, file), undefined, { "x-api-key": l.api.key }), 401, "Unauthorized");
    }
    // Another account's session: 404, as an unknown launch.
    const other = await newTenant(server.url);
    const otherCookie = await sessionOf(other.tenantId);
    for (const file of ["leads", "members"] as const) {
      expectEnvelope(await request(server.url, "GET", DOWNLOAD(l.id, file), undefined, { cookie: otherCookie }), 404, "Not Found");
      expectEnvelope(await request(server.url, "GET", DOWNLOAD("launch_00000000-0000-4000-8000-000000000000", file), undefined, { cookie }), 404, "Not Found");
    }
  });

  it("the dashboard's tRPC refuses a CSV (it would be built whole in memory) and still answers JSON pages", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    const { db, provider } = await getServices();
    const owner = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: l.api.tenantId, userId: "u", role: "owner" },
      now: new Date(),
    });
    await expect(owner.launchStats.members({ id_launch: l.id, format: "csv" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(owner.launchLeads.list({ id_launch: l.id, format: "csv" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await owner.launchStats.members({ id_launch: l.id })).toMatchObject({ success: true, total: 0 });
  });
});
