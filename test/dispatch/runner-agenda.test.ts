/**
 * The embedded runner's agenda (inngest/in-process/dispatch-runner.ts, docs/dispatch.md#fairness-between-tenants): a step it
 * ran tells it when the campaign runs next, and a campaign created here is woken with its due time, so
 * a paced campaign's next steps start when they fall due without a look at the database first. The looks
 * (dueWork) come at most every `maxSleepMs`, and find what the agenda does not know: here a campaign
 * created before the runner started (as after a restart). The looks are counted on the runner's own
 * database handle; before the agenda, every finished step was followed by one. A paced step starts a
 * second before its pause ends and waits for it itself (the lead): a slow lease does not lengthen the
 * pause, and a pause by the user while the step waits stops it.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../db/client";
import { InProcessRunner, type RunnerOptions } from "../../inngest/in-process/dispatch-runner";
import type { DispatchDeps } from "../../server/dispatch/run-campaign-step";
import { getServices } from "../../server/services";
import { createCampaign, tenantWithSegment } from "../campaigns";
import { until, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let runner: InProcessRunner | undefined;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await runner?.stop();
  await server.close();
});

/** The database handle with its dueWork looks counted (the one statement that reads this), each answered `delayMs` late. */
function countingLooks(db: Db, delayMs = 0) {
  const counted = { looks: 0 };
  const dialect = (db as unknown as { dialect: { sqlToQuery(q: unknown): { sql: string } } }).dialect;
  const handle = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== "execute") return Reflect.get(target, prop, receiver);
      return (query: unknown) => {
        const text = dialect.sqlToQuery(query).sql;
        if (!text.includes(`greatest("campaigns"."next_run_at", "campaigns"."lease_until")`)) return target.execute(query as never);
        counted.looks++;
        return new Promise((res) => setTimeout(res, delayMs)).then(() => target.execute(query as never));
      };
    },
  });
  return { handle, counted };
}

/** Runs `body` with a runner over `deps` started, and stops it after, whatever the body threw. */
async function withRunner(deps: DispatchDeps, opts: RunnerOptions, body: () => Promise<void>) {
  runner = new InProcessRunner(deps, opts).start();
  try {
    await body();
  } finally {
    await runner.stop();
    runner = undefined;
  }
}

/** A tenant with a segment of 4 groups, paced at `pause` s, one message per loop (3 pauses). */
async function pacedTenant(pause: number) {
  const t = await tenantWithSegment(server.url, 4, 1);
  const paced = { dispatch_rates: { min_dispatch_rate: pause, max_dispatch_rate: pause, dispatches_per_loop: 1 } };
  expect((await t.api("PATCH", "/api/external/edit-settings", paced)).status).toBe(200);
  return t;
}

