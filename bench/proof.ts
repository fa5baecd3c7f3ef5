/**
 * `npm run proof`: the long runs, one table at the end (docs/benchmarks.md#the-proof).
 *  1. scale: `npm run bench -- scale` in full (200 tenants × 20 paced groups + 20,000 at zero pacing);
 *     PROOF_SCALE_ARGS replaces its arguments (e.g. "--tenants 50 --big 5000");
 *  2. load: `npm run bench -- load` for PROOF_LOAD_SECONDS (60);
 *  3. soak: PROOF_SOAK_MINUTES (10) of campaigns sent one after the other by PROOF_SOAK_TENANTS (5) tenants
 *     (50 groups each, 5 per loop, 0–1 s pauses), with every webhook going to bench/webhook-receiver.ts,
 *     while the gateway and the receiver flap: every PROOF_FLAP_SECONDS (15) one tenant's channel goes
 *     offline (POST /api/simulator/channels/{id}/state) or the receiver is killed, and comes back 5–10 s
 *     later. At the end, with everything up: every campaign completed with exactly one message per group
 *     (the simulator's log), and every webhook delivery recorded by the server is `delivered` and reached
 *     the receiver (its webhook-id seen).
 * The database: PostgreSQL when DATABASE_URL is set (a fresh database beside it), else PGlite; `--db`.
 * Reports, and exits 1 if the soak's checks fail or the load saw errors other than 429.
 */
import { type ChildProcess, fork } from "node:child_process";
import os from "node:os";
import { apiClient, freePort, withDatabase } from "../e2e/server-process";
import { ensureBuild } from "../scripts/ensure-build";
import {
  dbKind,
  freshTarget,
  makeTenants,
  mapLimit,
  printTable,
  round,
  serverMeter,
  sleep,
  startBenchServer,
  stopServer,
  type DbKind,
  type ServerProcess,
} from "./common";
import { loadOptions, printLoad, runLoad } from "./load";
import { printScale, runScale, scaleOptions } from "./scale";

const log = (line: string) => console.log(`[proof] ${line}`);
const SOAK_GROUPS = 50;

interface SoakFigures {
  minutes: number;
  campaigns: number;
  messages: number;
  exactly_once: boolean;
  campaigns_not_completed: number;
  flaps_channel: number;
  flaps_receiver: number;
  webhooks_recorded: number;
  webhooks_delivered: number;
  webhooks_missing_at_receiver: number;
  webhook_duplicate_arrivals: number;
  server_cpu_percent: number;
  server_rss_peak_mb: number;
}

/** The receiver child on a fixed port; `down()` kills it, `up()` starts it again; arrivals survive restarts. */
function receiverOn(port: number) {
  const arrivals = new Map<string, number>();
  let child: ChildProcess | undefined;
  return {
    arrivals,
    async up() {
      child = fork(new URL("./webhook-receiver.ts", import.meta.url).pathname, [String(port)], { execArgv: ["--import", "tsx"] });
      await new Promise<void>((resolve, reject) => {
        child!.once("error", reject);
        child!.on("message", (m: { port?: number; id?: string }) => {
          if (m.port) resolve();
          else if (m.id) arrivals.set(m.id, (arrivals.get(m.id) ?? 0) + 1);
        });
      });
    },
    down() {
      child?.kill("SIGKILL");
      child = undefined;
    },
  };
}

