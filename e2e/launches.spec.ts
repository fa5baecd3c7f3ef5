/**
 * Launches in a real browser: a launch created in the dashboard, its join link opened as a visitor
 * would (the redirect lands on the simulated WhatsApp invite, intercepted: chat.whatsapp.com is not
 * reachable here), a person joining through that invite on the simulator, and the launch page's
 * totals, group bar and daily chart following; then the campaign composer targeting the launch and
 * the link paused.
 */
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { apiCaller, channelIdOf, createApiKey, createChannel, nav, newAccount, signUp, tallScreenshot, withPage } from "./flows";
import { assert, eventually, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

const channel = "Canal Lançamento";
const launchName = "Turma E2E";
const lead = "5511987650001";

/** Today in Brasília (`YYYY-MM-DD`): the day the analytics put a click or a join on. */
const brasiliaToday = () => new Intl.DateTimeFormat("en-CA", { timeZone: "America/Sao_Paulo" }).format(new Date());
const total = (page: Page, id: string) => page.getByTestId(`total-${id}`);

export const tests: E2ETest[] = [
  {
    name: "launch: create, join link to the invite, a simulated join, counts and chart update",
    async run(ctx) {
      const { baseUrl, log } = ctx;
      await withPage(ctx, async (page) => {
        await signUp(page, newAccount("launch"));
        const apiKey = await createApiKey(page, "Chave do simulador");
        await createChannel(page, channel);

        // The list starts empty and says what a launch is.
        await nav(page, "Lançamentos").click();
        await expectUrl(page, /\/launches$/);
        await expectText(page.locator(".empty"), "um só link que leva cada pessoa ao grupo com vaga");
        await page.getByRole("link", { name: "Novo lançamento" }).click();
        await expectUrl(page, /\/launches\/new$/);

        await page.getByLabel("Nome do lançamento").fill(launchName);
        await page.getByRole("checkbox", { name: channel }).check();
        // The group name follows the launch's name: {n} is the position.
        const groupName = page.getByLabel("Nome dos grupos");
        assert((await groupName.inputValue()) === `${launchName} #{n}`, `group name template: ${await groupName.inputValue()}`);
        await expectText(page.locator(".field").filter({ has: groupName }), `${launchName} #1`);
        await page.getByLabel("Descrição").fill("Grupo oficial da turma E2E");
        await page.getByLabel("Capacidade por grupo").fill("5");
        await page.getByLabel("Margem").fill("1");
        await page.getByLabel("Grupos de reserva").fill("1");
        await page.getByLabel("Grupos criados agora").fill("1");
        await page.getByLabel("Números da equipe").fill("5511900000009");
        await tallScreenshot(ctx, page, "launch-new");
        await page.getByRole("button", { name: "Criar lançamento" }).click();
        await expectUrl(page, /\/launches\/launch_[0-9a-f-]+$/, 30_000);
        await expectVisible(page.getByRole("heading", { name: launchName, level: 1 }));
        await expectText(page.getByTestId("launch-status"), "Ativo");
        log("launch created from the dashboard");

        // Group 1 from the template, receiving the link's visitors.
        const group1 = page.getByTestId("launch-group-1");
        await expectText(group1, `${launchName} #1`);
        await expectText(page.getByTestId("current-group"), `#1 ${launchName} #1`);
        const inviteUrl = await group1.getByRole("link", { name: /^https:\/\/chat\.whatsapp\.com\// }).getAttribute("href");
        assert(inviteUrl?.startsWith("https://chat.whatsapp.com/"), `group 1's invite URL: ${inviteUrl}`);
        const joinUrl = await page.getByTestId("join-url").inputValue();
        assert(/\/g\/turma-e2e(-\d+)?$/.test(joinUrl), `join URL: ${joinUrl}`);
        await expectVisible(page.getByRole("img", { name: `QR code do link ${joinUrl}` }));
        assert((await total(page, "clicks").textContent()) === "0", "a new launch has no clicks");
        const membersBefore = Number(await group1.getByTestId("group-members").textContent());

        // A visitor opens the join link: the browser follows its 302 to group 1's invite. chat.whatsapp.com
        // cannot be reached from here (and Playwright's route does not see a redirect's target), so the
        // navigation fails there and the request the browser made is what is checked.
        const visitor = await page.context().newPage();
        const link = `${baseUrl}${new URL(joinUrl).pathname}?utm_source=instagram`;
        const toInvite = visitor.waitForRequest((r) => r.url().startsWith("https://chat.whatsapp.com/"), { timeout: 20_000 });
        await visitor.goto(link).catch(() => {});
        const inviteRequest = await toInvite;
        assert(inviteRequest.url() === inviteUrl, `the link led to ${inviteRequest.url()}, not group 1's invite ${inviteUrl}`);
        assert(inviteRequest.redirectedFrom()?.url() === link, `the invite was not reached by the link's redirect: ${inviteRequest.redirectedFrom()?.url()}`);
        await visitor.close();
        log(`join link → ${inviteUrl}`);

        // The visitor joins the group through that invite (the simulator plays WhatsApp).
        const code = new URL(inviteUrl).pathname.slice(1);
        const joined = await fetch(`${baseUrl}/api/simulator/invites/${encodeURIComponent(code)}/join`, {
          method: "POST",
          headers: { "x-api-key": apiKey, "content-type": "application/json" },
          body: JSON.stringify({ participant: lead }),
        });
        assert(joined.ok, `simulated join answered ${joined.status}: ${await joined.text()}`);

        // The page follows (it polls): one click from Instagram, one join, one more member in group 1.
        await expectText(total(page, "clicks"), /^1$/, 30_000);
        await expectText(total(page, "joins"), /^1$/, 30_000);
        await expectText(total(page, "unique-members"), /^1$/);
        await expectText(group1.getByTestId("group-members"), new RegExp(`^${membersBefore + 1}$`), 30_000);
        await expectText(page.getByRole("table", { name: "Cliques por origem" }), /instagram\s*1\s*100%/);
        await page.getByText("Ver os números por dia").click();
        const today = page.getByTestId(`day-${brasiliaToday()}`);
        await expectText(today, /^\d{2}\/\d{2}\s*1\s*1\s*1\s*0\s*\d+$/, 30_000);
        // The chart drew bars for today (recharts draws no rectangle for a zero).
        await eventually(async () => {
          const bars = await page.locator("figure.chart").first().locator(".recharts-bar-rectangle path").count();
          assert(bars >= 3, `expected bars for today's clicks, unique clicks and joins, got ${bars}`);
        }, 20_000);
        // The participants' CSV, a link the browser streams to disk in the session (/api/dashboard/launches/{id}/members.csv):
        // the BOM, the header, the lead's row (not staff).
        const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Exportar CSV" }).click()]);
        assert(/\/api\/dashboard\/launches\/launch_[^/]+\/members\.csv$/.test(download.url()), `members CSV link: ${download.url()}`);
        const file = await download.path();
        const csv = readFileSync(file, "utf8");
        assert(csv.startsWith("\uFEFFparticipant,id_group,group_name,joined_at,left_at,staff"), `CSV header: ${JSON.stringify(csv.slice(0, 80))}`);
        assert(new RegExp(`^${lead},[^,]+,${launchName} #1,[^,]+,,false,false\\r?$`, "m").test(csv), `no row for the lead in the CSV: ${csv}`);
        await tallScreenshot(ctx, page, "launch-page");
        log("click, join and chart shown on the launch page");

        // Leads from a capture form: the one who joined and one who never did; the page counts them and hands
        // over the CSV of who never joined (docs/launches.md#leads).
        const idLaunch = new URL(page.url()).pathname.split("/").pop()!;
        const sent = await fetch(`${baseUrl}/api/external/launch-leads/${idLaunch}`, {
          method: "POST",
          headers: { "x-api-key": apiKey, "content-type": "application/json" },
          body: JSON.stringify({
            leads: [
              { phone: `+${lead}`, name: "Entrou" },
              { phone: "(11) 98765-0002", name: "Não entrou" },
            ],
          }),
        });
        assert(sent.ok, `launch-leads answered ${sent.status}: ${await sent.text()}`);
        await expectText(total(page, "leads"), /^2$/, 30_000);
        await expectText(total(page, "leads-joined"), /^1$/);
        await expectText(total(page, "leads-not-joined"), /^1$/);
        const [leadsDownload] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Baixar CSV de quem não entrou" }).click()]);
        assert(leadsDownload.url().includes(`/api/dashboard/launches/${idLaunch}/leads.csv?status=not_joined`), `leads CSV link: ${leadsDownload.url()}`);
        const leadsCsv = readFileSync(await leadsDownload.path(), "utf8");
        assert(leadsCsv.startsWith("\uFEFF"), `the leads CSV has no BOM: ${JSON.stringify(leadsCsv.slice(0, 20))}`);
        const leadRows = leadsCsv
          .replace(/^\uFEFF/, "")
          .trimEnd()
          .split("\r\n");
        assert(leadRows[0] === "phone,name,email,source,joined,created_at", `leads CSV header: ${leadRows[0]}`);
        assert(leadRows.length === 2 && leadRows[1].startsWith("5511987650002,Não entrou,,,false,"), `leads CSV: ${leadsCsv}`);
        log("leads counted and the CSV of who never joined downloaded");

        // The composer, opened from the launch, targets the launch's segment.
        await page.getByRole("link", { name: "Enviar campanha aos grupos" }).click();
        await expectUrl(page, /\/campaigns\/new\?segment=segment_/);
        const segmentSelect = page.getByLabel("Segmento");
        await eventually(async () => {
          const chosen = await segmentSelect.evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.text ?? "");
          assert(chosen.startsWith(launchName), `segment chosen in the composer: ${chosen}`);
          // Listed under the launches, apart from the tenant's own segments.
          const group = await segmentSelect.evaluate(
            (s: HTMLSelectElement) => (s.selectedOptions[0]?.parentElement as HTMLOptGroupElement | null)?.label ?? "",
          );
          assert(group === "Lançamentos", `the launch's segment is under "${group}", not "Lançamentos"`);
        });
        await page.goBack();

        // Paused: the link no longer leads to a group.
        await page.getByRole("button", { name: "Pausar link" }).click();
        await expectText(page.getByTestId("launch-status"), "Pausado");
        const paused = await fetch(`${baseUrl}${new URL(joinUrl).pathname}`, { redirect: "manual" });
        assert(paused.headers.get("location") !== inviteUrl, "a paused link still redirects to the group");
        await page.getByRole("button", { name: "Retomar link" }).click();
        await expectText(page.getByTestId("launch-status"), "Ativo");

        await nav(page, "Lançamentos").click();
        const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: launchName }) });
        await expectText(row, /Ativo\s*1\s*\d+\s*1/);
        await tallScreenshot(ctx, page, "launches");
      });
    },
  },
  {
    name: "launch: per-ad table, clicks per source per day, and the traffic alert banner and overview line",
    async run(ctx) {
      const { baseUrl, log } = ctx;
      await withPage(ctx, async (page) => {
        await signUp(page, newAccount("launch-utm"));
        const apiKey = await createApiKey(page, "Chave dos anúncios");
        await createChannel(page, channel);
        const call = apiCaller(baseUrl, apiKey);
        const launch = await call("POST", "/api/external/create-launch", {
          name: "Turma Anúncios",
          id_channel: [await channelIdOf(page, channel)],
          group_template: { name: "Turma Anúncios #{n}" },
          alerts: { clicks_without_joins_minutes: 20, min_clicks: 6 },
        });
        // Visits as the ads send them (a fetch is a person to the link: it follows no redirect, the click counts).
        const visit = (query: string) => fetch(`${baseUrl}/g/${launch.slug}?${query}`, { redirect: "manual" });
        for (let i = 0; i < 4; i++) await visit("utm_source=Facebook&utm_medium=cpc&utm_campaign=turma&utm_content=Video-1&fbclid=x");
        for (let i = 0; i < 2; i++) await visit("utm_source=instagram&utm_medium=stories&utm_campaign=turma&utm_content=story-2");
        await visit("utm_source=google&utm_campaign=busca");

        await page.goto(`${baseUrl}/launches/${launch.id_launch}`);
        const ads = page.getByRole("table", { name: "Cliques por anúncio" });
        await expectText(ads.getByTestId("ad-row").nth(0), /video-1\s*turma\s*facebook\s*cpc\s*4\s*1/, 30_000);
        await expectText(ads.getByTestId("ad-row").nth(1), /story-2\s*turma\s*instagram\s*stories\s*2\s*1/);
        await expectText(ads.getByTestId("ad-row").nth(2), /—\s*busca\s*google\s*—\s*1\s*1/);
        // The chart stacks today's clicks per source: one bar per source (recharts draws no rectangle for a zero).
        const chart = page.getByTestId("sources-per-day");
        for (const source of ["facebook", "instagram", "google"]) await expectText(chart, source);
        await eventually(async () => {
          const bars = await chart.locator(".recharts-bar-rectangle path").count();
          assert(bars === 3, `expected today's 3 stacked source bars, got ${bars}`);
        }, 20_000);
        log("per-ad table and clicks per source per day shown");

        // 7 clicks and no join in 20 minutes (min_clicks 6): the periodic pass sends traffic_alert, the page shows the banner.
        await expectText(page.getByTestId("traffic-alert"), /7 cliques em 20 min/, 30_000);
        await tallScreenshot(ctx, page, "launch-utm");
        await nav(page, "Visão geral").click();
        await expectText(page.locator('[data-kind="traffic_alert"]'), /Cliques sem entradas: Turma Anúncios/, 30_000);
        log("traffic alert banner and overview line shown");
      });
    },
  },
];
