/**
 * What the dashboard's Cronograma reads (docs/groups.md#dashboard): the campaigns of one segment (a launch's), beside the
 * launch's group actions; the tRPC procedure the dashboard calls with its session.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { createCallerFactory } from "../../server/trpc";
import { createCampaign, tenantWithSegment } from "../campaigns";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe("campaigns.list for the Cronograma", () => {
  it("of one segment lists that segment's campaigns only, each with its id_segment; without a segment, all of the account's", async () => {
    const first = await tenantWithSegment(server.url, 2);
    const second = await tenantWithSegment(server.url, 2, 5, first.api);
    const a = await createCampaign(first.api, first.segment, { name: "Aula 1" });
    const b = await createCampaign(first.api, second.segment, { name: "Outra turma" });
    const { db, provider } = await getServices();
    const caller = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: first.api.tenantId, userId: "u", role: "owner" },
      now: new Date(),
    });

    const ofFirst = await caller.campaigns.list({ id_segment: first.segment });
    expect(ofFirst.map((c) => [c.id_campaign, c.id_segment])).toEqual([[a.id_campaign, first.segment]]);
    expect((await caller.campaigns.list({ id_segment: second.segment })).map((c) => c.id_campaign)).toEqual([b.id_campaign]);
    expect((await caller.campaigns.list()).map((c) => c.id_campaign).sort()).toEqual([a.id_campaign, b.id_campaign].sort());
  });
});