export async function soak(kind: DbKind, minutes: number, tenantCount: number, flapSeconds: number): Promise<SoakFigures> {
  const target = await freshTarget(kind, "soak", log);
  let server: ServerProcess | undefined;
  const receiverPort = await freePort(5000);
  const receiver = receiverOn(receiverPort);
  try {
    const keys = await makeTenants(target, tenantCount, "soak");
    server = await startBenchServer(
      target,
      "soak",
      {
        SIMULATOR_GROUPS_PER_CHANNEL: String(SOAK_GROUPS),
        RATE_LIMIT_API_KEY_PER_MINUTE: "1000000",
        WEBHOOK_ALLOW_PRIVATE: "1",
        // Short retries: a receiver down for 10 s is caught up within seconds, and 40 attempts never run out.
        WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 40 }, (_, i) => (i < 2 ? 1000 : 3000)).join(","),
      },
      log,
    );
    const url = server.url;
    await receiver.up();
    const tenants = await mapLimit(keys, 5, async (k) => {
      const api = apiClient(() => url, k.api_key);
      const ch = await api.post("/api/external/create-channel", { name: "Soak" });
      const groups = ((await api.get(`/api/external/list-groups/${ch.id_channel as string}`)).groups as { id_group: string }[]).map((g) => g.id_group);
      const segment = (await api.post("/api/external/create-segment", { name: "Soak", id_channel: [ch.id_channel], groups })).id_segment as string;
      await api.patch("/api/external/edit-settings", {
        dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 1, dispatches_per_loop: 5, min_campaign_interval: 0, max_campaign_interval: 0 },
      });
      return { api, channel: ch.id_channel as string, segment, campaigns: [] as string[], current: undefined as string | undefined };
    });
    const receiverUrl = `http://127.0.0.1:${receiverPort}/hook`;
    for (const t of tenants) {
      await t.api.patch("/api/external/edit-webhooks", {
        campaign_status_url: receiverUrl,
        campaign_progress_url: receiverUrl,
        channel_status_url: receiverUrl,
      });
    }
    log(`soak: ${tenantCount} tenants, ${minutes} min, a flap every ${flapSeconds} s`);

    const meter = serverMeter(() => (server ? [server] : []));
    meter.start();
    const end = Date.now() + minutes * 60_000;
    let flapsChannel = 0;
    let flapsReceiver = 0;
    let nextFlap = Date.now() + flapSeconds * 1000;
    const restore: { at: number; fn: () => Promise<void> }[] = [];
    const finished = (s: unknown) => ["completed", "failed", "canceled"].includes(s as string);
    const feed = async () => {
      for (const t of tenants) {
        if (t.current && !finished((await t.api.get(`/api/external/info-campaign/${t.current}`)).status)) continue;
        t.current = (await t.api.post("/api/external/create-campaign/message", { name: `Soak ${t.campaigns.length}`, id_segment: t.segment, message: "Olá" }))
          .id_campaign as string;
        t.campaigns.push(t.current);
      }
    };
    while (Date.now() < end) {
      await feed();
      const now = Date.now();
      for (const r of restore.filter((r) => r.at <= now)) {
        await r.fn();
        restore.splice(restore.indexOf(r), 1);
      }
      if (now >= nextFlap) {
        nextFlap = now + flapSeconds * 1000;
        const back = now + 5000 + Math.random() * 5000;
        if ((flapsChannel + flapsReceiver) % 2 === 0) {
          const t = tenants[flapsChannel % tenants.length];
          await t.api.post(`/api/simulator/channels/${t.channel}/state`, { connected: false });
          restore.push({ at: back, fn: async () => void (await t.api.post(`/api/simulator/channels/${t.channel}/state`, { connected: true })) });
          flapsChannel++;
        } else {
          receiver.down();
          restore.push({ at: back, fn: () => receiver.up() });
          flapsReceiver++;
        }
      }
      await sleep(500);
    }
    for (const r of restore) await r.fn();
    log(`soak: ${flapsChannel} channel flaps, ${flapsReceiver} receiver flaps; waiting for the last campaigns and webhooks`);

    // Everything up: the last campaigns finish, the webhooks drain (nothing new arrives for 10 s).
    const deadline = Date.now() + 300_000;
    while (Date.now() < deadline) {
      const open = await mapLimit(tenants, 5, async (t) =>
        t.current ? !finished((await t.api.get(`/api/external/info-campaign/${t.current}`)).status) : false,
      );
      if (!open.some(Boolean)) break;
      await sleep(1000);
    }
    for (let seen = -1; seen !== receiver.arrivals.size && Date.now() < deadline; ) {
      seen = receiver.arrivals.size;
      await sleep(10_000);
    }
    const cpu = meter.stop();

    let messages = 0;
    let exactlyOnce = true;
    let notCompleted = 0;
    for (const t of tenants) {
      for (const id of t.campaigns) {
        const info = await t.api.get(`/api/external/info-campaign/${id}`);
        if (info.status !== "completed") notCompleted++;
        const log_ = (await t.api.get(`/api/simulator/messages?id_campaign=${id}`)).messages as { id_group: string }[];
        messages += log_.length;
        if (log_.length !== SOAK_GROUPS || new Set(log_.map((m) => m.id_group)).size !== SOAK_GROUPS) {
          exactlyOnce = false;
          log(`campaign ${id}: ${log_.length} messages to ${new Set(log_.map((m) => m.id_group)).size} groups (${String(info.status)})`);
        }
      }
    }
    await stopServer(server);
    server = undefined;
    // The server's own record of every webhook delivery (PGlite: readable once the server is down).
    const rows = await withDatabase(target, (q) => q("select message_id, state from webhook_deliveries"));
    const delivered = rows.filter((r) => r.state === "delivered");
    const missing = rows.filter((r) => !receiver.arrivals.has(String(r.message_id))).length;
    for (const r of rows.filter((r) => r.state !== "delivered").slice(0, 5)) log(`webhook ${String(r.message_id)}: ${String(r.state)}`);
    return {
      minutes,
      campaigns: tenants.reduce((s, t) => s + t.campaigns.length, 0),
      messages,
      exactly_once: exactlyOnce,
      campaigns_not_completed: notCompleted,
      flaps_channel: flapsChannel,
      flaps_receiver: flapsReceiver,
      webhooks_recorded: rows.length,
      webhooks_delivered: delivered.length,
      webhooks_missing_at_receiver: missing,
      webhook_duplicate_arrivals: [...receiver.arrivals.values()].reduce((s, n) => s + n - 1, 0),
      server_cpu_percent: cpu.cpu_percent,
      server_rss_peak_mb: cpu.rss_peak_mb,
    };
  } finally {
    receiver.down();
    if (server) await stopServer(server).catch(() => {});
    await target.cleanup();
  }
}

