/**
 * Numbers in a real browser (docs/numbers.md): the settings' presets fill the number_health fields and the
 * pacing; the channels page shows each number's health (driven through the simulator's controls: a ban, a
 * logout, a new pairing), its warm-up day and today's usage against its caps; a number's own limits edited there.
 */
import type { Page } from "playwright-core";
import { channelIdOf, createApiKey, createChannel, nav, newAccount, signUp, tallScreenshot, withPage } from "./flows";
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
        const api = async (path: string, body: unknown) => {
          const res = await fetch(`${baseUrl}${path}`, {
            method: "POST",
            body: JSON.stringify(body),
            headers: { "x-api-key": apiKey, "content-type": "application/json" },
          });
          assert(res.ok, `POST ${path} answered ${res.status}: ${await res.text()}`);
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
          await expectText(rowOf(page, name), /\+55119\d{8}/);
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

        // The platform bans A and logs B out: each badge says so, with what to do in its title.
        await api(`/api/simulator/channels/${a}/state`, { health: "banned" });
        await api(`/api/simulator/channels/${b}/state`, { health: "logged_out" });
        await page.reload();
        await expectText(rowOf(page, "Número A"), "Banido");
        await expectText(rowOf(page, "Número A"), "Desconectado");
        await expectText(rowOf(page, "Número B"), "Sessão encerrada");
        const title = await rowOf(page, "Número A").locator("[data-health]").getAttribute("title");
        assert(title?.includes("conecte outro número"), `the banned badge does not say what to do: ${title}`);
        await tallScreenshot(ctx, page, "numbers-02-channels-banned");
        log("A banned, B logged out: badges shown");

        // A paired again: warming again (same number, still its day 1), the page follows on its own.
        await api(`/api/simulator/channels/${a}/state`, { connected: true });
        await eventually(async () => {
          await expectText(rowOf(page, "Número A"), "Aquecendo", 2000);
        }, 20_000);
        await expectVisible(rowOf(page, "Número B").getByText("Sessão encerrada"));
        await tallScreenshot(ctx, page, "numbers-03-channels-paired-again");
        log("A paired again: Aquecendo");
      });
    },
  },
];
