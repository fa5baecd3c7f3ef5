/**
 * Group actions (CONTRACT §8; docs/groups.md), the two paths group-actions.test.ts leaves out: a `set_picture` that
 * succeeds end to end (the image fetched once at creation from an https server under the SSRF rule, every group's
 * picture on the simulator that image), and `no_channel` (a group whose every admin number cannot act waits, then fails
 * after 30 minutes; a number back within them and the group is done).
 *
 * The picture is served by a local https server with a self-signed certificate: the test setup's
 * WEBHOOK_ALLOW_PRIVATE=1 lets the fetch reach 127.0.0.1 (as webhook and media URLs do in every test), and the
 * certificate is trusted only around the create call (NODE_TLS_REJECT_UNAUTHORIZED=0, restored after).
 *
 * The engine measures a group's wait with the wall clock from the `waiting_since` it records, so 30 minutes are
 * jumped by moving that record back (what a process that began the wait half an hour ago would have left), not waited.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupActionGroups, groupActions } from "../../db/schema";
import { GroupActionRunner } from "../../inngest/in-process/group-action-runner";
import { noChannelWaitMs } from "../../server/groups/actions/run-group-actions";
import { getServices } from "../../server/services";
import { joinAsAdmin, restPollMs, tenantWithNumbers, until, waitFor, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let runner: GroupActionRunner;
let images: Server;
let imagesUrl = "";
let served = 0;

/** A real 2×2 PNG (signature, IHDR, IDAT, IEND with their CRCs), so the service's sniffing sees an image/png. */
function png(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.from([0, 0, 0, 2, 0, 0, 0, 2, 8, 2, 0, 0, 0]);
  const rows = Buffer.from([0, 255, 0, 0, 0, 128, 0, 0, 0, 0, 255, 255, 255, 0]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}
const image = png();

beforeAll(async () => {
  process.env.GROUP_ACTION_GAP_MS = "60";
  server = await startTestServer();
  runner = new GroupActionRunner(await getServices(), { intervalMs: 200 }).start();
  const dir = mkdtempSync(join(tmpdir(), "group-picture-"));
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"].concat([
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ]),
      { stdio: "ignore" },
    );
    images = createServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }, (req, res) => {
      served += 1;
      if (req.url !== "/turma.png") {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "image/png", "content-length": image.length }).end(image);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve));
  imagesUrl = `https://127.0.0.1:${(images.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  await new Promise((resolve) => images?.close(resolve));
  delete process.env.GROUP_ACTION_GAP_MS;
});

const enc = encodeURIComponent;
const simGroup = async (t: Api, g: string) => {
  const res = await t("GET", `/api/simulator/groups/${enc(g)}`);
  expect(res.status, res.text).toBe(200);
  return res.json as { picture_sha256: string | null; announce: boolean; changes: { id_channel: string; change: string }[] };
};

async function segment(t: Api, channels: string[], groups: string[]) {
  const res = await t("POST", "/api/external/create-segment", { name: "Turma", id_channel: channels, groups });
  expect(res.status, res.text).toBe(201);
  return res.json.id_segment as string;
}

const info = (t: Api, id: string) => t("GET", `/api/external/info-group-action/${id}`);

describe("set_picture", () => {
  it("the image is fetched once at creation and every group's picture is it; the action completes with every group done", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 2);
    const [a, b] = numbers;
    const groups = [...a.groups.slice(0, 3), ...b.groups.slice(0, 2)];
    await joinAsAdmin(t, a.groups.slice(0, 3), b.phone);
    const segmentId = await segment(t, [a.id, b.id], groups);
    const sha256 = createHash("sha256").update(image).digest("hex");
    for (const g of groups) expect((await simGroup(t, g)).picture_sha256).not.toBe(sha256);

    const before = served;
    const trust = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    let res: Awaited<ReturnType<Api>>;
    try {
      res = await t("POST", "/api/external/create-group-action", {
        id_segment: segmentId,
        action: { type: "set_picture", picture_url: `${imagesUrl}/turma.png` },
      });
    } finally {
      if (trust === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = trust;
    }
    expect(res.status, res.text).toBe(200);
    const id = res.json.id_action as string;

    const done = await until(
      () => info(t, id),
      (r) => r.json.status === "completed",
      60_000,
      restPollMs,
    );
    expect(done.json).toMatchObject({ status: "completed", groups: { total: 5, done: 5, failed: 0, pending: 0 } });
    expect(done.json.action).toEqual({ type: "set_picture", picture_url: `${imagesUrl}/turma.png` });
    for (const r of done.json.results) expect(r).toMatchObject({ state: "done", reason: null });
    for (const g of groups) {
      const s = await simGroup(t, g);
      expect(s.picture_sha256).toBe(sha256);
      expect(s.changes).toHaveLength(1);
    }
    // Fetched once, when the action was created: not once per group.
    expect(served - before).toBe(1);
  }, 120_000);
});

describe("no_channel", () => {
  it("a group whose every admin number cannot act stays pending, fails no_channel after 30 minutes; a number back within them and it is done", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1);
    const [a] = numbers;
    const groups = a.groups.slice(0, 2);
    const segmentId = await segment(t, [a.id], groups);
    const off = await t("POST", `/api/simulator/channels/${a.id}/state`, { connected: false });
    expect(off.status, off.text).toBe(200);
    await waitFor("the number offline", async () => (await t("GET", `/api/external/info-channel/${a.id}`)).json.status !== "connected", 30_000, restPollMs);

    const created = await t("POST", "/api/external/create-group-action", { id_segment: segmentId, action: { type: "close_messages" } });
    expect(created.status, created.text).toBe(200);
    const id = created.json.id_action as string;

    // Both groups wait: the engine records when each began waiting, and they stay pending.
    const { db } = await getServices();
    const waiting = () => db.select().from(groupActionGroups).where(eq(groupActionGroups.actionId, id));
    await waitFor("both groups waiting", async () => (await waiting()).every((r) => r.waitingSince !== null), 60_000);
    const pending = (await info(t, id)).json;
    expect(pending).toMatchObject({ status: "running", groups: { total: 2, done: 0, failed: 0, pending: 2 } });
    expect(pending.results.map((r: { state: string }) => r.state)).toEqual(["pending", "pending"]);

    // Thirty minutes on for the first group, twenty-nine for the second: the first fails no_channel, the second waits on.
    const now = Date.now();
    const setWait = (g: string, ms: number) =>
      db
        .update(groupActionGroups)
        .set({ waitingSince: new Date(now - ms) })
        .where(and(eq(groupActionGroups.actionId, id), eq(groupActionGroups.groupId, g)));
    await setWait(groups[0], noChannelWaitMs + 1000);
    await setWait(groups[1], noChannelWaitMs - 60_000);
    await db
      .update(groupActions)
      .set({ nextRunAt: new Date(now) })
      .where(eq(groupActions.id, id));
    const oneFailed = await until(
      () => info(t, id),
      (r) => r.json.groups.failed === 1,
      60_000,
      restPollMs,
    );
    expect(oneFailed.json).toMatchObject({ status: "running", groups: { total: 2, done: 0, failed: 1, pending: 1 } });
    expect(oneFailed.json.results[0]).toMatchObject({ id_group: groups[0], state: "failed", reason: "no_channel" });
    expect(oneFailed.json.results[1]).toMatchObject({ id_group: groups[1], state: "pending" });

    // The number comes back within the second group's 30 minutes: it is done.
    const on = await t("POST", `/api/simulator/channels/${a.id}/state`, { connected: true });
    expect(on.status, on.text).toBe(200);
    const done = await until(
      () => info(t, id),
      (r) => r.json.status === "completed",
      90_000,
      restPollMs,
    );
    expect(done.json).toMatchObject({ status: "completed", groups: { total: 2, done: 1, failed: 1, pending: 0 } });
    expect(done.json.results[0]).toMatchObject({ state: "failed", reason: "no_channel" });
    expect(done.json.results[1]).toMatchObject({ state: "done", reason: null, id_channel: a.id });
    expect((await simGroup(t, groups[0])).announce).toBe(false);
    expect((await simGroup(t, groups[1])).announce).toBe(true);
  }, 180_000);
});
