/**
 * Repeating campaigns (docs/series.md) over the REST facade, with the series-runs job's real pass. A series always
 * has its next run as a scheduled campaign: create-campaign answers the first run's id_campaign. The clock is
 * injected where the codebase takes one: a series is created through the tRPC caller with `now` two minutes before
 * its run (the same procedure the REST path calls), so "two minutes later" is the real time, with no 2-minute wait;
 * the run is then sent by the in-process runner as any scheduled campaign, and the job's pass makes the next one.
 */
import { formatInTimeZone } from "date-fns-tz";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobTimer } from "../../inngest/in-process/job-timer";
import { seriesRunsJob } from "../../inngest/jobs/series-runs";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { campaignSeries, campaigns } from "../../db/schema";
import { newId } from "../../server/ids";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { tenantWithSegment } from "../campaigns";
import { startChildServer } from "../child-server";
import { expectEnvelope, newTenant, until, waitFor, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { baseDatabaseUrl } from "../postgres-databases";

const onPostgres = Boolean(baseDatabaseUrl());
const tz = "America/Sao_Paulo";
const weekdayKeys = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

let server: TestServer;
let runner: InProcessRunner;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  runner = new InProcessRunner(await getServices(), { maxSleepMs: 50 }).start();
  // Unpaced (tenantWithSegment sets it on each segment it makes).
  api = await newTenant(server.url, { channelLimit: 50 });
});
afterAll(async () => {
  await runner.stop();
  await server.close();
});

/** A segment of `count` groups on a new channel of the tenant (test/campaigns.ts; unpaced). */
const segmentWithGroups = async (t: Api, count: number) => (await tenantWithSegment(server.url, count, 10, t)).segment;

const ddmmyyyy = (at: Date) => formatInTimeZone(at, tz, "dd/MM/yyyy");
const weekdayOf = (at: Date) => weekdayKeys[Number(formatInTimeZone(at, tz, "i")) - 1];

/**
 * A series whose run is at the start of the current minute (today's weekday), created through the tRPC caller with
 * the clock two minutes earlier: as if made two minutes ago "for now + 2 min". `createdMinutesAgo` moves it further.
 */
async function seriesDueNow(t: Api, segment: string, opts: { createdMinutesAgo?: number; days?: string[]; message?: string } = {}) {
  const runAt = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const createdAt = new Date(runAt.getTime() - (opts.createdMinutesAgo ?? 2) * 60_000);
  const { db, provider } = await getServices();
  const caller = createCallerFactory(appRouter)({
    db,
    provider,
    caller: { kind: "session", tenantId: t.tenantId, userId: "u", role: "owner" },
    now: createdAt,
  });
  const created = await caller.campaigns.createMessage({
    name: "Aquecimento diário",
    id_segment: segment,
    message: opts.message ?? "Hoje às 19h tem aula!",
    mention_all: false,
    message_type: "text",
    repeat: {
      days: (opts.days ?? [weekdayOf(runAt)]) as (typeof weekdayKeys)[number][],
      time: formatInTimeZone(runAt, tz, "HH:mm"),
      until: ddmmyyyy(new Date(runAt.getTime() + 8 * 86_400_000)),
    },
  });
  expect(created).toMatchObject({ status: "pending" });
  expect(created.id_campaign).toMatch(/^campaign_/);
  // Its first run: this minute (made 2 minutes before it), or, made days ago every day, that day's.
  expect(Date.parse(created.scheduled_at as string)).toBe(opts.createdMinutesAgo ? createdAt.getTime() + 2 * 60_000 : runAt.getTime());
  return { id: created.id_series as string, runAt, runId: created.id_campaign };
}

/** A series through REST whose first run is today's weekday at the start of the minute 1–2 minutes from now. */
async function futureSeries(t: Api, segment: string) {
  const runAt = new Date(Math.floor((Date.now() + 120_000) / 60_000) * 60_000);
  const res = await t("POST", "/api/external/create-campaign/message", {
    name: "Lembrete",
    id_segment: segment,
    message: "Antes",
    repeat: { days: [weekdayOf(runAt)], time: formatInTimeZone(runAt, tz, "HH:mm"), until: ddmmyyyy(new Date(runAt.getTime() + 8 * 86_400_000)) },
  });
  expect(res.status).toBe(201);
  expect(Date.parse(res.json.scheduled_at)).toBe(runAt.getTime());
  return { id: res.json.id_series as string, runAt, runId: res.json.id_campaign as string };
}

