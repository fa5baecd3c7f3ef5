/**
 * Numbers in a real browser (docs/numbers.md): the settings' presets fill the number_health fields and the
 * pacing; the channels page shows each number's health (driven through the simulator's controls: a rate limit
 * that cools the number, a ban, a logout, a new pairing), its warm-up day and today's usage against its caps
 * (a campaign sent through it); a number's own limits edited there.
 */
import type { Page } from "playwright-core";
import { apiCaller, channelIdOf, createApiKey, createChannel, nav, newAccount, signUp, tallScreenshot, withPage } from "./flows";
import { assert, eventually, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

const rowOf = (page: Page, name: string) => page.getByRole("row").filter({ has: page.getByRole("link", { name, exact: true }) });
const meter = (page: Page, channel: string, label: string) => rowOf(page, channel).getByRole("meter", { name: `${label} hoje` });

export const tests: E2ETest[] = [
  {
    name: "numbers: presets, health badges from the simulator, usage against caps, a number's own limits",
    async run(ctx) {
      const { log, baseUrl } = ctx;
      await withPage(ctx, async (page) => {
        await signUp(page, newAccount("num"));
        const apiKey = await createApiKey(page, "Chave do simulador");
        const call = apiCaller(baseUrl, apiKey);
        const api = (path: string, body: unknown) => call("POST", path, body);
        /** A campaign to these groups of the channel, through the API; its id. */
        const campaignTo = async (channel: string, groups: string[]) => {
          const seg = await call("POST", "/api/external/create-segment", { name: `S ${groups.length}`, id_channel: [channel], groups });
          return (await call("POST", "/api/external/create-campaign/message", { name: "Oferta", id_segment: seg.id_segment, message: "Olá!" }))
            .id_campaign as string;
        };

        // Settings: the "Seguro" preset fills the number's budget and the pauses; saved, it is marked.
        await nav(page, "Configurações").click();
        await expectUrl(page, /\/settings$/);
        await page.getByRole("button", { name: /^Seguro/ }).click();
        assert((await page.getByLabel("Dias de aquecimento").inputValue()) === "14", "Seguro did not fill the warm-up days");
        assert((await page.getByLabel("Mensagens no 1º dia de aquecimento").inputValue()) === "20", "Seguro did not fill day 1's cap");
        assert((await page.getByLabel("Mensagens por dia por número").inputValue()) === "300", "Seguro did not fill the daily cap");
        assert((await page.getByLabel("Grupos criados por dia por número").inputValue()) === "5", "Seguro did not fill the group cap");
        assert((await page.getByLabel("Pausa mínima entre envios").inputValue()) === "20", "Seguro did not fill the pacing");
        await page.getByRole("button", { name: "Salvar alterações" }).click();
        await expectText(page.getByRole("region", { name: "Salvar configurações" }), /Salvo\..*Dias de aquecimento/);
        assert((await page.getByRole("button", { name: /^Seguro/ }).getAttribute("aria-pressed")) === "true", "the saved preset is not marked");
        await tallScreenshot(ctx, page, "numbers-01-settings-presets");
        log("Seguro preset filled and saved");

        // Two numbers paired now: day 1 of the warm-up, 20 messages and 5 groups today.
        await createChannel(page, "Número A");
        await createChannel(page, "Número B");
        const a = await channelIdOf(page, "Número A");
        const b = await channelIdOf(page, "Número B");
        for (const name of ["Número A", "Número B"]) {
          await expectText(rowOf(page, name), "Aquecendo");
          await expectText(rowOf(page, name), "Dia 1 de aquecimento");
          // The simulator writes its numbers as the platform does: a DDD ≥ 31 mobile without its ninth digit.
          await expectText(rowOf(page, name), /\+55(31|41|48|51|61|71|81|85|91)8\d{7}/);
          await expectText(rowOf(page, name), "0 / 20");
          await expectText(rowOf(page, name), "0 / 5");
          assert((await meter(page, name, "Mensagens").getAttribute("max")) === "20", `${name}: the messages meter's max is not 20`);
        }
        log(`${a} and ${b} warming, usage 0 / 20 messages and 0 / 5 groups`);

        // B's own limits: 10 messages a day (below the ramp's 20), back to the account's groups cap.
        await page.getByRole("button", { name: "Limites do canal Número B" }).click();
        const limits = page.getByRole("form", { name: "Limites do número Número B" });
        await limits.getByLabel("Mensagens por dia").fill("10");
        await limits.getByRole("button", { name: "Salvar limites" }).click();
        await expectText(rowOf(page, "Número B"), "0 / 10");
        await expectText(rowOf(page, "Número A"), "0 / 20");

        // Sends count against the day: a campaign of 3 groups through A (no pauses now, no gap) is 3 of its 20.
        await call("PATCH", "/api/external/edit-settings", {
          dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 5, min_campaign_interval: 0, max_campaign_interval: 0 },
          number_health: { min_send_gap_seconds: 0 },
        });
        const groupsOfA = (await call("GET", `/api/external/list-groups/${a}`)).groups.map((g: { id_group: string }) => g.id_group) as string[];
        const first = await campaignTo(a, groupsOfA.slice(0, 3));
        await eventually(async () => {
          const info = await call("GET", `/api/external/info-campaign/${first}`);
          assert(info.status === "completed", `campaign ${first} is ${info.status}`);
        }, 30_000);
        await eventually(async () => {
          await page.reload();
          await expectText(rowOf(page, "Número A"), "3 / 20", 2000);
        }, 20_000);
        log("a campaign of 3 groups through A: 3 / 20 today");

        // The platform lets A send 4 messages a minute (3 went out just now): of 2 more, the second is refused as
        // rate-limited and A cools down.
        await api(`/api/simulator/channels/${a}/state`, { rate_limit_per_minute: 4 });
        await campaignTo(a, groupsOfA.slice(3, 5));
        await eventually(async () => {
          await page.reload();
          await expectText(rowOf(page, "Número A"), /Resfriando até \d\d:\d\d/, 2000);
        }, 30_000);
        await expectText(rowOf(page, "Número A"), "4 / 20");
        await tallScreenshot(ctx, page, "numbers-02-channels-cooling");
        log("A rate-limited by the platform: Resfriando, 4 / 20");

        // The platform bans A and logs B out: each badge says so, with what to do in its title.
        await api(`/api/simulator/channels/${a}/state`, { health: "banned" });
        await api(`/api/simulator/channels/${b}/state`, { health: "logged_out" });
        await page.reload();
        await expectText(rowOf(page, "Número A"), "Banido");
        await expectText(rowOf(page, "Número A"), "Desconectado");
        await expectText(rowOf(page, "Número B"), "Sessão encerrada");
        const title = await rowOf(page, "Número A").locator("[data-health]").getAttribute("title");
        assert(title?.includes("conecte outro número"), `the banned badge does not say what to do: ${title}`);
        await tallScreenshot(ctx, page, "numbers-03-channels-banned");
        log("A banned, B logged out: badges shown");

        // A paired again: warming again (same number, still its day 1), the page follows on its own.
        await api(`/api/simulator/channels/${a}/state`, { connected: true });
        await eventually(async () => {
          await expectText(rowOf(page, "Número A"), "Aquecendo", 2000);
        }, 20_000);
        await expectVisible(rowOf(page, "Número B").getByText("Sessão encerrada"));
        await tallScreenshot(ctx, page, "numbers-04-channels-paired-again");
        log("A paired again: Aquecendo");
      });
    },
  },
];
