import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { GroupActionRunner } from "../../inngest/in-process/group-action-runner";
import { InProcessRunner } from "../../inngest/in-process/dispatch-runner";
import { approvePartnerScopes } from "../../server/oauth/partner-apps";
import { getServices } from "../../server/services";
import { brasiliaMinute, createCampaign, tenantWithSegment } from "../campaigns";
import type { Api, ApiResponse } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { joinGroup, launchWithGroups } from "../launches/fixtures";
import { hotmartBody, hotmartCreds, hotmartHook, postHotmartTo } from "../launches/purchases";
import { authorizeApp, consentData, decide } from "../oauth-client";
import { dashboard, joinThroughInvitation, ownerAccount, password } from "./team-client";

/**
 * CONTRACT §10 (docs/team.md#audit-actions): each kind of change is in the account's audit log, through the public
 * surface (REST with an API key, the dashboard's tRPC, the OAuth endpoints) and the engines running in process: the
 * service's campaign start and end (one entry each, not one per message), group actions (one entry for the action's
 * end, not per group), buyer removals; a partner app's own acts labelled with its name; no secret in any entry.
 */
let server: TestServer;
let stopRunners: () => Promise<void>;
beforeAll(async () => {
  process.env.GROUP_ACTION_GAP_MS = "60";
  server = await startTestServer();
  const services = await getServices();
  const dispatch = new InProcessRunner(services, { maxSleepMs: 50 }).start();
  const groupActions = new GroupActionRunner(services, { intervalMs: 200 }).start();
  stopRunners = async () => {
    await dispatch.stop();
    await groupActions.stop();
  };
});
afterAll(async () => {
  await stopRunners?.();
  await server?.close();
  delete process.env.GROUP_ACTION_GAP_MS;
});

type Entry = { at: string; actor: { type: string; id: string | null; label: string | null }; action: string; target: string | null; outcome: string };

/** Every entry of the account, through the REST endpoint (all pages). */
async function auditLog(api: Api): Promise<Entry[]> {
  const out: Entry[] = [];
  let cursor: string | null = null;
  do {
    const res: ApiResponse = await api("GET", `/api/external/list-audit-log${cursor ? `?cursor=${cursor}` : ""}`);
    expect(res.status, res.text).toBe(200);
    out.push(...res.json.entries);
    cursor = res.json.next_cursor;
  } while (cursor);
  return out;
}

/** Polls at most twice a second (the API key's limit is 300 a minute). */
async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 500));
  }
}

const of = (entries: Entry[], action: string, target?: string) => entries.filter((e) => e.action === action && (target === undefined || e.target === target));

