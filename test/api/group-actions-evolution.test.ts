/**
 * Group actions (docs/groups.md) with MESSAGING_PROVIDER=evolution against the fake gateway, which answers the group
 * routes as Evolution 2.3.x does (docs/evolution.md#group-settings-group-actions): updateSetting 201 `{}`, subject and
 * description 201 `{update: "success"}`, a number that is not an admin `Error: not-authorized` in the route's wrapping,
 * WhatsApp's throttle `Error: rate-overlimit`; the read-back through findGroupInfos.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GroupActionRunner } from "../../inngest/in-process/group-action-runner";
import { startEvolutionService } from "../evolution-service";
import type { FakeEvolution } from "../fake-evolution";
import { newTenant, restPollMs, until, type Api } from "../helpers";
import type { TestServer } from "../http-server";

let fake: FakeEvolution;
let server: TestServer;
let runner: GroupActionRunner;
let api: Api;

beforeAll(async () => {
  process.env.GROUP_ACTION_GAP_MS = "50";
  process.env.NUMBER_COOLING_BASE_MS = "300";
  const started = await startEvolutionService({ env: { EVOLUTION_TIMEOUT_MS: "5000" }, fake: { groupsPerInstance: 6 } });
  ({ fake, server } = started);
  runner = new GroupActionRunner(started.services, { intervalMs: 200 }).start();
  api = await newTenant(server.url, { channelLimit: 10 });
});
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  await fake?.close();
  delete process.env.GROUP_ACTION_GAP_MS;
  delete process.env.NUMBER_COOLING_BASE_MS;
});

async function connectedChannel() {
  const { json } = await api("POST", "/api/external/create-channel", { name: "Evo ações" });
  await fake.pair(json.id_channel);
  await until(
    async () => (await api("GET", `/api/external/info-channel/${json.id_channel}`)).json.status,
    (s) => s === "connected",
    15_000,
    restPollMs,
  );
  return json.id_channel as string;
}

const finished = (id: string) =>
  until(
    () => api("GET", `/api/external/info-group-action/${id}`),
    (r) => r.json.status === "completed",
    60_000,
    restPollMs,
  );

describe("group actions on Evolution", () => {
  it("close_messages: every group announce-only on the gateway, one updateSetting each; a non-admin group fails not_admin; a rate limit cools and retries", async () => {
    const ch = await connectedChannel();
    const groups = ((await api("GET", `/api/external/list-groups/${ch}`)).json.groups as { id_group: string; name: string }[])
      .filter((g) => g.name.startsWith("Grupo Evo"))
      .map((g) => g.id_group);
    expect(groups.length).toBe(6);
    const seg = await api("POST", "/api/external/create-segment", { name: "Evo", id_channel: [ch], groups });
    expect(seg.status, seg.text).toBe(201);
    // The number is a plain member of the fourth group: the gateway answers not-authorized there.
    const inst = fake.instances.get(ch)!;
    const notAdmin = fake.group(ch, groups[3].includes("@") ? groups[3] : `${groups[3]}@g.us`)!;
    await api("GET", `/api/external/info-channel/${ch}`);
    notAdmin.participants = [{ id: `${inst.owner}@s.whatsapp.net`, admin: null }];
    // WhatsApp throttles the first change: the number cools, and the group is done after it.
    fake.knobs.groupSettingRateLimits = 1;

    const res = await api("POST", "/api/external/create-group-action", { id_segment: seg.json.id_segment, action: { type: "close_messages" } });
    expect(res.status, res.text).toBe(200);
    const done = await finished(res.json.id_action);
    expect(done.json.groups).toEqual({ total: 6, done: 5, failed: 1, pending: 0 });
    expect(done.json.results[3]).toMatchObject({ state: "failed", reason: "not_admin" });
    for (const [i, g] of groups.entries()) {
      const group = fake.group(ch, g.includes("@") ? g : `${g}@g.us`)!;
      if (i === 3) continue;
      expect(group.announce).toBe(true);
      expect(fake.groupChanges.filter((c) => c.groupJid === group.id)).toEqual([
        { instance: ch, groupJid: group.id, route: "updateSetting", body: { action: "announcement" } },
      ]);
    }
    expect(fake.groupChanges.filter((c) => c.groupJid === notAdmin.id)).toEqual([]);
    expect(fake.knobs.groupSettingRateLimits).toBe(0);

    // set_subject with {n}, read back through findGroupInfos.
    const rename = await api("POST", "/api/external/create-group-action", {
      id_segment: seg.json.id_segment,
      action: { type: "set_subject", subject: "Turma {n}" },
    });
    const renamed = await finished(rename.json.id_action);
    expect(renamed.json.groups).toMatchObject({ done: 5, failed: 1 });
    expect(fake.group(ch, groups[0].includes("@") ? groups[0] : `${groups[0]}@g.us`)!.subject).toBe("Turma 1");
    expect(fake.group(ch, groups[5].includes("@") ? groups[5] : `${groups[5]}@g.us`)!.subject).toBe("Turma 6");
  }, 120_000);
});
