/**
 * A launch's welcome across a crash (CONTRACT §8 "Welcome": "a restart neither repeats nor drops a batch";
 * docs/launches.md#welcome): a child server process running the welcome engine is killed with SIGKILL while its send of a
 * batch is in flight (the platform has the message, the answer is still on its way), more people join while no engine
 * runs, and another process is started on the same database. Each batch ends as exactly one message. PostgreSQL only:
 * an embedded PGlite database belongs to one process (the look-up of a batch left `sending` is proven on both databases
 * in launch-welcome.test.ts).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startChildServer } from "../child-server";
import { newTenant, waitFor } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { baseDatabaseUrl } from "../postgres-databases";

const onPostgres = Boolean(baseDatabaseUrl());
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const enc = encodeURIComponent;
const people = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `55119${prefix}${String(i).padStart(4, "0")}`);

if (!onPostgres) console.log("[welcome] SIGKILL of a child server mid-send: skipped on PGlite (one process owns an embedded database; set DATABASE_URL)");
it.skipIf(!onPostgres)(
  "SIGKILL mid-send and a restart: the batch in flight is not sent again, the batch made meanwhile is not dropped",
  async () => {
    const t = await newTenant(server.url);
    const ch = (await t("POST", "/api/external/create-channel", { name: "Número" })).json.id_channel as string;
    const created = await t("POST", "/api/external/create-launch", {
      name: "Boas-vindas",
      id_channel: [ch],
      group_template: { name: "Turma {n}", admins_only: false, admins: [] },
      welcome: { text: "Bem-vindos!", after_joins: 3, max_wait_minutes: 120 },
    });
    expect(created.status, created.text).toBe(201);
    const launchId = created.json.id_launch as string;
    const group = created.json.groups[0].id_group as string;
    // Polled at most twice a second: waitFor's 50 ms would spend the key's 300 requests a minute while the lease runs out.
    const paced = () => new Promise((r) => setTimeout(r, 450));
    const log = async () => (await t("GET", `/api/simulator/messages?id_group=${enc(group)}`)).json.messages as { mentions: string[] }[];
    const welcomesSent = async () => {
      const info = await t("GET", `/api/external/info-launch/${launchId}`);
      expect(info.status, info.text).toBe(200);
      return info.json.totals.welcomes_sent as number;
    };
    const join = async (who: string[]) => expect((await t("POST", `/api/simulator/groups/${enc(group)}/participants`, { join: who })).status).toBe(200);

    // The platform stores a message and answers 10 s later: the process dies in between.
    expect((await t("POST", "/api/simulator/latency", { ms: 10_000 })).status).toBe(200);
    const first = await startChildServer("198.51.100.71", { engines: ["welcomes"] });
    let firstAlive = true;
    try {
      const batch1 = people("1", 3);
      await join(batch1);
      await waitFor(
        "the first welcome on the platform",
        async () => {
          await paced();
          return (await log()).length === 1;
        },
        60_000,
      );
      process.kill(first.pid, "SIGKILL");
      firstAlive = false;
      expect(await welcomesSent()).toBe(0);
      // Joins while no engine runs: a batch to make after the restart.
      const batch2 = people("2", 3);
      await join(batch2);
      expect((await t("POST", "/api/simulator/latency", { ms: 0 })).status).toBe(200);

      const second = await startChildServer("198.51.100.72", { engines: ["welcomes"] });
      try {
        // The batch in flight is looked up once its lease (30 s) ran out; the other is made and sent.
        await waitFor(
          "both batches sent",
          async () => {
            await paced();
            return (await welcomesSent()) === 2;
          },
          120_000,
        );
      } finally {
        await second.close();
      }
      const messages = await log();
      expect(messages.map((m) => m.mentions)).toEqual([batch1, batch2]);
    } finally {
      if (firstAlive) await first.close();
    }
  },
  240_000,
);