async function main() {
  const args = process.argv.slice(2);
  const kind = dbKind(args);
  await ensureBuild({ log });
  const loadStart = round(os.loadavg()[0], 1);
  const scaleArgs = [...(process.env.PROOF_SCALE_ARGS?.split(" ").filter(Boolean) ?? []), "--db", kind];
  const soakMinutes = Number(process.env.PROOF_SOAK_MINUTES ?? 10);

  log(`── scale ${scaleArgs.join(" ")} ──`);
  const scale = await runScale(scaleOptions(scaleArgs));
  printScale([scale]);
  log("── load ──");
  const load = await runLoad({ ...loadOptions(["--db", kind]), durationS: Number(process.env.PROOF_LOAD_SECONDS ?? 60) });
  printLoad(load);
  log(`── soak ${soakMinutes} min ──`);
  const s = await soak(kind, soakMinutes, Number(process.env.PROOF_SOAK_TENANTS ?? 5), Number(process.env.PROOF_FLAP_SECONDS ?? 15));

  const soakOk = s.exactly_once && s.campaigns_not_completed === 0 && s.webhooks_delivered === s.webhooks_recorded && s.webhooks_missing_at_receiver === 0;
  const ok = (b: boolean) => (b ? "ok" : "MISSED");
  console.log(`\nProof on ${kind}, load average ${loadStart} at start, ${round(os.loadavg()[0], 1)} at end:`);
  printTable([
    ["run", "figure", "value", "target"],
    ["scale", String(scale.config), "", ""],
    [
      "scale",
      "paced gaps outside [min, max + 250 ms]",
      `${scale.gaps_outside_percent} % of ${scale.gaps} (${scale.gaps_below_min} below min)`,
      `0 % ${ok(scale.gaps_outside_percent === 0)}`,
    ],
    ["scale", "start lateness p50 / p99", `${scale.lateness_p50_ms} / ${scale.lateness_p99_ms} ms`, `p99 < 1 s ${ok(Number(scale.lateness_p99_ms) < 1000)}`],
    ["scale", "exactly once, all completed", `${scale.exactly_once}, ${scale.all_completed}`, ok(scale.exactly_once === true && scale.all_completed === true)],
    ["scale", "all done; big campaign", `${scale.all_done_s} s; ${scale.big_seconds} s at ${scale.big_sends_per_second}/s`, ""],
    ["scale", "server CPU, peak RSS", `${scale.server_cpu_s} s (${scale.server_cpu_percent} % of a core), ${scale.server_rss_peak_mb} MB`, ""],
    ...load.routes.map((r) => [
      "load",
      r.route,
      `p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, ${r.per_second}/s, ${Object.entries(r.statuses)
        .map(([c, n]) => `${c}: ${n}`)
        .join(", ")}`,
      "",
    ]),
    ["load", "errors other than 429", String(load.non_429_errors), `0 ${ok(load.non_429_errors === 0)}`],
    ["load", "server CPU, peak RSS", `${load.server_cpu_percent} % of a core, ${load.server_rss_peak_mb} MB`, ""],
    ["soak", `${s.minutes} min, ${s.flaps_channel} channel + ${s.flaps_receiver} receiver flaps`, `${s.campaigns} campaigns, ${s.messages} messages`, ""],
    [
      "soak",
      "exactly one message per group, all completed",
      `${s.exactly_once}, ${s.campaigns_not_completed} not completed`,
      ok(s.exactly_once && s.campaigns_not_completed === 0),
    ],
    [
      "soak",
      "webhooks delivered / recorded, missing at receiver",
      `${s.webhooks_delivered} / ${s.webhooks_recorded}, ${s.webhooks_missing_at_receiver} missing (${s.webhook_duplicate_arrivals} arrived twice)`,
      ok(s.webhooks_delivered === s.webhooks_recorded && s.webhooks_missing_at_receiver === 0),
    ],
    ["soak", "server CPU, peak RSS", `${s.server_cpu_percent} % of a core, ${s.server_rss_peak_mb} MB`, ""],
  ]);
  console.log(JSON.stringify({ proof: kind, scale, load, soak: s }));
  if (!soakOk || load.non_429_errors > 0) process.exitCode = 1;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err) => {
    console.error(`[proof] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
