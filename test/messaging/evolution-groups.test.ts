import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { channels, evolutionGroupCreations, evolutionInstances } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { newId } from "../../server/ids";
import { ProviderOutcomeUnknownError, ProviderSendError, type NewGroup, type ProviderEvent } from "../../server/messaging/provider";
import { startEvolutionProvider } from "../evolution-harness";

// docs/evolution.md#groups-for-launches: what the contract suite cannot say in general — LIDs, a lost
// create answer, Evolution's need for a participant.
let h: Awaited<ReturnType<typeof startEvolutionProvider>>;
let tenantId: string;
const events: ProviderEvent[] = [];

beforeAll(async () => {
  h = await startEvolutionProvider({ timeoutMs: 5000, groupCreateTimeoutMs: 1500 });
  h.provider.subscribe((e) => void events.push(e));
  ({ tenantId } = await createTenant(await getDb(), { name: "Grupos", email: `g-${randomUUID()}@example.test`, password: "senha-segura-123" }));
});
afterAll(() => h.close());

async function channel() {
  const id = newId("channel");
  await (await getDb()).insert(channels).values({ id, tenantId, name: "Evo", status: "connecting", providerRef: "" });
  await h.provider.createChannel({ id, name: "Evo" });
  await h.fake.pair(id);
  return id;
}

const joins = (groupId: string) => events.flatMap((e) => (e.type === "group_participants" && e.groupId === groupId ? [e.participants] : []));
const until = async (ok: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
};

describe("Evolution group participants", () => {
  it("a LID that Evolution resolved becomes the phone number; one it could not resolve stays the LID (never its digits)", async () => {
    const id = await channel();
    const g = await h.provider.createGroup(id, { name: "Turma LID", adminsOnly: false, admins: ["5511988887777"] });
    await h.fake.groupJoin(id, g.id_group, ["111122223333444@lid", "555566667777888@lid", "5511944445555"], {
      resolveLids: { "111122223333444@lid": "5511933332222" },
    });
    await until(() => joins(g.id_group).length > 0);
    expect(joins(g.id_group)).toEqual([["5511933332222", "555566667777888@lid", "5511944445555"]]);
  });

  it("the channel's own number comes from the gateway (ownerJid), digits only", async () => {
    const id = await channel();
    expect(await h.provider.ownNumber(id)).toBe(h.fake.instances.get(id)?.owner);
  });

  it("is only ever the instance's own entry: a gateway that ignores the filter and lost this instance answers no number, never another's", async () => {
    const lost = await channel();
    const other = await channel();
    // A provider that has not cached either number yet (a restarted server).
    const fresh = h.withOptions({});
    h.fake.knobs.ignoresInstanceFilter = true;
    h.fake.instances.delete(lost);
    try {
      expect(await fresh.ownNumber(lost)).toBeNull();
      expect(await fresh.ownNumber(other)).toBe(h.fake.instances.get(other)?.owner);
    } finally {
      h.fake.knobs.ignoresInstanceFilter = false;
    }
  });
});

describe("Evolution group creation", () => {
  it("needs at least one admin (Evolution refuses a group with no participant): a permanent refusal, nothing created", async () => {
    const id = await channel();
    const before = h.fake.instances.get(id)?.groups.length;
    const err = await h.provider.createGroup(id, { name: "Sem admins", adminsOnly: false, admins: [] }).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderSendError);
    expect(err).toMatchObject({ transient: false });
    expect(h.fake.instances.get(id)?.groups.length).toBe(before);
  });

  it("a create whose answer is lost is found among the channel's groups, not made twice", async () => {
    const id = await channel();
    h.fake.knobs.loseCreateAnswers = 1;
    const name = `Turma ${randomUUID().slice(0, 6)} #1`;
    const g = await h.provider.createGroup(id, { name, description: "d", adminsOnly: true, admins: ["5511988887777"] });
    const same = h.fake.instances.get(id)?.groups.filter((x) => x.subject === name) ?? [];
    expect(same.map((x) => x.id)).toEqual([g.id_group]);
    expect(same[0]).toMatchObject({ announce: true, desc: "d" });
  });

  it("a create the gateway refuses for a closed connection is ProviderUnavailableError", async () => {
    const id = await channel();
    await h.fake.setState(id, "close");
    await expect(h.provider.createGroup(id, { name: "Fechado", adminsOnly: false, admins: ["5511988887777"] })).rejects.toMatchObject({
      name: "ProviderUnavailableError",
    });
  });
});