/** A series' run at `at`, among its campaigns (list-campaigns). */
const runAtTime = <T extends { scheduled_at: string | null }>(runs: T[], at: number) => runs.filter((r) => Date.parse(r.scheduled_at as string) === at);

async function seriesOf(t: Api, id: string) {
  const res = await t("GET", "/api/external/list-series");
  expect(res.status).toBe(200);
  return res.json.series.find((s: { id_series: string }) => s.id_series === id);
}

async function runsOf(t: Api, id: string) {
  const { db, provider } = await getServices();
  const caller = createCallerFactory(appRouter)({
    db,
    provider,
    caller: { kind: "session", tenantId: t.tenantId, userId: "u", role: "owner" },
    now: new Date(),
  });
  return (await caller.campaigns.list()).filter((c) => c.id_series === id);
}

async function jobPass(now = new Date()) {
  await new JobTimer(seriesRunsJob, await getServices()).runOnce(now);
}

describe("create-campaign with repeat", () => {
  it("creates a series (201) and its first run: id_campaign is that scheduled campaign (list-campaigns), id_series; list-series shows it", async () => {
    const segment = await segmentWithGroups(api, 2);
    const until = ddmmyyyy(new Date(Date.now() + 30 * 86_400_000));
    const res = await api("POST", "/api/external/create-campaign/message", {
      name: "Todo dia",
      id_segment: segment,
      message: "Bom dia!",
      repeat: { days: ["monday", "wednesday"], time: "19:00", until },
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ success: true, name: "Todo dia", status: "pending", message_type: "text" });
    expect(res.json.id_campaign).toMatch(/^campaign_[0-9a-f-]{36}$/);
    expect(res.json.id_series).toMatch(/^series_[0-9a-f-]{36}$/);
    expect(res.json.scheduled_at).toMatch(/T19:00:00-03:00$/);
    // The first run is a scheduled campaign of the series, listed as any campaign.
    expect(await runsOf(api, res.json.id_series)).toEqual([
      expect.objectContaining({ id_campaign: res.json.id_campaign, status: "pending", scheduled_at: res.json.scheduled_at, id_series: res.json.id_series }),
    ]);
    const info = await api("GET", `/api/external/info-campaign/${res.json.id_campaign}`);
    expect(info.json).toMatchObject({ status: "pending", scheduled_at: res.json.scheduled_at, id_series: res.json.id_series, groups: { total: 2 } });
    const s = await seriesOf(api, res.json.id_series);
    expect(s).toMatchObject({
      name: "Todo dia",
      status: "active",
      message_type: "text",
      id_segment: segment,
      message: "Bom dia!",
      repeat: { days: ["monday", "wednesday"], time: "19:00", until },
      next_run_at: res.json.scheduled_at,
      next_id_campaign: res.json.id_campaign,
      last_run_at: null,
      runs: 0,
      last_id_campaign: null,
    });
    expect(["monday", "wednesday"]).toContain(weekdayOf(new Date(s.next_run_at)));
  });

  it("a carousel takes repeat too", async () => {
    const segment = await segmentWithGroups(api, 1);
    const res = await api("POST", "/api/external/create-campaign/carousel", {
      name: "Cartões",
      id_segment: segment,
      carousel_data: { message: "Veja", cards: [{ image_url: "https://example.com/a.jpg", text: "A", buttons: [] }] },
      repeat: { days: ["friday"], time: "08:30", until: ddmmyyyy(new Date(Date.now() + 30 * 86_400_000)) },
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ message_type: "carousel", cards_count: 1 });
    expect(res.json.id_campaign).toMatch(/^campaign_/);
    expect((await seriesOf(api, res.json.id_series)).message_type).toBe("carousel");
  });

  it("400 naming the field for a bad repeat, and with scheduled_at", async () => {
    const segment = await segmentWithGroups(api, 1);
    const future = ddmmyyyy(new Date(Date.now() + 30 * 86_400_000));
    const cases: [unknown, string][] = [
      [{ days: [], time: "19:00", until: future }, "repeat.days"],
      [{ days: ["someday"], time: "19:00", until: future }, "repeat.days"],
      [{ days: ["monday", "monday"], time: "19:00", until: future }, "repeat.days"],
      [{ time: "19:00", until: future }, "repeat.days"],
      [{ days: ["monday"], time: "25:00", until: future }, "repeat.time"],
      [{ days: ["monday"], time: 1900, until: future }, "repeat.time"],
      [{ days: ["monday"], time: "19:00", until: "2026-12-01" }, "repeat.until"],
      [{ days: ["monday"], time: "19:00", until: "31/02/2030" }, "repeat.until"],
      [{ days: ["monday"], time: "19:00", until: "01/01/2020" }, "repeat.until"],
      [{ days: ["monday"], time: "19:00", until: future, every: 2 }, "repeat"],
      ["daily", "repeat"],
    ];
    for (const [repeat, field] of cases) {
      const res = await api("POST", "/api/external/create-campaign/message", { name: "x", id_segment: segment, message: "x", repeat });
      const body = expectEnvelope(res, 400, "Bad Request");
      expect(body.message, JSON.stringify(repeat)).toContain(field);
    }
    const both = await api("POST", "/api/external/create-campaign/message", {
      name: "x",
      id_segment: segment,
      message: "x",
      scheduled_at: `${future} - 10:00`,
      repeat: { days: ["monday"], time: "19:00", until: future },
    });
    expect(expectEnvelope(both, 400, "Bad Request").message).toContain("scheduled_at");
    // Until today but the day's time already passed and today not chosen: no run at all.
    const today = ddmmyyyy(new Date());
    const otherDay = weekdayKeys[(weekdayKeys.indexOf(weekdayOf(new Date())) + 1) % 7];
    const none = await api("POST", "/api/external/create-campaign/message", {
      name: "x",
      id_segment: segment,
      message: "x",
      repeat: { days: [otherDay], time: "19:00", until: today },
    });
    expect(expectEnvelope(none, 400, "Bad Request").message).toContain("repeat");
  });

  it("404 for another tenant's segment, series or an unknown one; 409 editing a stopped series", async () => {
    const other = await newTenant(server.url);
    const theirSegment = await segmentWithGroups(other, 1);
    const future = ddmmyyyy(new Date(Date.now() + 30 * 86_400_000));
    const repeat = { days: ["monday"], time: "19:00", until: future };
    expectEnvelope(await api("POST", "/api/external/create-campaign/message", { name: "x", id_segment: theirSegment, message: "x", repeat }), 404, "Not Found");
    const theirs = await other("POST", "/api/external/create-campaign/message", { name: "x", id_segment: theirSegment, message: "x", repeat });
    expectEnvelope(await api("PUT", `/api/external/edit-series/${theirs.json.id_series}`, { status: "paused" }), 404, "Not Found");
    expectEnvelope(await api("DELETE", `/api/external/delete-series/${theirs.json.id_series}`), 404, "Not Found");
    expect((await api("GET", "/api/external/list-series")).json.series.map((s: { id_series: string }) => s.id_series)).not.toContain(theirs.json.id_series);
    expect(expectEnvelope(await api("PUT", "/api/external/edit-series/series_x", { status: "paused" }), 400, "Bad Request").message).toContain("id_series");
    expect(expectEnvelope(await other("PUT", `/api/external/edit-series/${theirs.json.id_series}`, {}), 400, "Bad Request").message).toMatch(
      /status, name, message, repeat/,
    );
    expect(
      expectEnvelope(await other("PUT", `/api/external/edit-series/${theirs.json.id_series}`, { status: "stopped" }), 400, "Bad Request").message,
    ).toContain("status");
    expectEnvelope(await api("GET", `/api/external/info-campaign/${theirs.json.id_campaign}`), 404, "Not Found");
    const stopped = await other("DELETE", `/api/external/delete-series/${theirs.json.id_series}`);
    expect(stopped.status).toBe(200);
    expect(stopped.json.series).toMatchObject({ status: "stopped", next_run_at: null, next_id_campaign: null });
    // Its future run is canceled.
    expect((await other("GET", `/api/external/info-campaign/${theirs.json.id_campaign}`)).json.status).toBe("canceled");
    expect(expectEnvelope(await other("PUT", `/api/external/edit-series/${theirs.json.id_series}`, { status: "active" }), 409, "Conflict").code).toBe(
      "series_stopped",
    );
  });
});

