import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { channels } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { newId } from "../../server/ids";
import { ProviderSendError, type ProviderEvent } from "../../server/messaging/provider";
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