// docs/evolution.md#group-creation-that-never-duplicates: Evolution answers every failure inside
// group/create with one 500, whether WhatsApp made the group or not; the fake does the same by default.
describe("Evolution group creation never makes a second group", () => {
  const template = (name: string, key?: string): NewGroup => ({
    key,
    name,
    description: "Grupo oficial",
    adminsOnly: true,
    admins: ["5511988887777"],
  });
  const named = (id: string, name: string) => h.fake.groupsNamed(id, name);
  const posts = (id: string, name: string) => h.fake.createRequests.filter((r) => r.instance === id && r.subject === name).length;

  for (const [what, message] of [
    ["a 500 after WhatsApp made it (the description failed)", "Error: Timed Out"],
    ["a connection closed after WhatsApp made it", "Connection Closed"],
    ["a rate-overlimit 500 after WhatsApp made it (the metadata read)", "Error: rate-overlimit"],
  ] as const) {
    it(`${what}: the group is found and adopted, one group, its description set`, async () => {
      const id = await channel();
      const name = `Turma ${randomUUID().slice(0, 6)} #1`;
      h.fake.failCreate({ message, after: true });
      const g = await h.provider.createGroup(id, template(name, `k-${randomUUID()}`));
      expect(g).toMatchObject({ name, adopted: true, adminsOnly: true });
      expect(g.rateLimited ?? false).toBe(message.includes("rate-overlimit"));
      expect(named(id, name).map((x) => x.id)).toEqual([g.id_group]);
      expect(named(id, name)[0]).toMatchObject({ desc: "Grupo oficial", announce: true });
      expect(posts(id, name)).toBe(1);
    });
  }

  it("a lost answer (the connection dropped after WhatsApp made it): adopted, one group", async () => {
    const id = await channel();
    const name = `Turma ${randomUUID().slice(0, 6)} #1`;
    h.fake.knobs.loseCreateAnswers = 1;
    const g = await h.provider.createGroup(id, template(name));
    expect(g).toMatchObject({ adopted: true });
    expect(named(id, name).map((x) => x.id)).toEqual([g.id_group]);
  });

  it("a time-out while WhatsApp is still making it: unknown, no second POST, found when asked again", async () => {
    const id = await channel();
    const name = `Turma ${randomUUID().slice(0, 6)} #1`;
    const key = `k-${randomUUID()}`;
    h.fake.knobs.createDelayMs = 2500; // longer than the harness's 1.5-s create time-out
    try {
      const err = await h.provider.createGroup(id, template(name, key)).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderOutcomeUnknownError);
      // Asked again before the gateway finished: still unknown, and nothing is posted again.
      await expect(h.provider.createGroup(id, template(name, key))).rejects.toBeInstanceOf(ProviderOutcomeUnknownError);
      await until(() => named(id, name).length > 0);
    } finally {
      h.fake.knobs.createDelayMs = 800;
    }
    await new Promise((r) => setTimeout(r, 1100)); // past EVOLUTION_RECONCILE_AFTER (1 s here): a new listing is authoritative
    const g = await h.provider.createGroup(id, template(name, key));
    expect(g).toMatchObject({ adopted: true });
    expect(named(id, name).map((x) => x.id)).toEqual([g.id_group]);
    expect(posts(id, name)).toBe(1);
  });

  it("rate-overlimit before WhatsApp made it: a typed rate-limited refusal, nothing made; asked again later, one group", async () => {
    const id = await channel();
    const name = `Turma ${randomUUID().slice(0, 6)} #1`;
    const key = `k-${randomUUID()}`;
    h.fake.failCreate({ message: "Error: rate-overlimit", after: false });
    const err = await h.provider.createGroup(id, template(name, key)).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderSendError);
    expect(err).toMatchObject({ rateLimited: true, transient: true });
    expect(named(id, name)).toEqual([]);
    const g = await h.provider.createGroup(id, template(name, key));
    expect(g.adopted ?? false).toBe(false);
    expect(named(id, name).map((x) => x.id)).toEqual([g.id_group]);
  });

  it("a failure whose look-up cannot list (rate-limited listing): unknown, rate-limited; nothing is made again until the look-up works", async () => {
    const id = await channel();
    const name = `Turma ${randomUUID().slice(0, 6)} #1`;
    const key = `k-${randomUUID()}`;
    h.fake.failCreate({ message: "Error: rate-overlimit", after: true });
    h.fake.knobs.rateLimitGroups = true;
    try {
      const err = await h.provider.createGroup(id, template(name, key)).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderOutcomeUnknownError);
      expect(err).toMatchObject({ rateLimited: true });
      // Even under another key (another request for that name): looked up first, never made again blindly.
      await expect(h.provider.createGroup(id, template(name, `k-${randomUUID()}`))).rejects.toBeInstanceOf(ProviderOutcomeUnknownError);
    } finally {
      h.fake.knobs.rateLimitGroups = false;
    }
    expect(posts(id, name)).toBe(1);
    const g = await h.provider.createGroup(id, template(name, key));
    expect(g).toMatchObject({ adopted: true });
    expect(named(id, name).map((x) => x.id)).toEqual([g.id_group]);
  });

  it("a crash mid-create (a record left pending): the next creation of that name looks it up and adopts it", async () => {
    const id = await channel();
    const name = `Turma ${randomUUID().slice(0, 6)} #1`;
    const startedAt = new Date(Date.now() - 5_000);
    await (await getDb())
      .insert(evolutionGroupCreations)
      .values({ channelId: id, key: "launch:gone:1", subject: name, startedAt, settlesAt: new Date(startedAt.getTime() + 1000) });
    // WhatsApp made it before the process died.
    const inst = h.fake.instances.get(id)!;
    const made = { id: `120363${String(Date.now()).slice(-12)}@g.us`, subject: name, creation: Math.floor(startedAt.getTime() / 1000) + 1, byLid: true };
    inst.groups.push({ ...made, participants: [{ id: inst.lid, admin: "superadmin" }] });
    const g = await h.provider.createGroup(id, template(name, "launch:new:1"));
    expect(g).toMatchObject({ id_group: made.id, adopted: true });
    expect(named(id, name)).toHaveLength(1);
    expect(posts(id, name)).toBe(0);
  });

  it("while another request's creation of that name is under way, none is made beside it (nor its group taken)", async () => {
    const id = await channel();
    const name = `Turma ${randomUUID().slice(0, 6)} #1`;
    const now = Date.now();
    await (await getDb())
      .insert(evolutionGroupCreations)
      .values({ channelId: id, key: "launch:other:1", subject: name, startedAt: new Date(now - 1000), settlesAt: new Date(now + 60_000) });
    const listings = h.fake.counters.fetchAllGroups;
    await expect(h.provider.createGroup(id, template(name, "launch:mine:1"))).rejects.toBeInstanceOf(ProviderOutcomeUnknownError);
    expect(posts(id, name)).toBe(0);
    expect(h.fake.counters.fetchAllGroups).toBe(listings);
  });

  it("the same key asked again (the caller crashed before recording it) answers the same group", async () => {
    const id = await channel();
    const name = `Turma ${randomUUID().slice(0, 6)} #1`;
    const key = `k-${randomUUID()}`;
    const first = await h.provider.createGroup(id, template(name, key));
    const again = await h.provider.createGroup(id, template(name, key));
    expect(again.id_group).toBe(first.id_group);
    expect(named(id, name)).toHaveLength(1);
    // Without a key (or with another) a second group of that name is a new creation.
    const other = await h.provider.createGroup(id, template(name));
    expect(other.id_group).not.toBe(first.id_group);
  });
});

