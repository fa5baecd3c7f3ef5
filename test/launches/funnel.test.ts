/**
 * The funnel end to end over HTTP: a launch made with create-launch, people joining through the simulated
 * invite link and leaving through the simulator's control endpoints, info-launch / launch-analytics /
 * launch-members agreeing, signed group_activity webhooks, and the invite-link check (renewed link,
 * broken groups) run by the embedded runner.
 */
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { JobTimer } from "../../inngest/in-process/job-timer";
import { launchFunnelJob } from "../../inngest/jobs/launch-funnel";
import { getServices } from "../../server/services";
import { brasiliaParts } from "../../server/time/brasilia";
import { newTenant, waitFor, type Api } from "../helpers";
import { withServerAndReceiver, withWebhookRunner } from "../webhooks/fixtures";
import { webhookHeadersOf } from "../webhooks/receiver";
import { groupActivity } from "./fixtures";

const fx = withServerAndReceiver();
const webhooks = withWebhookRunner("100,200,300");
afterEach(() => {
  delete process.env.LAUNCH_INVITE_CHECK_SECONDS;
});

const STAFF = "5511900000009";
const ADMIN = "5511900000001";

async function launch(api: Api, extra: Record<string, unknown> = {}) {
  const { json: ch } = await api("POST", "/api/external/create-channel", { name: "Canal do lançamento" });
  const res = await api("POST", "/api/external/create-launch", {
    name: "Turma 9",
    id_channel: [ch.id_channel],
    group_template: { name: "Turma 9 #{n}", admins_only: false, admins: [ADMIN] },
    capacity: 10,
    margin: 0,
    auto_create: false,
    initial_groups: 2,
    staff_numbers: [STAFF],
    ...extra,
  });
  if (res.status !== 201) throw new Error(`create-launch: ${res.status} ${res.text}`);
  return res.json as { id_launch: string; slug: string };
}

const info = async (api: Api, id: string) => (await api("GET", `/api/external/info-launch/${id}`)).json;
const codeOf = (inviteUrl: string) => inviteUrl.split("/").at(-1) as string;

