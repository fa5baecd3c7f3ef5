/**
 * Group actions (CONTRACT §8; docs/groups.md) through the REST facade and the simulator's control endpoints, with the
 * group-action engine's in-process runner: one setting change across every group of a segment or a launch, through the
 * numbers that are admins there, exactly once per group, read back before done. The pace (2 s per number) is scaled
 * with GROUP_ACTION_GAP_MS as SIMULATOR_RATE_WINDOW_MS scales the simulator's minute; the clock is injected where the
 * codebase takes one (a scheduled action is created through the tRPC caller with `now` two minutes earlier).
 */
import { formatInTimeZone } from "date-fns-tz";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupActionGroups, groupActions, outboxEvents } from "../../db/schema";
import { GroupActionRunner } from "../../inngest/in-process/group-action-runner";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { expectEnvelope, joinAsAdmin, newTenant, restPollMs, tenantWithNumbers, until, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let runner: GroupActionRunner;

const startRunner = async () => {
  runner = new GroupActionRunner(await getServices(), { intervalMs: 200 }).start();
};

beforeAll(async () => {
  process.env.GROUP_ACTION_GAP_MS = "60";
  server = await startTestServer();
  await startRunner();
});
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  delete process.env.GROUP_ACTION_GAP_MS;
});

interface SimGroup {
  subject: string;
  description: string;
  announce: boolean;
  locked: boolean;
  members: number;
  admins: string[];
  changes: { id_channel: string; change: string }[];
}

const enc = encodeURIComponent;
const simGroup = async (t: Api, g: string) => {
  const res = await t("GET", `/api/simulator/groups/${enc(g)}`);
  expect(res.status, res.text).toBe(200);
  return res.json as SimGroup;
};

async function segment(t: Api, channels: string[], groups: string[]) {
  const res = await t("POST", "/api/external/create-segment", { name: "Turma", id_channel: channels, groups });
  expect(res.status, res.text).toBe(201);
  return res.json.id_segment as string;
}

async function createAction(t: Api, body: Record<string, unknown>) {
  const res = await t("POST", "/api/external/create-group-action", body);
  expect(res.status, res.text).toBe(200);
  expect(res.json.id_action).toMatch(/^action_[0-9a-f-]{36}$/);
  return res.json.id_action as string;
}

const info = (t: Api, id: string) => t("GET", `/api/external/info-group-action/${id}`);
const finished = (t: Api, id: string, ms = 60_000) =>
  until(
    () => info(t, id),
    (r) => r.json.status === "completed" || r.json.status === "canceled",
    ms,
    restPollMs,
  );

/** Two numbers, both admins of the 30 groups (20 of the first's, 10 of the second's). */
async function thirtyGroupsTwoAdmins() {
  const { t, numbers } = await tenantWithNumbers(server.url, 2);
  const [a, b] = numbers;
  const groups = [...a.groups.slice(0, 20), ...b.groups.slice(0, 10)];
  await joinAsAdmin(t, a.groups.slice(0, 20), b.phone);
  await joinAsAdmin(t, b.groups.slice(0, 10), a.phone);
  return { t, a, b, groups, segmentId: await segment(t, [a.id, b.id], groups) };
}

