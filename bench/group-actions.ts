/**
 * `npm run bench -- group-actions [pglite|postgres]`: one group action (close_messages) over 500 groups reached by 2
 * admin numbers, on the real server (.next/serve.cjs) with the simulator (CONTRACT §8; issue target: under 10 minutes
 * of paced time, under 5 statements per group).
 *
 * The pace is one action per 2 s per number (GROUP_ACTION_GAP_MS): a run at that pace takes ~500 s, so the server runs
 * with BENCH_GROUP_ACTION_GAP_MS (default 50 ms) and the bench prints both the measured time and the time the same
 * schedule takes at the real pace: per number, its actions × max(2 s, its measured interval between two actions), the
 * slowest number's. BENCH_GROUP_ACTION_GAP_MS=2000 measures the real pace itself.
 *
 * Statements: the server counts the statements it runs by text (DB_STATEMENT_LOG, as BENCH_STATEMENTS=1 does for
 * the dispatch bench), from the create request to `completed`, divided by the groups; the most frequent texts are
 * printed; `engine_statements_per_group` counts only those on the group-action tables and the numbers' turns (the
 * engine's), less the two each of the bench's own polls of info-group-action runs. The total includes the simulator's own when it keeps its state in the same database (the platform's side,
 * marked [sim]) and the server's background (runners' ticks, outbox).
 */
import { apiClient } from "../e2e/server-process";
import { type DbKind, freshTarget, makeTenants, round, sleep, startBenchServer, statementLog, stopServer, type ServerProcess } from "./common";

const GROUPS = Number(process.env.BENCH_GROUP_ACTION_GROUPS ?? 500);
const GAP_MS = Number(process.env.BENCH_GROUP_ACTION_GAP_MS ?? 50);
const REAL_GAP_MS = 2000;
const log = (line: string) => console.log(`[bench group-actions] ${line}`);

/** Statement texts of the simulator's tables (the platform's side, not the engine's). */
const simulatorText = (text: string) => /\b(sim_|simulator_)/.test(text);

/**
 * The statements by whose they are, per group: the service's (the engine's, the runners' ticks and the outbox), the
 * simulator's (the platform's side: its tables), and begin/commit (of either: one transaction per claim is the engine's).
 */
const control = (text: string) => /^(begin|commit|rollback)\b/i.test(text.trim());
/** The engine's own: the statements on the group-action tables and the numbers' turns and health it reads. */
const engineText = (text: string) => /group_action|next_group_action_at/.test(text) && !simulatorText(text);
const engineOf = (rows: [text: string, n: number][]) => rows.filter(([t]) => engineText(t)).reduce((n, [, k]) => n + k, 0);

function split(rows: [text: string, n: number][], groups: number) {
  const sum = (keep: (text: string) => boolean) => rows.filter(([text]) => keep(text)).reduce((n, [, k]) => n + k, 0);
  return {
    service_statements_per_group: round(sum((t) => !control(t) && !simulatorText(t)) / groups, 2),
    simulator_statements_per_group: round(sum((t) => !control(t) && simulatorText(t)) / groups, 2),
    transaction_statements_per_group: round(sum(control) / groups, 2),
  };
}

