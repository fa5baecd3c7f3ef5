import { randomUUID } from "node:crypto";
import { InngestTestEngine } from "@inngest/test";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { launchGroups } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { createChannel } from "../../server/channels/create-channel";
import { createLaunch } from "../../server/launches/create-launch";
import { groupsOfLaunch } from "../../server/launches/launch/find-launch";
import { applyRestatus } from "../../server/launches/launch/restatus-groups";
import { createLaunchInput } from "../../server/launches/launch/schema";
import { getServices } from "../../server/services";
import { inngestEnv, restoreInngestEnvAfterEach } from "../../test/helpers";
import { startLaunchEngine } from "../start";
import { functions } from "../served";
import { launchEngine } from "../engines/launches";

async function fullLaunch() {
  const { db, provider } = await getServices();
  const { tenantId } = await createTenant(db, { name: "Motor", email: `m-${randomUUID()}@example.test`, password: "senha-segura-123" });
  const channel = await createChannel(db, provider, tenantId, "Canal", new Date());
  const input = createLaunchInput.parse({ name: "Motor", id_channel: [channel.id], group_template: { name: "Motor #{n}" }, capacity: 5, margin: 1 });
  const { launch } = await createLaunch(db, provider, tenantId, input, new Date());
  await db.transaction(async (tx) => {
    await tx
      .update(launchGroups)
      .set({ members: 4 })
      .where(and(eq(launchGroups.launchId, launch.id), eq(launchGroups.position, 1)));
    await applyRestatus(tx, launch.id);
  });
  return launch;
}

describe("launch-engine (Inngest function)", () => {
  let t: InngestTestEngine;
  beforeEach(() => {
    t = new InngestTestEngine({ function: launchEngine });
  });

  it("is served, every minute and on launch/wake.requested", () => {
    expect(functions).toContain(launchEngine);
    const opts = JSON.stringify(launchEngine.opts ?? {});
    expect(opts).toContain("* * * * *");
    expect(opts).toContain("launch/wake.requested");
  });

  it("on a wake-up, makes the next group of a launch whose groups are full", async () => {
    const launch = await fullLaunch();
    const { result } = await t.execute({ events: [{ name: "launch/wake.requested", data: { id_launch: launch.id } }] });
    expect(result).toEqual({ created: 1 });
    const groups = await groupsOfLaunch(await getDb(), launch.id);
    expect(groups.map((g) => [g.name, g.status])).toEqual([
      ["Motor #1", "full"],
      ["Motor #2", "filling"],
    ]);
  });
});

describe("startLaunchEngine", () => {
  restoreInngestEnvAfterEach();

  it("is embedded without Inngest and hands wake-ups to Inngest with it", async () => {
    for (const k of inngestEnv) delete process.env[k];
    const embedded = startLaunchEngine(await getServices(), { intervalMs: 60_000 });
    expect(embedded.kind).toBe("in-process");
    await embedded.stop();
    process.env.INNGEST_DEV = "1";
    const viaInngest = startLaunchEngine(await getServices());
    expect(viaInngest.kind).toBe("inngest");
    await viaInngest.stop();
  });
});