describe("close_messages over 30 groups by two admin numbers", () => {
  it("every group announce-only, each changed once, spread over both numbers; group_action events through the outbox", async () => {
    const { t, a, b, groups, segmentId } = await thirtyGroupsTwoAdmins();
    for (const g of groups.slice(0, 3)) expect((await simGroup(t, g)).announce).toBe(false);
    const id = await createAction(t, { name: "Fechar grupos", id_segment: segmentId, action: { type: "close_messages" } });
    const done = await finished(t, id);
    expect(done.json).toMatchObject({
      success: true,
      id_action: id,
      name: "Fechar grupos",
      status: "completed",
      groups: { total: 30, done: 30, failed: 0, pending: 0 },
    });
    expect(done.json.action).toEqual({ type: "close_messages" });
    expect(done.json.started_at).toMatch(/-03:00$/);
    const perChannel: Record<string, number> = {};
    for (const g of groups) {
      const s = await simGroup(t, g);
      expect(s.announce).toBe(true);
      // Exactly one change (one system notice) per group.
      expect(s.changes.map((c) => c.change)).toEqual(["announcement"]);
      perChannel[s.changes[0].id_channel] = (perChannel[s.changes[0].id_channel] ?? 0) + 1;
    }
    expect(perChannel[a.id]).toBeGreaterThanOrEqual(10);
    expect(perChannel[b.id]).toBeGreaterThanOrEqual(10);
    for (const r of done.json.results) {
      expect(r).toMatchObject({ state: "done", reason: null });
      expect([a.id, b.id]).toContain(r.id_channel);
    }
    expect(done.json.results.map((r: { id_group: string }) => r.id_group)).toEqual(groups);
    // What the dashboard's page of the action shows: each group's name and {n}, the number that applied it.
    expect(done.json.results.map((r: { position: number }) => r.position)).toEqual(groups.map((_, i) => i + 1));
    const phoneOf: Record<string, string> = { [a.id]: a.phone, [b.id]: b.phone };
    for (const r of done.json.results) {
      expect(r.group_name).toEqual(expect.any(String));
      expect(r.phone).toBe(phoneOf[r.id_channel]);
      expect(r.channel_name).toEqual(expect.any(String));
    }

    const { db } = await getServices();
    const events = await db
      .select({ payload: outboxEvents.payload })
      .from(outboxEvents)
      .where(and(eq(outboxEvents.tenantId, t.tenantId), eq(outboxEvents.type, "group_activity")));
    const mine = events.map((e) => (e.payload as { data: { id_action: string; status: string; groups: unknown } }).data).filter((d) => d.id_action === id);
    expect(mine.map((d) => d.status)).toEqual(["scheduled", "running", "completed"]);
    expect(mine[2].groups).toEqual({ total: 30, done: 30, failed: 0, pending: 0 });

    const list = await t("GET", `/api/external/list-group-actions?id_segment=${segmentId}`);
    expect(list.status).toBe(200);
    expect(list.json.actions.map((x: { id_action: string }) => x.id_action)).toEqual([id]);
  }, 150_000);

  it("one number banned mid-way: every group still done, once, the rest through the other number", async () => {
    process.env.GROUP_ACTION_GAP_MS = "250";
    try {
      const { t, a, b, groups, segmentId } = await thirtyGroupsTwoAdmins();
      const id = await createAction(t, { id_segment: segmentId, action: { type: "close_messages" } });
      await until(
        () => info(t, id),
        (r) => r.json.groups.done >= 6,
        30_000,
      );
      expect((await t("POST", `/api/simulator/channels/${b.id}/state`, { health: "banned" })).status).toBe(200);
      const done = await finished(t, id);
      expect(done.json.groups).toEqual({ total: 30, done: 30, failed: 0, pending: 0 });
      const perChannel: Record<string, number> = {};
      for (const g of groups) {
        const s = await simGroup(t, g);
        expect(s.announce).toBe(true);
        expect(s.changes).toHaveLength(1);
        perChannel[s.changes[0].id_channel] = (perChannel[s.changes[0].id_channel] ?? 0) + 1;
      }
      expect(perChannel[b.id]).toBeGreaterThanOrEqual(2);
      expect(perChannel[b.id]).toBeLessThan(15);
      expect(perChannel[a.id]).toBe(30 - perChannel[b.id]);
    } finally {
      process.env.GROUP_ACTION_GAP_MS = "60";
    }
  }, 150_000);
});

describe("per group", () => {
  it("a group where no number of the target is admin fails not_admin while the rest complete", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1);
    const [a] = numbers;
    const groups = a.groups.slice(0, 5);
    const segmentId = await segment(t, [a.id], groups);
    expect((await t("POST", `/api/simulator/groups/${enc(groups[2])}/state`, { admin: false })).status).toBe(200);
    const id = await createAction(t, { id_segment: segmentId, action: { type: "lock_info" } });
    const done = await finished(t, id);
    expect(done.json).toMatchObject({ status: "completed", groups: { total: 5, done: 4, failed: 1, pending: 0 } });
    expect(done.json.results[2]).toMatchObject({ id_group: groups[2], state: "failed", reason: "not_admin" });
    for (const [i, g] of groups.entries()) {
      const s = await simGroup(t, g);
      expect(s.locked).toBe(i !== 2);
      expect(s.changes).toHaveLength(i === 2 ? 0 : 1);
    }
  });

  it("{n} in a subject is each group's position in the segment", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1);
    const groups = numbers[0].groups.slice(3, 6);
    const segmentId = await segment(t, [numbers[0].id], groups);
    const id = await createAction(t, { id_segment: segmentId, action: { type: "set_subject", subject: "Turma {n} — Aulas liberadas" } });
    expect((await finished(t, id)).json.groups.done).toBe(3);
    for (const [i, g] of groups.entries()) expect((await simGroup(t, g)).subject).toBe(`Turma ${i + 1} — Aulas liberadas`);
  });

  it("set_description, promote and demote are read back from the group", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1);
    const groups = numbers[0].groups.slice(0, 2);
    const segmentId = await segment(t, [numbers[0].id], groups);
    for (const g of groups) expect((await t("POST", `/api/simulator/groups/${enc(g)}/participants`, { join: ["5511987650001"] })).status).toBe(200);
    const desc = await createAction(t, { id_segment: segmentId, action: { type: "set_description", description: "Aulas às 20h" } });
    const promote = await createAction(t, { id_segment: segmentId, action: { type: "promote", participants: ["5511987650001"] } });
    expect((await finished(t, desc)).json.groups.done).toBe(2);
    expect((await finished(t, promote)).json.groups.done).toBe(2);
    for (const g of groups) {
      const s = await simGroup(t, g);
      expect(s.description).toBe("Aulas às 20h");
      expect(s.admins).toContain("5511987650001");
    }
    const remove = await createAction(t, { id_segment: segmentId, action: { type: "remove", participants: ["5511987650001"] } });
    expect((await finished(t, remove)).json.groups.done).toBe(2);
    for (const g of groups) expect((await simGroup(t, g)).admins).not.toContain("5511987650001");
  });
});