describe("series limits (docs/series.md#limits)", () => {
  it("until at most 2 years ahead: 400 naming repeat.until, on create and on edit", async () => {
    const segment = await segmentWithGroups(api, 1);
    const tooFar = ddmmyyyy(new Date(Date.now() + 3 * 365 * 86_400_000));
    const far = await api("POST", "/api/external/create-campaign/message", {
      name: "x",
      id_segment: segment,
      message: "x",
      repeat: { days: ["monday"], time: "19:00", until: "31/12/9999" },
    });
    expect(expectEnvelope(far, 400, "Bad Request").message).toContain("repeat.until");
    const ok = await api("POST", "/api/external/create-campaign/message", {
      name: "x",
      id_segment: segment,
      message: "x",
      repeat: { days: weekdayKeys, time: "19:00", until: ddmmyyyy(new Date(Date.now() + 700 * 86_400_000)) },
    });
    expect(ok.status).toBe(201);
    const edit = await api("PUT", `/api/external/edit-series/${ok.json.id_series}`, { repeat: { until: tooFar } });
    expect(expectEnvelope(edit, 400, "Bad Request").message).toContain("repeat.until");
  });

  it("at most 50 series per account that are not stopped: the 51st is 403 with the envelope, nothing made; a stopped one frees a place", async () => {
    const t = await newTenant(server.url, { channelLimit: 5 });
    const segment = await segmentWithGroups(t, 1);
    const { db } = await getServices();
    const schedule = { days: ["monday" as const], time: "19:00", until: formatInTimeZone(new Date(Date.now() + 30 * 86_400_000), tz, "yyyy-MM-dd") };
    const seeded = Array.from({ length: 51 }, (_, i) => ({
      id: newId("series"),
      tenantId: t.tenantId,
      segmentId: segment,
      name: `s${i}`,
      // 49 active, 1 paused, 1 stopped (not counted).
      status: (i === 49 ? "paused" : i === 50 ? "stopped" : "active") as "active" | "paused" | "stopped",
      messageType: "text" as const,
      content: { message: "x" },
      schedule,
    }));
    await db.insert(campaignSeries).values(seeded);
    const repeat = { days: ["monday"], time: "19:00", until: ddmmyyyy(new Date(Date.now() + 30 * 86_400_000)) };
    const refused = await t("POST", "/api/external/create-campaign/message", { name: "x", id_segment: segment, message: "x", repeat });
    const body = expectEnvelope(refused, 403, "Forbidden");
    expect(body).toMatchObject({ code: "series_limit", current: 50, max: 50 });
    expect((await t("GET", "/api/external/list-series")).json.series).toHaveLength(51);
    expect(await db.select().from(campaigns).where(eq(campaigns.tenantId, t.tenantId))).toHaveLength(0);
    expect((await t("DELETE", `/api/external/delete-series/${seeded[0].id}`)).status).toBe(200);
    expect((await t("POST", "/api/external/create-campaign/message", { name: "x", id_segment: segment, message: "x", repeat })).status).toBe(201);
  });
});