describe("the audit log's actions", () => {
  it("records settings, channels, segments, campaigns (and the service's start and end), launches, group actions, integrations", async () => {
    const owner = await ownerAccount(server.url, "Loja auditada");
    const keyLabel = owner.apiKey.slice(0, 12);
    const { api, segment, channel } = await tenantWithSegment(server.url, 2, 5, owner.api);

    // Segments, by the key: renamed, and a monitoring group configured.
    expect((await api("PUT", `/api/external/edit-segment/${segment}`, { name: "Seg renomeado" })).status).toBe(200);
    const listed = (await api("GET", `/api/external/list-groups/${channel}`)).json.groups as { id_group: string }[];
    const monitoring = await api("POST", "/api/external/monitoring/group", { id_segment: segment, id_channel: channel, id_group: listed[5].id_group });
    expect(monitoring.status, monitoring.text).toBe(201);
    // The webhooks' signing secret rotated on the dashboard.
    const rotated = await owner.trpc.mutate("webhooks.rotateSecret");
    expect(rotated.status, rotated.text).toBe(200);
    // Campaign controls on a scheduled campaign.
    const later = await createCampaign(api, segment, { scheduled_at: brasiliaMinute(new Date(Date.now() + 3_600_000)) });
    for (const verb of ["pause", "resume", "cancel"]) expect((await api("POST", `/api/external/${verb}-campaign/${later.id_campaign}`)).status).toBe(200);
    // A campaign the service sends to the end.
    const sent = await createCampaign(api, segment);
    const done = await eventually(
      () => api("GET", `/api/external/info-campaign/${sent.id_campaign}`),
      (r) => r.json.status === "completed",
    );
    expect(done.json.status).toBe("completed");
    // Channels: edit, and a second one created and disconnected (by a member, on the dashboard).
    expect((await api("PUT", `/api/external/edit-channel/${channel}`, { name: "Canal renomeado" })).status).toBe(200);
    const second = await owner.trpc.mutate("channels.create", { name: "Segundo" });
    expect(second.status, second.text).toBe(200);
    const secondId: string = second.json.result.data.id_channel;
    expect((await owner.trpc.mutate("channels.disconnect", { id_channel: secondId })).status).toBe(200);
    // A launch, created and edited.
    const launch = await api("POST", "/api/external/create-launch", {
      name: "Turma auditada",
      id_channel: [channel],
      group_template: { name: "Turma #{n}", admins_only: false, admins: [] },
      initial_groups: 0,
    });
    expect(launch.status, launch.text).toBe(201);
    expect((await api("PUT", `/api/external/edit-launch/${launch.json.id_launch}`, { capacity: 500 })).status).toBe(200);
    const leads = await api("POST", `/api/external/launch-leads/${launch.json.id_launch}`, { leads: [{ phone: "5511987654321", email: "lead@example.com" }] });
    expect(leads.status, leads.text).toBe(200);
    // A group action run to its end by the service, and one canceled.
    const action = await api("POST", "/api/external/create-group-action", { name: "Fechar", id_segment: segment, action: { type: "close_messages" } });
    expect(action.status, action.text).toBe(200);
    const finished = await eventually(
      () => api("GET", `/api/external/info-group-action/${action.json.id_action}`),
      (r) => r.json.status === "completed",
    );
    expect(finished.json.groups).toMatchObject({ total: 2, done: 2 });
    const scheduled = await api("POST", "/api/external/create-group-action", {
      id_segment: segment,
      action: { type: "lock_info" },
      scheduled_at: brasiliaMinute(new Date(Date.now() + 3_600_000)),
    });
    expect((await api("PUT", `/api/external/cancel-group-action/${scheduled.json.id_action}`)).status).toBe(200);
    // Integrations: created on the dashboard, its credentials changed by the key, deleted on the dashboard.
    expect((await owner.trpc.mutate("integrations.createFromDashboard", { type: "hotmart", credentials: hotmartCreds })).status).toBe(200);
    const secretHottok = "hottok-novo-muito-secreto";
    expect((await api("PATCH", "/api/external/edit-integrations", { type: "hotmart", credentials: { hottok: secretHottok } })).status).toBe(200);
    expect((await owner.trpc.mutate("integrations.delete", { type: "hotmart" })).status).toBe(200);

    const entries = await auditLog(api);
    const byKey = expect.objectContaining({ type: "api_key", label: keyLabel });
    const byOwner = expect.objectContaining({ type: "member", label: owner.email });
    const byService = { type: "system", id: null, label: "service" };
    expect(of(entries, "settings.edit")[0]?.actor).toEqual(byKey);
    expect(of(entries, "channel.create", channel)[0]?.actor).toEqual(byKey);
    expect(of(entries, "channel.edit", channel)[0]?.actor).toEqual(byKey);
    expect(of(entries, "channel.create", secondId)[0]?.actor).toEqual(byOwner);
    expect(of(entries, "channel.disconnect", secondId)[0]?.actor).toEqual(byOwner);
    expect(of(entries, "segment.create", segment)[0]?.actor).toEqual(byKey);
    expect(of(entries, "segment.edit", segment)[0]?.actor).toEqual(byKey);
    expect(of(entries, "segment.monitoring_group_create", segment)[0]?.actor).toEqual(byKey);
    expect(of(entries, "webhooks.rotate_secret")[0]?.actor).toEqual(byOwner);
    for (const verb of ["create", "pause", "resume", "cancel"]) {
      expect(
        of(entries, `campaign.${verb}`, later.id_campaign).map((e) => e.actor),
        verb,
      ).toEqual([byKey]);
    }
    // The service's entries of the sent campaign: its start and its end, once each (never one per message).
    const bySystem = entries.filter((e) => e.target === sent.id_campaign && e.actor.type === "system");
    expect(bySystem.map((e) => e.action).sort()).toEqual(["campaign.complete", "campaign.start"]);
    for (const e of bySystem) expect(e.actor).toEqual(byService);
    // The scheduled one never started: no entry of the service.
    expect(entries.filter((e) => e.target === later.id_campaign && e.actor.type === "system")).toEqual([]);
    expect(of(entries, "launch.create", launch.json.id_launch)[0]?.actor).toEqual(byKey);
    expect(of(entries, "launch.edit", launch.json.id_launch)[0]?.actor).toEqual(byKey);
    expect(of(entries, "launch.upload_leads", launch.json.id_launch)[0]?.actor).toEqual(byKey);
    expect(of(entries, "group_action.create", action.json.id_action)[0]?.actor).toEqual(byKey);
    // One entry for the action's start and one for its end, not one per group.
    expect(entries.filter((e) => e.target === action.json.id_action && e.actor.type === "system").map((e) => [e.action, e.actor])).toEqual([
      ["group_action.complete", byService],
      ["group_action.start", byService],
    ]);
    expect(of(entries, "group_action.cancel", scheduled.json.id_action)[0]?.actor).toEqual(byKey);
    expect(of(entries, "integration.create", "hotmart")[0]?.actor).toEqual(byOwner);
    expect(of(entries, "integration.edit", "hotmart")[0]?.actor).toEqual(byKey);
    expect(of(entries, "integration.delete", "hotmart")[0]?.actor).toEqual(byOwner);
    expect(entries.every((e) => e.outcome === "ok")).toBe(true);

    const all = JSON.stringify(entries);
    const signingSecret: string = rotated.json.result.data.signing_secret;
    for (const secret of [password, owner.apiKey, secretHottok, hotmartCreds.hottok, hotmartCreds.client_secret, signingSecret, "Olá!", "lead@example.com"]) {
      expect(all).not.toContain(secret);
    }
  }, 180_000);

  it("a buyer's removal queued by the service", async () => {
    const l = await launchWithGroups(server.url, { groups: 1 });
    expect((await l.api("PUT", `/api/external/edit-launch/${l.id}`, { buyers: { remove_from_groups: true } })).status).toBe(200);
    await joinGroup(l.api, l.groups[0], ["5531987654321"]);
    const hook = await hotmartHook(l.api.tenantId);
    expect((await postHotmartTo(server.url, hook, hotmartBody("PURCHASE_APPROVED", "HP-AUD-1", "+55 (31) 98765-4321"))).status).toBe(200);
    const entries = await eventually(
      () => auditLog(l.api),
      (es) => of(es, "launch.buyer_removal").length > 0,
    );
    expect(of(entries, "launch.buyer_removal", l.id).map((e) => e.actor)).toEqual([{ type: "system", id: null, label: "service" }]);
    expect(JSON.stringify(entries)).not.toContain(hotmartCreds.hottok);
  }, 120_000);

  it("partner apps: registered and consented to by members, the app's own token exchange and revocation under its name; the consent needs an admin", async () => {
    const owner = await ownerAccount(server.url, "Loja com app");
    const editor = await joinThroughInvitation(server.url, owner, "editor");
    const viewer = await joinThroughInvitation(server.url, owner, "viewer");
    const registered = await owner.trpc.mutate("partnerApps.register", {
      name: "Painel Auditado",
      logo_url: "https://parceiro.example.com/logo.png",
      homepage_url: "https://parceiro.example.com",
      privacy_url: "https://parceiro.example.com/privacidade",
      redirect_uris: ["http://127.0.0.1:8765/callback"],
      scopes: ["statistics:read"],
      client_type: "confidential",
    });
    expect(registered.status, registered.text).toBe(200);
    const { app, client_secret } = registered.json.result.data as { app: { client_id: string }; client_secret: string };
    await approvePartnerScopes(await getDb(), app.client_id);
    const appCreds = { client_id: app.client_id, client_secret, redirect_uri: "http://127.0.0.1:8765/callback" };

    // An editor or a viewer cannot authorize an app for the account (403 access_denied); nothing is written.
    const fields = {
      client_id: app.client_id,
      redirect_uri: appCreds.redirect_uri,
      response_type: "code",
      scope: "statistics:read",
      state: "s",
      code_challenge: "a".repeat(43),
      code_challenge_method: "S256",
    };
    for (const member of [editor, viewer]) {
      const user = { tenantId: owner.tenantId, apiKey: "", email: member.email, cookie: member.cookie };
      expect((await consentData(server.url, user, fields)).status).toBe(200);
      const refused = await decide(server.url, user, fields, true);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ success: false, error: "access_denied" });
    }

    const tokens = await authorizeApp(
      server.url,
      { tenantId: owner.tenantId, apiKey: owner.apiKey, email: owner.email, cookie: owner.cookie },
      appCreds,
      "statistics:read",
    );
    const revoked = await fetch(`${server.url}/api/oauth/revoke`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${app.client_id}:${client_secret}`).toString("base64")}`,
      },
      body: new URLSearchParams({ token: tokens.refresh_token }),
    });
    expect(revoked.status).toBe(200);

    const entries = await auditLog(owner.api);
    const byOwner = expect.objectContaining({ type: "member", label: owner.email });
    const byApp = expect.objectContaining({ type: "partner_app", id: app.client_id, label: "Painel Auditado" });
    expect(of(entries, "partner_app.register", app.client_id).map((e) => e.actor)).toEqual([byOwner]);
    expect(of(entries, "partner_app.consent", app.client_id).map((e) => e.actor)).toEqual([byOwner]);
    const [authorized] = of(entries, "partner_app.authorize");
    expect(authorized?.actor).toEqual(byApp);
    expect(of(entries, "partner_app.revoke_refresh_token", authorized?.target ?? "").map((e) => e.actor)).toEqual([byApp]);
    const all = JSON.stringify(entries);
    for (const secret of [password, client_secret, tokens.access_token, tokens.refresh_token]) expect(all).not.toContain(secret);
    // The refused consents left nothing (their denial is the decision's 403).
    expect(entries.filter((e) => e.action.startsWith("partner_app.") && [editor.email, viewer.email].includes(e.actor.label ?? ""))).toEqual([]);
  }, 120_000);

  it("a tampered session cookie is 401 and writes nothing", async () => {
    const owner = await ownerAccount(server.url, "Loja do cookie");
    const before = await auditLog(owner.api);
    const value = owner.cookie.match(/next-auth\.session-token=([^;]+)/)![1];
    const i = Math.floor(value.length / 2);
    const flipped = value.slice(0, i) + (value[i] === "A" ? "B" : "A") + value.slice(i + 1);
    const tampered = dashboard(server.url, owner.cookie.replace(value, flipped));
    const res = await tampered.mutate("apiKeys.create", { name: "com cookie adulterado" });
    expect(res.status).toBe(401);
    expect((await tampered.mutate("settings.edit", { timezone: "America/Sao_Paulo" })).status).toBe(401);
    expect(await auditLog(owner.api)).toEqual(before);
  }, 60_000);
});