/** The campaign's send times (from the simulator's log) once it has completed, and the gaps between them. */
async function sendTimes(api: Api, id: string, timeoutMs: number) {
  const done = await until(
    () => api("GET", `/api/external/info-campaign/${id}`),
    (r) => r.json.status === "completed",
    timeoutMs,
  );
  expect(done.json).toMatchObject({ status: "completed", groups: { total: 4, sent: 4, failed: 0 } });
  const log = (await api("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages as { sent_at: string }[];
  const times = log.map((m) => Date.parse(m.sent_at)).sort((a, b) => a - b);
  expect(times).toHaveLength(4);
  return { times, gaps: times.slice(1).map((x, i) => x - times[i]) };
}

describe("the runner's agenda", () => {
  it("paced steps start from the agenda, pacing kept; a look every maxSleepMs finds a campaign created before the start", async () => {
    const services = await getServices();
    const { handle, counted } = countingLooks(services.db);
    // Paced at 1 s, one message per loop: 4 groups are 3 pauses.
    const before = await pacedTenant(1);
    const early = await createCampaign(before.api, before.segment);

    await withRunner({ ...services, db: handle }, { maxSleepMs: 20_000 }, async () => {
      const after = await pacedTenant(1);
      const late = await createCampaign(after.api, after.segment);

      for (const [api, id] of [
        [before.api, early.id_campaign],
        [after.api, late.id_campaign],
      ] as const) {
        const { gaps } = await sendTimes(api, id, 15_000);
        console.log(`[agenda] ${id}: gaps ${gaps.join(", ")} ms`);
        expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000);
        // Each next step came from the agenda, not from a look (the next is 20 s away): far below that,
        // with room for a loaded CI machine (1.65 s seen on PGlite).
        expect(Math.max(...gaps)).toBeLessThan(5000);
      }
      // 8 paced steps and their finishing ones ran; the next periodic look is 20 s away. The database was
      // looked at on start, and once more when the second tenant's channel connected (a wake-up without a
      // campaign: any campaign may be due). The runner before the agenda looked after every step (19 in this test on 7571f1e).
      console.log(`[agenda] looks at the database: ${counted.looks}`);
      expect(counted.looks).toBeLessThanOrEqual(2);
    });
  }, 30_000);

  it("a slow look does not hold up the steps on the agenda", async () => {
    const services = await getServices();
    // Every look answers 5 s late (as one waiting for a connection the database dropped).
    const { handle } = countingLooks(services.db, 5000);
    await withRunner({ ...services, db: handle }, { maxSleepMs: 1000 }, async () => {
      const t = await pacedTenant(1);
      const createdAt = Date.now();
      const { id_campaign: id } = await createCampaign(t.api, t.segment);
      const { times, gaps } = await sendTimes(t.api, id, 20_000);
      console.log(`[agenda] with 5 s looks: first send ${times[0] - createdAt} ms after the create request, gaps ${gaps.join(", ")} ms`);
      // A round that waited for its look would start each step 5 s late.
      expect(times[0] - createdAt).toBeLessThan(3000);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000);
      expect(Math.max(...gaps)).toBeLessThan(3000);
    });
  }, 40_000);

  it("a paced step takes its lease within the pause: a lease answering 800 ms late does not lengthen the gaps", async () => {
    const services = await getServices();
    const t = await pacedTenant(1);
    const { id_campaign: id } = await createCampaign(t.api, t.segment);
    // Every taking of this campaign's lease (lease_until from null) answers 800 ms late, in the database itself.
    await services.db.execute(
      sql.raw(`create or replace function slow_lease() returns trigger language plpgsql as $$
      begin perform pg_sleep(0.8); return new; end $$`),
    );
    await services.db.execute(
      sql.raw(`create trigger slow_lease before update on campaigns for each row
        when (new.id = '${id}' and old.lease_until is null and new.lease_until is not null) execute function slow_lease()`),
    );
    try {
      await withRunner(services, {}, async () => {
        const { gaps } = await sendTimes(t.api, id, 20_000);
        console.log(`[agenda] with 800 ms leases: gaps ${gaps.join(", ")} ms`);
        expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000);
        // A step that took its lease when the pause ended would send each message ≥ 1.8 s after the last.
        expect(Math.max(...gaps)).toBeLessThan(1600);
      });
    } finally {
      await services.db.execute(sql.raw("drop trigger if exists slow_lease on campaigns"));
    }
  }, 40_000);

  it("a campaign paused while its step waits out the pause sends nothing more", async () => {
    const services = await getServices();
    const t = await pacedTenant(3);
    await withRunner(services, {}, async () => {
      const { id_campaign: id } = await createCampaign(t.api, t.segment);
      const messages = async () => (await t.api("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages as { sent_at: string }[];
      const first = await until(messages, (m) => m.length === 1, 10_000);
      expect(first).toHaveLength(1);
      // The next step starts 1 s before the 3 s pause ends and waits: the pause lands while it waits.
      await new Promise((r) => setTimeout(r, Date.parse(first[0].sent_at) + 2400 - Date.now()));
      expect((await t.api("POST", `/api/external/pause-campaign/${id}`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 2000));
      expect(await messages()).toHaveLength(1);
      expect((await t.api("GET", `/api/external/info-campaign/${id}`)).json).toMatchObject({ status: "paused", groups: { sent: 1 } });
    });
  }, 30_000);
});
