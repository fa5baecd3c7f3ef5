/**
 * A campaign on several numbers in a real browser (docs/numbers.md#the-campaign-page): two numbers in the same
 * groups (the simulator's §7 controls join and promote the second one), a paced campaign; the campaign page's
 * Números card shows each number's share as info-campaign's `channels` gives it; the simulator bans one number
 * mid-campaign and the card says it is skipped and why while the other number finishes; at the end the split
 * equals the simulator's message log per number. A campaign whose other groups only the banned number is in then
 * waits, paused, and the page says why. The card fits a 390 px wide phone.
 */
import type { Locator, Page } from "playwright-core";
import { apiCaller, channelIdOf, createApiKey, createChannel, newAccount, signUp, tallScreenshot, withPage } from "./flows";
import { assert, eventually, expectCount, expectText, expectVisible, type E2ETest } from "./harness";

interface Share {
  id_channel: string;
  sent: number;
  pending: number;
  failed: number;
}

const numbersCard = (page: Page) => page.getByRole("list", { name: "Grupos por número" });
const numberRow = (page: Page, name: string) => numbersCard(page).getByRole("listitem", { name: `Número ${name}`, exact: true });

/** One number's share as the card shows it ("7 de 12 grupos (58%) · enviados 5 · pendentes 2 · falhas 0"). */
async function shownShare(row: Locator): Promise<Omit<Share, "id_channel"> & { groups: number; total: number }> {
  const text = (await row.locator(".number-counts").textContent({ timeout: 1000 })) ?? "";
  const m = /(\d+) de (\d+) grupos \((\d+)%\) · enviados (\d+) · pendentes (\d+) · falhas (\d+)/.exec(text);
  assert(m, `unexpected share text: ${JSON.stringify(text)}`);
  const [groups, total, percent, sent, pending, failed] = m.slice(1).map(Number);
  assert(groups === sent + pending + failed, `the share's groups (${groups}) are not its sent + pending + failed: ${text}`);
  assert(percent === Math.round((groups / total) * 100), `the share's percentage is wrong: ${text}`);
  return { groups, total, sent, pending, failed };
}

