/**
 * Repeating campaigns and the ETA in a real browser: "Repetir" in the composer makes a series that the campaigns
 * page lists (paused, resumed and stopped there), and a paced campaign's page shows its "Previsão de término",
 * then "Terminou em" once it ends.
 */
import type { Page } from "playwright-core";
import { apiCaller, createApiKey, createChannel, createSegment, nav, newAccount, signUp, tallScreenshot, withPage } from "./flows";
import { assert, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

const channel = "Canal Séries";
const segment = "Turma da série";

export const tests: E2ETest[] = [
  {
    name: "series: Repetir in the composer, the series list with pause/resume/stop, ETA on the campaign page",
    async run(ctx) {
      const { log, baseUrl } = ctx;
      const screenshot = (page: Page, name: string) => tallScreenshot(ctx, page, name);
      await withPage(ctx, async (page) => {
        await signUp(page, newAccount("series"));
        const api = apiCaller(baseUrl, await createApiKey(page, "Chave séries"));
        // Paced: 1 group a loop, 1.5 s apart, so the campaign page has a while to show its forecast.
        await api("PATCH", "/api/external/edit-settings", {
          dispatch_rates: { min_dispatch_rate: 1.5, max_dispatch_rate: 1.5, dispatches_per_loop: 1, min_campaign_interval: 0, max_campaign_interval: 0 },
        });
        await createChannel(page, channel);
        await createSegment(page, { name: segment, channel, search: "Grupo 0", expectGroups: 9 });

        // The composer: Repetir, Monday, Wednesday and Friday at 19:00.
        await nav(page, "Campanhas").click();
        await expectUrl(page, /\/campaigns$/);
        await expectVisible(page.getByText("Nenhuma série."));
        await page.getByRole("link", { name: "Nova campanha" }).click();
        await expectUrl(page, /\/campaigns\/new$/);
        await page.getByLabel("Nome da campanha").fill("Aquecimento 19h");
        await page.getByLabel("Segmento", { exact: true }).selectOption({ label: `${segment} (9 grupos)` });
        await page.getByLabel("Mensagem", { exact: true }).fill("Hoje tem aula às 20h!");
        await page.getByRole("radio", { name: "Repetir" }).check();
        const repeat = page.getByTestId("repeat-fields");
        await expectVisible(repeat);
        for (const day of ["Ter", "Qui"]) await repeat.getByRole("checkbox", { name: day, exact: true }).uncheck();
        await repeat.getByLabel("Hora").fill("19:00");
        await screenshot(page, "series-01-composer-repeat");
        await page.getByRole("button", { name: "Criar série" }).click();
        await expectUrl(page, /\/campaigns#series$/, 20_000);
        const row = page.getByTestId("series-row").filter({ hasText: "Aquecimento 19h" });
        await expectText(row, "Seg, Qua, Sex às 19:00");
        await expectText(row.getByTestId("series-status"), "Ativa");
        const listed = (await api("GET", "/api/external/list-series")).series;
        assert(listed.length === 1 && listed[0].repeat.time === "19:00", `list-series: ${JSON.stringify(listed)}`);
        assert(JSON.stringify(listed[0].repeat.days) === JSON.stringify(["monday", "wednesday", "friday"]), `days: ${listed[0].repeat.days}`);
        // Its first run is a scheduled campaign, linked from the row's next run.
        const firstRun = listed[0].next_id_campaign;
        assert((await api("GET", `/api/external/info-campaign/${firstRun}`)).status === "pending", "the first run is not a pending campaign");
        await expectVisible(row.getByTestId("series-next-run"));
        await screenshot(page, "series-02-list");
        log("composer Repetir made a series, listed on the campaigns page and by list-series");

        await row.getByRole("button", { name: "Pausar" }).click();
        await expectText(row.getByTestId("series-status"), "Pausada");
        assert((await api("GET", "/api/external/list-series")).series[0].status === "paused", "the series is not paused");
        assert((await api("GET", `/api/external/info-campaign/${firstRun}`)).status === "canceled", "the paused series' future run is not canceled");
        await row.getByRole("button", { name: "Retomar" }).click();
        await expectText(row.getByTestId("series-status"), "Ativa");
        await row.getByRole("button", { name: "Encerrar" }).click();
        await row.getByRole("button", { name: "Confirmar encerramento" }).click();
        await expectText(row.getByTestId("series-status"), "Encerrada");
        assert((await api("GET", "/api/external/list-series")).series[0].status === "stopped", "the series is not stopped");
        log("series paused, resumed and stopped from the list");

        // A campaign sent now: its page shows the forecast while it sends, then its end.
        await page.getByRole("link", { name: "Nova campanha" }).click();
        await page.getByLabel("Nome da campanha").fill("Com previsão");
        await page.getByLabel("Segmento", { exact: true }).selectOption({ label: `${segment} (9 grupos)` });
        await page.getByLabel("Mensagem", { exact: true }).fill("Oi!");
        await page.getByRole("button", { name: "Criar e enviar agora" }).click();
        await expectUrl(page, /\/campaigns\/campaign_[0-9a-f-]+$/, 20_000);
        const eta = page.getByTestId("campaign-eta");
        await expectText(eta, /Previsão de término: \d\d\/\d\d\/\d{4},? \d\d:\d\d/);
        await screenshot(page, "series-03-campaign-eta");
        await expectText(page.getByTestId("campaign-status"), "Concluída", 60_000);
        await expectText(eta, /Terminou em \d\d\/\d\d\/\d{4},? \d\d:\d\d/);
        log("campaign page: the forecast while sending, the end once completed");
      });
    },
  },
];
