import { randomUUID } from "node:crypto";
import { InngestTestEngine } from "@inngest/test";
import { and, eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launchGroups, launchWelcomes } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { createChannel } from "../../server/channels/create-channel";
import { createLaunch } from "../../server/launches/create-launch";
import { createLaunchInput } from "../../server/launches/launch/schema";
import { getServices } from "../../server/services";
import { welcomeEngine } from "../engines/welcomes";
import { functions } from "../served";

it("welcome-engine is served, every minute and on launch/wake.requested", () => {
  expect(functions).toContain(welcomeEngine);
  const opts = JSON.stringify(welcomeEngine.opts ?? {});
  expect(opts).toContain("* * * * *");
  expect(opts).toContain("launch/wake.requested");
});

it("on a launch's wake-up, runs the same pass as the in-process runner: the batch made and sent, once", async () => {
  const { db, provider } = await getServices();
  const { tenantId } = await createTenant(db, { name: "Boas-vindas", email: `w-${randomUUID()}@example.test`, password: "senha-segura-123" });
  const channel = await createChannel(db, provider, tenantId, "Canal", new Date());
  const input = createLaunchInput.parse({
    name: "Boas-vindas",
    id_channel: [channel.id],
    group_template: { name: "Turma #{n}" },
    welcome: { text: "Oi!", after_joins: 2 },
  });
  const { launch } = await createLaunch(db, provider, tenantId, input, new Date());
  const [group] = await (await getDb())
    .select()
    .from(launchGroups)
    .where(and(eq(launchGroups.launchId, launch.id), eq(launchGroups.position, 1)));
  const sim = provider as unknown as { joinParticipants(channelId: string, groupId: string, who: string[]): Promise<unknown> };
  await sim.joinParticipants(channel.id, group.groupId, ["5511977770001", "5511977770002"]);
  const t = new InngestTestEngine({ function: welcomeEngine });
  const { result } = await t.execute({ events: [{ name: "launch/wake.requested", data: { id_launch: launch.id } }] });
  expect(result).toEqual({ made: 1, sent: 1 });
  const again = await new InngestTestEngine({ function: welcomeEngine }).execute({
    events: [{ name: "launch/wake.requested", data: { id_launch: launch.id } }],
  });
  expect(again.result).toEqual({ made: 0, sent: 0 });
  const rows = await (await getDb()).select().from(launchWelcomes).where(eq(launchWelcomes.launchId, launch.id));
  expect(rows.map((r) => [r.state, r.mentions])).toEqual([["sent", ["5511977770001", "5511977770002"]]]);
});