export const tests: E2ETest[] = [
  {
    name: "campaign page: the per-number split, a banned number skipped with its reason while the other finishes",
    async run(ctx) {
      const { log, baseUrl } = ctx;
      await withPage(ctx, async (page) => {
        await signUp(page, newAccount("cnum"));
        const apiKey = await createApiKey(page, "Chave do simulador");
        const call = apiCaller(baseUrl, apiKey);
        const info = (id: string) => call("GET", `/api/external/info-campaign/${id}`);
        const sentBy = async (id: string) => {
          const out: Record<string, number> = {};
          for (const m of (await call("GET", `/api/simulator/messages?id_campaign=${id}`)).messages as { id_channel: string }[]) {
            out[m.id_channel] = (out[m.id_channel] ?? 0) + 1;
          }
          return out;
        };

        await createChannel(page, "Celular A");
        await createChannel(page, "Celular B");
        const a = await channelIdOf(page, "Celular A");
        const b = await channelIdOf(page, "Celular B");
        const names: Record<string, string> = { [a]: "Celular A", [b]: "Celular B" };
        const phoneOfB = (await call("GET", `/api/external/info-channel/${b}`)).phone as string;
        const groupsOf = async (channel: string) =>
          ((await call("GET", `/api/external/list-groups/${channel}`)).groups as { id_group: string }[]).map((g) => g.id_group);
        // B joins 12 of A's groups and is made admin there, as launch teams do (simulator §7).
        const shared = (await groupsOf(a)).slice(0, 12);
        for (const g of shared) {
          await call("POST", `/api/simulator/groups/${encodeURIComponent(g)}/participants`, { join: [phoneOfB] });
          await call("POST", `/api/simulator/groups/${encodeURIComponent(g)}/participants`, { promote: [phoneOfB] });
        }
        const bothSegment = (await call("POST", "/api/external/create-segment", { name: "Dois números", id_channel: [a, b], groups: shared })).id_segment;
        // For the end: three groups only B is in and one only A is in (made now, while B can still list its groups).
        const onlyB = (await groupsOf(b)).slice(0, 3);
        const onlyA = (await groupsOf(a)).slice(shared.length, shared.length + 1);
        const bSegment = (await call("POST", "/api/external/create-segment", { name: "Mais o B", id_channel: [a, b], groups: [...onlyB, ...onlyA] }))
          .id_segment;
        // Paced: one group every 2 s, so the ban lands mid-campaign and the page can follow it.
        await call("PATCH", "/api/external/edit-settings", {
          dispatch_rates: { min_dispatch_rate: 2, max_dispatch_rate: 2, dispatches_per_loop: 1, min_campaign_interval: 0, max_campaign_interval: 0 },
        });
        const id = (await call("POST", "/api/external/create-campaign/message", { name: "Aula ao vivo", id_segment: bothSegment, message: "Hoje às 20h!" }))
          .id_campaign as string;
        log(`two numbers in ${shared.length} groups, campaign ${id} paced at 2 s`);

        await page.goto(`/campaigns/${id}`);
        await expectVisible(page.getByRole("heading", { name: "Números", level: 2 }));
        await expectText(numberRow(page, "Celular A"), /\+55\d{10,11}/);
        await expectText(numberRow(page, "Celular B"), `+${phoneOfB}`);
        await expectText(numberRow(page, "Celular B"), "Saudável");

        /** The card equals info-campaign's `channels` read at the same moment (retried: both move every 2 s). */
        const splitMatchesInfo = async (campaign: string, groups: number, numbers: number) => {
          let shares: Share[] = [];
          await eventually(async () => {
            shares = (await info(campaign)).channels as Share[];
            assert(shares.length === numbers, `info-campaign lists ${shares.length} channels, not ${numbers}`);
            await expectCount(numbersCard(page).getByRole("listitem"), numbers, 1000);
            for (const s of shares) {
              const shown = await shownShare(numberRow(page, names[s.id_channel]));
              assert(shown.total === groups, `the card counts ${shown.total} groups, not ${groups}`);
              const { sent, pending, failed } = shown;
              assert(
                sent === s.sent && pending === s.pending && failed === s.failed,
                `${names[s.id_channel]}: the card shows ${JSON.stringify({ sent, pending, failed })}, info-campaign ${JSON.stringify(s)}`,
              );
            }
          }, 15_000);
          return shares;
        };
        // Spread evenly at fan-out: 6 and 6.
        const first = await splitMatchesInfo(id, shared.length, 2);
        assert(
          first.every((s) => s.sent + s.pending + s.failed === shared.length / 2),
          `the groups are not spread 6 and 6: ${JSON.stringify(first)}`,
        );
        log(`split on the page = info-campaign: ${JSON.stringify(first)}`);

        // A few sends through each number, then the platform bans B.
        await eventually(async () => {
          const sent = await sentBy(id);
          assert((sent[a] ?? 0) >= 1 && (sent[b] ?? 0) >= 1, `not yet one send through each: ${JSON.stringify(sent)}`);
        }, 30_000);
        await call("POST", `/api/simulator/channels/${b}/state`, { health: "banned" });
        const bannedAt = Date.now();
        const skipped = numberRow(page, "Celular B").getByRole("status");
        await expectText(skipped, "Pulado: banido — os grupos pendentes vão pelos outros números", 10_000);
        await expectText(numberRow(page, "Celular B"), "Banido");
        await expectText(numberRow(page, "Celular B"), "Desconectado");
        assert((await numberRow(page, "Celular A").getByRole("status").count()) === 0, "A is shown as skipped");
        // B's pending groups moved to A while the campaign goes on: B keeps only what it sent.
        await eventually(async () => {
          const bShown = await shownShare(numberRow(page, "Celular B"));
          assert(bShown.pending === 0, `B still shows ${bShown.pending} pending`);
        }, 15_000);
        const midway = await info(id);
        assert(midway.status === "sending", `the campaign is ${midway.status} after the ban, not sending`);
        await tallScreenshot(ctx, page, "campaign-numbers-01-banned-skipped");
        log("B banned: skipped on the page with its reason, its pending groups moved to A");

        // At a phone's width the card still fits: nothing overflows sideways.
        await page.setViewportSize({ width: 390, height: 844 });
        await numbersCard(page).scrollIntoViewIfNeeded();
        const overflow = await numbersCard(page).evaluate((el) => el.scrollWidth - el.clientWidth);
        assert(overflow <= 0, `the numbers card overflows by ${overflow} px at 390 px`);
        await ctx.screenshot(page, "campaign-numbers-02-phone");
        await page.setViewportSize({ width: 1280, height: 860 });

        // A finishes the campaign; at the end the card = info-campaign = the simulator's log per number.
        await eventually(async () => {
          assert((await info(id)).status === "completed", "the campaign has not completed");
        }, 60_000);
        await expectText(page.getByTestId("campaign-status"), "Concluída");
        const final = await splitMatchesInfo(id, shared.length, 2);
        const log1 = await sentBy(id);
        for (const s of final) {
          assert(
            s.sent === (log1[s.id_channel] ?? 0) && s.pending === 0 && s.failed === 0,
            `${names[s.id_channel]}: ${JSON.stringify(s)}, log ${JSON.stringify(log1)}`,
          );
        }
        assert((log1[a] ?? 0) + (log1[b] ?? 0) === shared.length, `not one message per group: ${JSON.stringify(log1)}`);
        const afterBan = ((await call("GET", `/api/simulator/messages?id_campaign=${id}`)).messages as { id_channel: string; sent_at: string }[]).filter(
          (m) => m.id_channel === b && new Date(m.sent_at).getTime() > bannedAt,
        );
        assert(afterBan.length === 0, `${afterBan.length} messages went through B after its ban`);
        // A finished campaign skips nothing any more: B's badge says banned, no "Pulado" line.
        assert((await numbersCard(page).getByRole("status").count()) === 0, "a finished campaign still shows a number skipped");
        await tallScreenshot(ctx, page, "campaign-numbers-03-completed");
        log(`completed: the page's split = info-campaign = the simulator's log ${JSON.stringify(log1)}`);

        // Groups only the banned number is in: once A sent its one group the campaign waits, paused, and the page
        // says why (a campaign that cannot send anything from its start stays pending instead: nothing started).
        const waiting = (await call("POST", "/api/external/create-campaign/message", { name: "Mais o B", id_segment: bSegment, message: "Oi!" }))
          .id_campaign as string;
        await page.goto(`/campaigns/${waiting}`);
        await expectText(page.getByTestId("campaign-status"), "Pausada · canal desconectado", 30_000);
        assert((await info(waiting)).pause_reason === "channel_offline", "info-campaign does not say channel_offline");
        const stalled = await splitMatchesInfo(waiting, onlyB.length + 1, 2);
        const stalledOf = (channel: string) => stalled.find((x) => x.id_channel === channel);
        assert(
          stalledOf(a)?.sent === 1 && stalledOf(b)?.sent === 0 && stalledOf(b)?.pending === onlyB.length,
          `the waiting campaign's split: ${JSON.stringify(stalled)}`,
        );
        await expectText(numberRow(page, "Celular B").getByRole("status"), "Pulado: banido — os grupos pendentes esperam um número que possa enviar");
        assert((await numberRow(page, "Celular A").getByRole("status").count()) === 0, "A is shown as skipped");
        await tallScreenshot(ctx, page, "campaign-numbers-04-paused");
        log("B's groups wait: paused as channel_offline, B skipped with its groups waiting, A sent its one");
      });
    },
  },
];