describe("when it runs", () => {
  it("scheduled for now + 2 min (made two minutes before it) starts within that minute", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1);
    const groups = numbers[0].groups.slice(0, 3);
    const segmentId = await segment(t, [numbers[0].id], groups);
    const runAt = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const createdAt = new Date(runAt.getTime() - 2 * 60_000);
    const { db, provider } = await getServices();
    const caller = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: t.tenantId, userId: "u", role: "owner" },
      now: createdAt,
    });
    const created = await caller.groupActions.create({
      id_segment: segmentId,
      action: { type: "close_messages" },
      scheduled_at: formatInTimeZone(runAt, "America/Sao_Paulo", "dd/MM/yyyy - HH:mm"),
    });
    const done = await finished(t, created.id_action, 30_000);
    expect(done.json.status).toBe("completed");
    expect(Date.parse(done.json.scheduled_at)).toBe(runAt.getTime());
    const startedAt = Date.parse(done.json.started_at);
    expect(startedAt).toBeGreaterThanOrEqual(runAt.getTime());
    expect(startedAt).toBeLessThan(runAt.getTime() + 60_000 + 15_000);
  });

  it("cancel before it starts applies nothing; a finished action answers 409; another tenant's is 404", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1);
    const groups = numbers[0].groups.slice(0, 3);
    const segmentId = await segment(t, [numbers[0].id], groups);
    const later = formatInTimeZone(new Date(Date.now() + 10 * 60_000), "America/Sao_Paulo", "dd/MM/yyyy - HH:mm");
    const id = await createAction(t, { id_segment: segmentId, action: { type: "close_messages" }, scheduled_at: later });
    expect((await info(t, id)).json).toMatchObject({ status: "scheduled", groups: { total: 3, done: 0, failed: 0, pending: 3 } });
    const other = await newTenant(server.url);
    expectEnvelope(await other("PUT", `/api/external/cancel-group-action/${id}`), 404, "Not Found");
    expectEnvelope(await other("GET", `/api/external/info-group-action/${id}`), 404, "Not Found");
    const canceled = await t("PUT", `/api/external/cancel-group-action/${id}`);
    expect(canceled.status, canceled.text).toBe(200);
    expect(canceled.json).toMatchObject({ success: true, id_action: id, status: "canceled" });
    const after = (await info(t, id)).json;
    expect(after.results.map((r: { state: string }) => r.state)).toEqual(["canceled", "canceled", "canceled"]);
    expect(after.groups.pending).toBe(0);
    for (const g of groups) expect((await simGroup(t, g)).changes).toHaveLength(0);
    expectEnvelope(await t("PUT", `/api/external/cancel-group-action/${id}`), 409, "Conflict");
    expectEnvelope(await t("GET", "/api/external/info-group-action/action_00000000-0000-4000-8000-000000000000"), 404, "Not Found");
  });

  it("a launch target includes a group created after the action was scheduled", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1);
    const launch = await t("POST", "/api/external/create-launch", {
      name: "Turma 8",
      id_channel: [numbers[0].id],
      group_template: { name: "Turma 8 #{n}" },
      auto_create: false,
      initial_groups: 2,
    });
    expect(launch.status, launch.text).toBe(201);
    const launchId = launch.json.id_launch as string;
    // The engine is stopped while the action is due and a third group is made: it starts with the launch's groups then.
    await runner.stop();
    let restarted = false;
    try {
      const id = await createAction(t, { id_launch: launchId, action: { type: "set_subject", subject: "Turma 8 #{n} — Carrinho aberto" } });
      expect((await info(t, id)).json.groups.total).toBe(2);
      const added = await t("POST", `/api/external/launch-groups/${launchId}`, { create: 1 });
      expect(added.status, added.text).toBe(200);
      await startRunner();
      restarted = true;
      const done = await finished(t, id);
      expect(done.json).toMatchObject({ status: "completed", id_launch: launchId, groups: { total: 3, done: 3, failed: 0, pending: 0 } });
      const groups = (await t("GET", `/api/external/info-launch/${launchId}`)).json.groups as { id_group: string; position: number }[];
      expect(groups).toHaveLength(3);
      for (const g of groups) expect((await simGroup(t, g.id_group)).subject).toBe(`Turma 8 #${g.position} — Carrinho aberto`);
      const list = await t("GET", `/api/external/list-group-actions?id_launch=${launchId}`);
      expect(list.json.actions.map((x: { id_action: string }) => x.id_action)).toEqual([id]);
    } finally {
      if (!restarted) await startRunner();
    }
  });
});