describe("Evolution groups that list the number by its LID", () => {
  /** A group made on a phone, addressed by LID: the number is in it by its LID only, and we never learned that LID. */
  async function lidGroup(id: string, admin: "superadmin" | null) {
    const inst = h.fake.instances.get(id)!;
    const g = { id: `120363${String(Date.now()).slice(-10)}77@g.us`, subject: "Grupo LID", creation: 1714769954, byLid: true };
    inst.groups.push({
      ...g,
      participants: [
        { id: inst.lid, admin },
        { id: "5511977770000@s.whatsapp.net", admin: "superadmin" },
        { id: "9988776655443@lid", admin: null },
      ],
    });
    return g.id;
  }

  it("a group we are in by LID is ours, admin or not, never gone (the invite code tells an admin)", async () => {
    const id = await channel();
    expect(await h.provider.groupState(id, await lidGroup(id, "superadmin"))).toEqual({ exists: true, admin: true, size: 3 });
    expect(await h.provider.groupState(id, await lidGroup(id, null))).toEqual({ exists: true, admin: false, size: 3 });
  });

  it("a group we created is addressed by LID: its LID is learned from the create answer, and the state is read from it", async () => {
    const id = await channel();
    const g = await h.provider.createGroup(id, { name: "Turma LID própria", adminsOnly: false, admins: ["5511988887777"] });
    const inst = h.fake.instances.get(id)!;
    expect(h.fake.group(id, g.id_group)?.participants?.[0]).toEqual({ id: inst.lid, admin: "superadmin" });
    expect(await h.provider.groupState(id, g.id_group)).toEqual({ exists: true, admin: true, size: 2 });
    const [row] = await (await getDb()).select().from(evolutionInstances).where(eq(evolutionInstances.channelId, id));
    expect(row).toMatchObject({ ownLid: inst.lid, ownLidPhone: inst.owner });
    h.fake.loseGroup(id, g.id_group, "not_admin");
    expect(await h.provider.groupState(id, g.id_group)).toMatchObject({ exists: true, admin: false });
    h.fake.loseGroup(id, g.id_group, "gone");
    expect(await h.provider.groupState(id, g.id_group)).toMatchObject({ exists: false });
  });
});