describe("the funnel over HTTP", () => {
  it("joins through the invite link and leaves: info-launch, analytics and the members export agree; webhooks are signed", async () => {
    void webhooks;
    const api = await newTenant(fx.server.url);
    const path = `/ga-${api.tenantId}`;
    await api("PATCH", "/api/external/edit-webhooks", { group_activity_url: `${fx.receiver.url}${path}` });
    const secret = (await api("GET", "/api/external/list-webhooks")).json.webhooks.signing_secret as string;
    const { id_launch } = await launch(api);
    const before = await info(api, id_launch);
    const [g1, g2] = before.groups as { id_group: string; invite_url: string; members: number }[];
    // The channel's own number and the template's admin are in every created group.
    expect([g1.members, g2.members]).toEqual([2, 2]);

    const join = (participant: string) => api("POST", `/api/simulator/invites/${codeOf(g1.invite_url)}/join`, { participant });
    expect((await join("5511999990001")).status).toBe(200);
    expect((await join("5511999990002")).status).toBe(200);
    expect((await join(STAFF)).status).toBe(200);
    // One person in two groups.
    expect((await api("POST", `/api/simulator/groups/${g2.id_group}/participants`, { join: ["5511999990001"] })).status).toBe(200);
    expect((await api("POST", `/api/simulator/groups/${g1.id_group}/participants`, { leave: ["5511999990002"] })).status).toBe(200);

    const after = await info(api, id_launch);
    expect(after.groups.map((g: { members: number }) => g.members)).toEqual([4, 3]);
    expect(after.totals).toMatchObject({ members: 7, unique_members: 2, joins: 3, leaves: 1 });

    const today = brasiliaParts(new Date()).date;
    const analytics = (await api("GET", `/api/external/launch-analytics/${id_launch}?days=1`)).json;
    expect(analytics.days).toEqual([{ date: today, clicks: 0, unique_clicks: 0, joins: 3, leaves: 1, members: 7, buyers: 0 }]);
    expect(analytics.groups.map((g: { joins: number; leaves: number }) => [g.joins, g.leaves])).toEqual([
      [2, 1],
      [1, 0],
    ]);

    const csv = (await api("GET", `/api/external/launch-members/${id_launch}?format=csv`)).text
      .replace(/^\uFEFF/, "")
      .trimEnd()
      .split("\r\n");
    expect(csv.slice(1).map((l) => l.split(",")[0])).toEqual(["5511999990001", "5511999990002", STAFF, "5511999990001"]);
    // staff, then buyer (nobody bought).
    expect(csv.slice(1).map((l) => l.split(",").slice(-2))).toEqual([
      ["false", "false"],
      ["false", "false"],
      ["true", "false"],
      ["false", "false"],
    ]);

    // The webhook runner delivers group_created (create-launch) and, on the periodic pass, members_changed.
    await new JobTimer(launchFunnelJob, await getServices(), { intervalMs: 60_000 }).runOnce();
    const events = await waitFor("group_created ×2 and members_changed ×2", () => {
      const got = fx.receiver.received
        .filter((r) => r.path === path)
        .map((r) => (new Webhook(secret).verify(r.body, webhookHeadersOf(r.headers)) as { type: string; data: Record<string, any> }).data);
      return got.filter((e) => e.event === "members_changed").length >= 2 && got.filter((e) => e.event === "group_created").length >= 2 && got;
    });
    expect(events.filter((e) => e.event === "group_created").map((e) => e.position)).toEqual([1, 2]);
    const changed = events.filter((e) => e.event === "members_changed" && e.id_group === g1.id_group);
    expect(changed).toEqual([
      {
        event: "members_changed",
        id_launch,
        id_group: g1.id_group,
        joined: [
          { participant: "5511999990001", staff: false },
          { participant: "5511999990002", staff: false },
          { participant: STAFF, staff: true },
        ],
        left: [{ participant: "5511999990002", staff: false }],
        members: 4,
      },
    ]);
  });

  it("the invite check renews a revoked link and marks vanished groups and lost admin broken (link_broken); the next group fills", async () => {
    const api = await newTenant(fx.server.url);
    const { id_launch } = await launch(api, { initial_groups: 3 });
    const [g1, g2, g3] = (await info(api, id_launch)).groups as { id_group: string; invite_url: string }[];
    process.env.LAUNCH_INVITE_CHECK_SECONDS = "1";
    const runner = new JobTimer(launchFunnelJob, await getServices(), { intervalMs: 100 }).start();
    try {
      const revoked = await api("POST", `/api/simulator/groups/${g1.id_group}/invite/revoke`, {});
      expect(revoked.status).toBe(200);
      const fresh = revoked.json.invite_url as string;
      expect(fresh).not.toBe(g1.invite_url);
      expect((await api("POST", `/api/simulator/invites/${codeOf(g1.invite_url)}/join`, { participant: "5511999990001" })).status).toBe(404);
      await waitFor("the renewed link in info-launch", async () => (await info(api, id_launch)).groups[0].invite_url === fresh);

      expect((await api("POST", `/api/simulator/groups/${g1.id_group}/state`, { exists: false })).status).toBe(200);
      expect((await api("POST", `/api/simulator/groups/${g3.id_group}/state`, { admin: false })).status).toBe(200);
      const groups = await waitFor("two broken groups", async () => {
        const gs = (await info(api, id_launch)).groups as { status: string }[];
        return gs.filter((g) => g.status === "broken").length === 2 && gs;
      });
      expect(groups.map((g) => g.status)).toEqual(["broken", "filling", "broken"]);
      const broken = (await groupActivity(api.tenantId)).filter((e) => e.event === "link_broken");
      expect(broken).toEqual(
        expect.arrayContaining([
          { event: "link_broken", id_launch, id_group: g1.id_group, reason: "group_gone" },
          { event: "link_broken", id_launch, id_group: g3.id_group, reason: "not_admin" },
        ]),
      );
      expect(broken).toHaveLength(2);
      // Broken stays broken: the next passes send no more link_broken.
      await new Promise((r) => setTimeout(r, 1500));
      expect((await groupActivity(api.tenantId)).filter((e) => e.event === "link_broken")).toHaveLength(2);
      expect(g2).toBeDefined();
    } finally {
      await runner.stop();
    }
  });
});