describe("exactly once across a crash", () => {
  it("a group left being applied by a process that died (its answer lost, the change made) is read back, not changed again", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1);
    const [a] = numbers;
    const groups = a.groups.slice(6, 10);
    const segmentId = await segment(t, [a.id], groups);
    await runner.stop();
    let restarted = false;
    try {
      const id = await createAction(t, { id_segment: segmentId, action: { type: "close_messages" } });
      // What a process that died mid-action leaves: the action running under its lease (now expired), one group claimed
      // and changed on the platform, its answer never recorded.
      const { db, provider } = await getServices();
      await provider.changeGroup(a.id, groups[1], { kind: "announce", on: true });
      await db
        .update(groupActionGroups)
        .set({ state: "applying", channelId: a.id })
        .where(and(eq(groupActionGroups.actionId, id), eq(groupActionGroups.groupId, groups[1])));
      await db
        .update(groupActions)
        .set({ status: "running", startedAt: new Date(), leaseUntil: new Date(Date.now() - 1000) })
        .where(eq(groupActions.id, id));
      await startRunner();
      restarted = true;
      const done = await finished(t, id);
      expect(done.json.groups).toEqual({ total: 4, done: 4, failed: 0, pending: 0 });
      for (const g of groups) {
        const s = await simGroup(t, g);
        expect(s.announce).toBe(true);
        expect(s.changes).toHaveLength(1);
      }
    } finally {
      if (!restarted) await startRunner();
    }
  });
});

describe("bad input is a 400 naming the field", () => {
  it("target, type, fields, scheduled_at, own numbers", async () => {
    const { t, numbers } = await tenantWithNumbers(server.url, 1);
    const segmentId = await segment(t, [numbers[0].id], numbers[0].groups.slice(0, 1));
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await t("POST", "/api/external/create-group-action", body);
      expect(res.status, res.text).toBe(400);
      expect(res.json.message).toContain(field);
    };
    const launchId = "launch_00000000-0000-4000-8000-000000000000";
    await bad({ action: { type: "close_messages" } }, "id_segment");
    await bad({ id_segment: segmentId, id_launch: launchId, action: { type: "close_messages" } }, "id_segment");
    await bad({ id_segment: segmentId, action: { type: "shout" } }, "action.type");
    await bad({ id_segment: segmentId, action: { type: "set_subject", subject: "x".repeat(101) } }, "action.subject");
    await bad({ id_segment: segmentId, action: { type: "set_description", description: "x".repeat(2049) } }, "action.description");
    await bad({ id_segment: segmentId, action: { type: "promote", participants: [] } }, "action.participants");
    await bad(
      { id_segment: segmentId, action: { type: "promote", participants: Array.from({ length: 21 }, (_, i) => `55119876500${10 + i}`) } },
      "action.participants",
    );
    await bad({ id_segment: segmentId, action: { type: "remove", participants: [numbers[0].phone] } }, "action.participants");
    await bad({ id_segment: segmentId, action: { type: "set_picture", picture_url: "http://example.com/a.png" } }, "action.picture_url");
    await bad({ id_segment: segmentId, action: { type: "set_picture", picture_url: "https://127.0.0.1/a.png" } }, "action.picture_url");
    await bad({ id_segment: segmentId, action: { type: "close_messages" }, scheduled_at: "01/01/2020 - 10:00" }, "scheduled_at");
    expectEnvelope(await t("POST", "/api/external/create-group-action", { id_launch: launchId, action: { type: "close_messages" } }), 404, "Not Found");
  });
});