export async function benchGroupActions(kind: DbKind) {
  process.env.BENCH_STATEMENTS ??= "1";
  const statements = statementLog(`group-actions-${kind}-${GROUPS}-${GAP_MS}`);
  const target = await freshTarget(kind, "bench_group_actions", log);
  let server: ServerProcess | undefined;
  try {
    const [tenant] = await makeTenants(target, 1, "ga");
    const perChannel = Math.ceil(GROUPS / 2);
    server = await startBenchServer(
      target,
      `group-actions`,
      {
        GROUP_ACTION_GAP_MS: String(GAP_MS),
        SIMULATOR_GROUPS_PER_CHANNEL: String(perChannel),
        RATE_LIMIT_API_KEY_PER_MINUTE: "1000000",
        ...statements.env,
      },
      log,
    );
    const s = server;
    const api = apiClient(() => s.url, tenant.api_key);
    const numbers: { id: string; phone: string; groups: string[] }[] = [];
    for (const name of ["Número 1", "Número 2"]) {
      const id = (await api.post("/api/external/create-channel", { name })).id_channel as string;
      const phone = (await api.get(`/api/external/info-channel/${id}`)).phone as string;
      const groups = ((await api.get(`/api/external/list-groups/${id}`)).groups as { id_group: string }[]).map((g) => g.id_group);
      numbers.push({ id, phone, groups });
    }
    // Both numbers admins of every group: each group is reached by 2 admin numbers.
    const [a, b] = numbers;
    const groups = [...a.groups, ...b.groups].slice(0, GROUPS);
    for (const [i, g] of groups.entries()) {
      const other = i < a.groups.length ? b.phone : a.phone;
      for (const body of [{ join: [other] }, { promote: [other] }]) await api.post(`/api/simulator/groups/${encodeURIComponent(g)}/participants`, body);
    }
    const segment = (await api.post("/api/external/create-segment", { name: "Bench", id_channel: [a.id, b.id], groups })).id_segment as string;
    log(`${groups.length} groups, 2 admin numbers each; pace ${GAP_MS} ms per number (real: ${REAL_GAP_MS} ms)`);

    await sleep(2000);
    statements.mark();
    const started = performance.now();
    const id = (await api.post("/api/external/create-group-action", { id_segment: segment, action: { type: "close_messages" } })).id_action as string;
    let info: Record<string, unknown> = {};
    let polls = 0;
    for (;;) {
      polls += 1;
      info = await api.get(`/api/external/info-group-action/${id}`);
      if (info.status === "completed" || info.status === "canceled") break;
      if (performance.now() - started > 30 * 60_000) throw new Error(`not completed after 30 minutes: ${JSON.stringify(info.groups)}`);
      await sleep(250);
    }
    const seconds = (performance.now() - started) / 1000;
    const counted = await statements.since();
    const results = info.results as { id_channel: string; state: string; at: string }[];
    const counts = info.groups as { total: number; done: number; failed: number };

    // The measured schedule: per number, its actions and the interval between two of them.
    const byChannel = new Map<string, number[]>();
    for (const r of results) if (r.state === "done") byChannel.set(r.id_channel, [...(byChannel.get(r.id_channel) ?? []), Date.parse(r.at)]);
    const perNumber = [...byChannel.values()].map((ats) => {
      ats.sort((x, y) => x - y);
      const interval = ats.length > 1 ? (ats[ats.length - 1] - ats[0]) / (ats.length - 1) : 0;
      return { actions: ats.length, interval_ms: round(interval, 1), real_s: (ats.length * Math.max(REAL_GAP_MS, interval)) / 1000 };
    });
    const figures = {
      bench: "group-actions",
      db: kind,
      groups: counts.total,
      done: counts.done,
      failed: counts.failed,
      pace_ms: GAP_MS,
      measured_s: round(seconds, 1),
      actions_per_number: perNumber.map((n) => n.actions),
      interval_ms_per_number: perNumber.map((n) => n.interval_ms),
      real_pace_s: round(Math.max(...perNumber.map((n) => n.real_s)), 1),
      statements_per_group: counted ? round(counted.total / counts.total, 2) : null,
      ...(counted ? split(counted.all, counts.total) : {}),
      ...(counted
        ? {
            engine_statements_per_group: round((engineOf(counted.all) - 2 * polls) / counts.total, 2),
            polls,
          }
        : {}),
    };
    console.log(`groups done ${counts.done}/${counts.total} (failed ${counts.failed}) in ${figures.measured_s} s at ${GAP_MS} ms per number`);
    console.log(`per number: actions ${figures.actions_per_number.join(", ")}; interval ms ${figures.interval_ms_per_number.join(", ")}`);
    console.log(`at the real pace (${REAL_GAP_MS} ms per number): ${figures.real_pace_s} s (target < 600 s)`);
    if (counted) {
      console.log(
        `statements per group: ${figures.statements_per_group} in all (${counted.total}): the service's ${figures.service_statements_per_group} (target < 5) ` +
          `+ the simulator's ${figures.simulator_statements_per_group} + begin/commit ${figures.transaction_statements_per_group}; ` +
          `the engine's ${figures.engine_statements_per_group} (on the group-action tables and the numbers' turns, less the 2 of each of the ` +
          `bench's ${figures.polls} polls of info-group-action); most frequent:`,
      );
      for (const [text, n] of counted.all.slice(0, 14)) console.log(`  ${String(n).padStart(6)} ${simulatorText(text) ? "[sim] " : ""}${text.slice(0, 160)}`);
    }
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    if (server) await stopServer(server);
    await target.cleanup();
  }
}