describe("runs of a series", () => {
  it("a series with today's weekday at now + 2 min runs once: one campaign carrying id_series, sent to every group once", async () => {
    const segment = await segmentWithGroups(api, 3);
    const { id, runAt, runId } = await seriesDueNow(api, segment);
    // Before its time (the job's clock a minute before the run): the first run only, made with the series.
    await jobPass(new Date(runAt.getTime() - 60_000));
    expect((await runsOf(api, id)).map((r) => r.id_campaign)).toEqual([runId]);
    // Its time (and later passes): the run goes once, and the next one (next week) is made once, ahead of time.
    await jobPass();
    await jobPass();
    await jobPass(new Date(Date.now() + 30_000));
    const runs = await runsOf(api, id);
    expect(runs).toHaveLength(2);
    expect(runAtTime(runs, runAt.getTime()).map((r) => r.id_campaign)).toEqual([runId]);
    const [next] = runAtTime(runs, runAt.getTime() + 7 * 86_400_000);
    expect(next).toMatchObject({ status: "pending", id_series: id });
    const info = await until(
      () => api("GET", `/api/external/info-campaign/${runId}`),
      (r) => r.json.status === "completed",
    );
    expect(info.json).toMatchObject({ status: "completed", id_series: id, name: "Aquecimento diário", groups: { total: 3, sent: 3, pending: 0, failed: 0 } });
    expect(info.json.scheduled_at).toBe(formatInTimeZone(runAt, tz, "yyyy-MM-dd'T'HH:mm:ssXXX"));
    const log = await api("GET", `/api/simulator/messages?id_campaign=${runId}`);
    expect(log.json.messages).toHaveLength(3);
    expect(log.json.messages.every((m: { text: string }) => m.text === "Hoje às 19h tem aula!")).toBe(true);
    const s = await seriesOf(api, id);
    expect(s).toMatchObject({ runs: 1, last_id_campaign: runId, last_run_at: info.json.scheduled_at, next_id_campaign: next.id_campaign });
    // The next run: the same weekday next week.
    expect(Date.parse(s.next_run_at)).toBe(runAt.getTime() + 7 * 86_400_000);
  });

  it("paused: its future run is canceled and no run happens; resuming after its time does not catch it up", async () => {
    const segment = await segmentWithGroups(api, 1);
    const { id, runAt, runId } = await futureSeries(api, segment);
    const paused = await api("PUT", `/api/external/edit-series/${id}`, { status: "paused" });
    expect(paused.status).toBe(200);
    expect(paused.json).toMatchObject({ success: true, updated: ["status"], series: { status: "paused", next_run_at: null, next_id_campaign: null } });
    expect((await api("GET", `/api/external/info-campaign/${runId}`)).json.status).toBe("canceled");
    // Its time comes (the job's clock past it): no run is made, nothing is sent.
    await jobPass(new Date(runAt.getTime() + 1_000));
    expect((await runsOf(api, id)).map((r) => [r.id_campaign, r.status])).toEqual([[runId, "canceled"]]);
    // Resumed after its time (the caller's clock): the next occurrence, next week; today's is not caught up.
    const { db, provider } = await getServices();
    const later = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: api.tenantId, userId: "u", role: "owner" },
      now: new Date(runAt.getTime() + 1_000),
    });
    const resumed = await later.series.edit({ id_series: id, status: "active" });
    expect(resumed.series).toMatchObject({ status: "active" });
    expect(Date.parse(resumed.series.next_run_at as string)).toBe(runAt.getTime() + 7 * 86_400_000);
    const runs = await runsOf(api, id);
    expect(runs).toHaveLength(2);
    expect(runs.find((r) => r.id_campaign === resumed.series.next_id_campaign)).toMatchObject({ status: "pending" });
    expect((await api("GET", `/api/simulator/messages?id_campaign=${runId}`)).json.messages).toHaveLength(0);
  });

  it("a new text changes the future run in place; a new schedule cancels it and makes the new schedule's next run", async () => {
    const segment = await segmentWithGroups(api, 1);
    const { id, runAt, runId } = await futureSeries(api, segment);
    const edited = await api("PUT", `/api/external/edit-series/${id}`, { message: "Depois", name: "Novo nome" });
    expect(edited.json.updated).toEqual(["message", "name"]);
    expect(edited.json.series.next_id_campaign).toBe(runId);
    expect((await api("GET", `/api/external/info-campaign/${runId}`)).json).toMatchObject({ status: "pending", name: "Novo nome" });
    const { db } = await getServices();
    const [row] = await db.select({ content: campaigns.content }).from(campaigns).where(eq(campaigns.id, runId));
    expect(row.content).toMatchObject({ message: "Depois" });
    const moved = await api("PUT", `/api/external/edit-series/${id}`, { repeat: { time: "23:59" } });
    expect(moved.json.updated).toEqual(["repeat.time"]);
    expect(moved.json.series.repeat.time).toBe("23:59");
    expect(Date.parse(moved.json.series.next_run_at)).toBeGreaterThan(runAt.getTime());
    expect(moved.json.series.next_id_campaign).not.toBe(runId);
    expect((await api("GET", `/api/external/info-campaign/${runId}`)).json.status).toBe("canceled");
    const next = await api("GET", `/api/external/info-campaign/${moved.json.series.next_id_campaign}`);
    expect(next.json).toMatchObject({ status: "pending", name: "Novo nome", scheduled_at: moved.json.series.next_run_at, id_series: id });
  });

  it("a server down across several occurrences: its scheduled run goes once, the next is the first future one (no catch-up)", async () => {
    const segment = await segmentWithGroups(api, 1);
    // Made three days ago, every day at this minute, its first run then; the server down since: the runs of two days
    // ago, yesterday and today passed. The run it had scheduled goes once; the next is tomorrow's, none caught up.
    const { id, runAt, runId } = await seriesDueNow(api, segment, { createdMinutesAgo: 3 * 24 * 60 + 2, days: [...weekdayKeys] });
    await jobPass();
    await jobPass();
    const runs = await runsOf(api, id);
    expect(runs.map((r) => Date.parse(r.scheduled_at as string)).sort()).toEqual([runAt.getTime() - 3 * 86_400_000, runAt.getTime() + 86_400_000]);
    await until(
      () => api("GET", `/api/external/info-campaign/${runId}`),
      (r) => r.json.status === "completed",
    );
    expect((await api("GET", `/api/simulator/messages?id_campaign=${runId}`)).json.messages).toHaveLength(1);
  });

  it("two job passes at once (two processes' timers) make one run", async () => {
    const segment = await segmentWithGroups(api, 1);
    const { id, runAt } = await seriesDueNow(api, segment);
    await Promise.all([jobPass(), jobPass(), jobPass()]);
    const runs = await runsOf(api, id);
    expect(runs).toHaveLength(2);
    expect(runAtTime(runs, runAt.getTime() + 7 * 86_400_000)).toHaveLength(1);
  });

  if (!onPostgres) console.log("[series] server restart in child processes: skipped on PGlite (one process owns an embedded database; set DATABASE_URL)");
  it.skipIf(!onPostgres)(
    "a server restart across its time gives one run, not two (child server processes running the series job)",
    async () => {
      const segment = await segmentWithGroups(api, 2);
      // Its time passes while no server runs the job (made 2 minutes before it, by the injected clock).
      const { id, runId } = await seriesDueNow(api, segment);
      const first = await startChildServer("198.51.100.41", { jobs: ["series-runs"] });
      try {
        await waitFor("the next run made by the first server", async () => (await runsOf(api, id)).length > 1, 30_000);
      } finally {
        await first.close();
      }
      const second = await startChildServer("198.51.100.42", { jobs: ["series-runs"] });
      try {
        // Its first pass (2 s after start) and several more.
        await new Promise((r) => setTimeout(r, 4_000));
        expect(await runsOf(api, id)).toHaveLength(2);
      } finally {
        await second.close();
      }
      // Two servers up at once when another series falls due: still one run.
      const other = await seriesDueNow(api, segment);
      const both = await Promise.all([
        startChildServer("198.51.100.43", { jobs: ["series-runs"] }),
        startChildServer("198.51.100.44", { jobs: ["series-runs"] }),
      ]);
      try {
        await waitFor("the next run of the second series", async () => (await runsOf(api, other.id)).length > 1, 30_000);
        await new Promise((r) => setTimeout(r, 3_000));
        expect(await runsOf(api, other.id)).toHaveLength(2);
      } finally {
        await Promise.all(both.map((c) => c.close()));
      }
      const run = { id_campaign: runId };
      const info = await until(
        () => api("GET", `/api/external/info-campaign/${run.id_campaign}`),
        (r) => r.json.status === "completed",
      );
      expect(info.json.groups).toMatchObject({ total: 2, sent: 2 });
      expect((await api("GET", `/api/simulator/messages?id_campaign=${run.id_campaign}`)).json.messages).toHaveLength(2);
    },
    120_000,
  );
});
