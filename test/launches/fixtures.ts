import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { getDb } from "../../db/client";
import { launches, launchGroups, outboxEvents } from "../../db/schema";
import type { ProviderEvent } from "../../server/messaging/provider";
import { GroupActionRunner } from "../../inngest/in-process/group-action-runner";
import { getServices } from "../../server/services";
import { tenantWithSegment } from "../campaigns";
import { startEvolutionService } from "../evolution-service";
import type { FakeEvolution } from "../fake-evolution";
import { type Api, newTenant, until } from "../helpers";
import { startTestServer } from "../http-server";

/**
 * A tenant with a connected simulated channel and a launch holding `groups` of the channel's groups
 * (positions 1…n, the first filling), written straight to the tables: the launch endpoints (core16)
 * are not needed to test what happens to its members.
 */
export async function launchWithGroups(
  baseUrl: string,
  opts: {
    groups?: number;
    capacity?: number;
    margin?: number;
    staff?: string[];
    admins?: string[];
    status?: "active" | "paused" | "closed";
    /** A tenant, channel and segment made elsewhere (a channel on another provider): its groups become the launch's. */
    base?: Awaited<ReturnType<typeof tenantWithSegment>>;
  } = {},
) {
  const n = opts.groups ?? 2;
  const { api, segment, groups, channel } = opts.base ?? (await tenantWithSegment(baseUrl, n));
  const db = await getDb();
  const id = `launch_${randomUUID()}`;
  const slug = `l-${randomUUID().slice(0, 8)}`;
  await db.insert(launches).values({
    id,
    tenantId: api.tenantId,
    name: "Turma 7",
    slug,
    segmentId: segment,
    channelIds: [channel],
    groupTemplate: { name: "Turma 7 #{n}", admins_only: false, admins: opts.admins ?? [] },
    capacity: opts.capacity ?? 1000,
    margin: opts.margin ?? 20,
    reserve: 1,
    staffNumbers: opts.staff ?? [],
    status: opts.status ?? "active",
  });
  await db.insert(launchGroups).values(
    groups.map((g, i) => ({
      launchId: id,
      position: i + 1,
      groupId: g,
      channelId: channel,
      name: `Turma 7 #${i + 1}`,
      inviteUrl: `https://chat.whatsapp.com/code${i + 1}${slug}`,
      status: i === 0 ? ("filling" as const) : ("reserve" as const),
    })),
  );
  return { api, id, slug, channel, groups, segment };
}

/** A participant event as the provider would emit it (the simulator's control endpoints do the same). */
export async function emitParticipants(channelId: string, groupId: string, action: "join" | "leave", participants: string[], at = new Date()) {
  const { provider } = await getServices();
  const event: ProviderEvent = { type: "group_participants", channelId, groupId, action, participants, at };
  await (provider as unknown as { events: { emit(e: ProviderEvent): Promise<void> } }).events.emit(event);
}

export async function groupRows(launchId: string) {
  const db = await getDb();
  return db.select().from(launchGroups).where(eq(launchGroups.launchId, launchId)).orderBy(launchGroups.position);
}

/** The group_activity events recorded for a tenant, oldest first (their `data`). */
export async function groupActivity(tenantId: string) {
  const db = await getDb();
  const rows = await db
    .select()
    .from(outboxEvents)
    .where(and(eq(outboxEvents.tenantId, tenantId), eq(outboxEvents.type, "group_activity")))
    .orderBy(outboxEvents.id);
  return rows.map((r) => (r.payload as { data: Record<string, any> }).data);
}

/** A tenant with a channel paired on the fake Evolution gateway, a segment of its first `groups` groups (default 2) and a launch holding them. */
export async function evolutionLaunch(baseUrl: string, fake: FakeEvolution, opts: { groups?: number; staff?: string[]; admins?: string[] } = {}) {
  const api: Api = await newTenant(baseUrl, { channelLimit: 50 });
  const { json: ch } = await api("POST", "/api/external/create-channel", { name: "Evo" });
  const channel = ch.id_channel as string;
  await fake.pair(channel);
  await until(
    async () => (await api("PUT", `/api/external/edit-channel/${channel}`, { name: "Evo" })).json.status,
    (s) => s === "connected",
  );
  const groups = ((await api("GET", `/api/external/list-groups/${channel}`)).json.groups as { id_group: string }[])
    .slice(0, opts.groups ?? 2)
    .map((g) => g.id_group);
  const { json: seg } = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [channel], groups });
  return launchWithGroups(baseUrl, { ...opts, base: { api, channel, groups, segment: seg.id_segment } });
}

/** People join a simulated group through the simulator's control endpoint (the platform emits their participant event). */
export async function joinGroup(api: Api, group: string, phones: string[]) {
  const res = await api("POST", `/api/simulator/groups/${encodeURIComponent(group)}/participants`, { join: phones });
  if (res.status !== 200) throw new Error(`simulator join answered ${res.status}: ${res.text}`);
}

/** Who the simulated platform lists in the group now. */
export async function groupParticipants(api: Api, group: string) {
  const res = await api("GET", `/api/simulator/groups/${encodeURIComponent(group)}/participants`);
  if (res.status !== 200) throw new Error(`simulator participants answered ${res.status}: ${res.text}`);
  return (res.json.participants as { participant: string }[]).map((p) => p.participant);
}

/** The test HTTP server with the group-action engine's in-process runner (GROUP_ACTION_GAP_MS scales a number's 2 s pace). */
export async function serverWithGroupActions(gapMs = "60") {
  process.env.GROUP_ACTION_GAP_MS = gapMs;
  const server = await startTestServer();
  const runner = new GroupActionRunner(await getServices(), { intervalMs: 200 }).start();
  return {
    server,
    async stop() {
      await runner.stop();
      await server.close();
      delete process.env.GROUP_ACTION_GAP_MS;
    },
  };
}

/**
 * MESSAGING_PROVIDER=evolution against the fake gateway (as 2.3.7 answers), with the group-action engine's in-process
 * runner at a 50 ms pace: for group actions the service makes itself (buyer removals, moderation).
 */
export async function evolutionWithGroupActions() {
  process.env.GROUP_ACTION_GAP_MS = "50";
  const started = await startEvolutionService({ env: { EVOLUTION_TIMEOUT_MS: "5000" } });
  const runner = new GroupActionRunner(started.services, { intervalMs: 200 }).start();
  return {
    fake: started.fake,
    server: started.server,
    async stop() {
      await runner.stop();
      await started.server.close();
      await started.fake.close();
      delete process.env.GROUP_ACTION_GAP_MS;
    },
  };
}
