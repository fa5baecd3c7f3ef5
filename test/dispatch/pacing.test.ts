/**
 * The pacing pause counts from the provider's last answer of a loop (docs/dispatch.md "How pacing, the
 * queue and the schedule interact"): however long the loop's recording and release take, the next loop
 * is due `pause` after that answer, not `pause` after the step ends. The step is driven by hand with a
 * clock that jumps 10 s just after the provider has answered (a recording that took 10 s).
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaigns } from "../../db/schema";
import { runCampaignStep } from "../../server/dispatch/run-campaign-step";
import type { MessagingProvider, OutboundMessage, SendManyOptions } from "../../server/messaging/provider";
import { getServices } from "../../server/services";
import { createCampaign, tenantWithSegment } from "../campaigns";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe("pacing", () => {
  it("the next loop is due `pause` after the provider's last answer, however long recording it took", async () => {
    const { api, segment } = await tenantWithSegment(server.url, 3, 1);
    const settings = await api("PATCH", "/api/external/edit-settings", { dispatch_rates: { min_dispatch_rate: 2, max_dispatch_rate: 2 } });
    expect(settings.status).toBe(200);
    const { id_campaign: id } = await createCampaign(api, segment);
    const { db, provider: sim } = await getServices();

    let offset = 0;
    let jumpAfterNextRead = false;
    // The step reads the clock once right after the answer; from then on it is 10 s later.
    const clock = () => {
      const now = new Date(Date.now() + offset);
      if (jumpAfterNextRead) {
        jumpAfterNextRead = false;
        offset += 10_000;
      }
      return now;
    };
    const answers: Date[] = [];
    const provider = Object.create(sim) as MessagingProvider;
    provider.sendMany = async (messages: OutboundMessage[], options?: SendManyOptions) => {
      const outcomes = await sim.sendMany(messages, options);
      answers.push(new Date(Date.now() + offset));
      jumpAfterNextRead = true;
      return outcomes;
    };
    const leaseOf = async () => (await db.select({ until: campaigns.leaseUntil }).from(campaigns).where(eq(campaigns.id, id)))[0].until;
    for (let loop = 0; loop < 3; loop++) {
      const outcome = await runCampaignStep({ db, provider, clock }, id);
      expect(outcome).toMatchObject({ plan: "send", sent: 1 });
      // The loop's sent mark let the campaign go (docs/dispatch.md "What one loop costs").
      expect(await leaseOf()).toBeNull();
      const answered = answers[loop].getTime();
      if (loop === 2) {
        // The last group: due at once (to finish), not after the pause.
        expect(outcome.nextRunAt!.getTime() - answered).toBeLessThan(100);
        break;
      }
      // Due 2 s after the answer (give or take the milliseconds between the answer and the clock read), not 12 s.
      expect(outcome.nextRunAt!.getTime() - answered).toBeGreaterThanOrEqual(2000);
      expect(outcome.nextRunAt!.getTime() - answered).toBeLessThan(2100);
      offset = outcome.nextRunAt!.getTime() - Date.now();
    }
    const finished = await runCampaignStep({ db, provider, clock }, id);
    expect(finished).toMatchObject({ plan: "finish", status: "completed", nextRunAt: null });
  });
});
