/**
 * A group action across a crash (CONTRACT §8, docs/groups.md#how-it-runs): a child server process running the
 * group-action engine is killed with SIGKILL mid-action, another is started on the same database; every group ends
 * done exactly once (the platform's change log shows one change per group). Two processes at once never do a group
 * twice either. PostgreSQL only: an embedded PGlite database belongs to one process (the read-back of a group left
 * being applied is proven on both databases in group-actions.test.ts).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startChildServer } from "../child-server";
import { newTenant, restPollMs, until, waitFor, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { baseDatabaseUrl } from "../postgres-databases";

const onPostgres = Boolean(baseDatabaseUrl());
let server: TestServer;

beforeAll(async () => {
  process.env.GROUP_ACTION_GAP_MS = "150";
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  delete process.env.GROUP_ACTION_GAP_MS;
});

const enc = encodeURIComponent;

async function segmentOfGroups(t: Api, n: number) {
  const ch = (await t("POST", "/api/external/create-channel", { name: "Número" })).json.id_channel as string;
  const groups = ((await t("GET", `/api/external/list-groups/${ch}`)).json.groups as { id_group: string }[]).slice(0, n).map((g) => g.id_group);
  const seg = await t("POST", "/api/external/create-segment", { name: "Turma", id_channel: [ch], groups });
  expect(seg.status, seg.text).toBe(201);
  return { groups, segmentId: seg.json.id_segment as string };
}

if (!onPostgres)
  console.log("[group-actions] SIGKILL of a child server mid-action: skipped on PGlite (one process owns an embedded database; set DATABASE_URL)");
it.skipIf(!onPostgres)(
  "SIGKILL mid-action, a restart: every group done exactly once; two processes at once never do a group twice",
  async () => {
    const t = await newTenant(server.url);
    const { groups, segmentId } = await segmentOfGroups(t, 20);
    const first = await startChildServer("198.51.100.61", { engines: ["group-actions"] });
    let firstAlive = true;
    try {
      const res = await t("POST", "/api/external/create-group-action", { id_segment: segmentId, action: { type: "close_messages" } });
      expect(res.status, res.text).toBe(200);
      const id = res.json.id_action as string;
      await until(
        () => t("GET", `/api/external/info-group-action/${id}`),
        (r) => r.json.groups.done >= 5,
        60_000,
        restPollMs,
      );
      process.kill(first.pid, "SIGKILL");
      firstAlive = false;
      const mid = (await t("GET", `/api/external/info-group-action/${id}`)).json;
      expect(mid.status).toBe("running");
      expect(mid.groups.pending).toBeGreaterThan(0);
      // Two servers after it: the first to take the dead one's lease (it expires within 30 s) finishes the action.
      const both = await Promise.all([
        startChildServer("198.51.100.62", { engines: ["group-actions"] }),
        startChildServer("198.51.100.63", { engines: ["group-actions"] }),
      ]);
      try {
        const done = await waitFor(
          "the action completed after the crash",
          async () => {
            const r = await t("GET", `/api/external/info-group-action/${id}`);
            return r.json.status === "completed" && r.json;
          },
          // The dead process's lease runs out first (30 s): at 50 ms that wait alone spent the key's 300 requests a minute.
          90_000,
          restPollMs,
        );
        expect(done.groups).toEqual({ total: 20, done: 20, failed: 0, pending: 0 });
      } finally {
        await Promise.all(both.map((c) => c.close()));
      }
      for (const g of groups) {
        const s = (await t("GET", `/api/simulator/groups/${enc(g)}`)).json;
        expect(s.announce).toBe(true);
        expect(s.changes).toHaveLength(1);
      }
    } finally {
      if (firstAlive) await first.close();
    }
  },
  180_000,
);
