/**
 * The dashboard on a phone (issue 26 item 6; docs/dashboard.md#on-a-phone) and the overview home page
 * (item 5; docs/dashboard.md#overview), in Chromium with touch at 390×844: a launch created and a
 * campaign sent by taps alone (page.tap; text typed with fill), then every dashboard page checked for a
 * page that scrolls sideways (scrollWidth > clientWidth) and for tap targets under 44 px; the overview
 * after that campaign and launch, on the phone and on a desktop, screenshotted under e2e/artifacts.
 */
import type { Page } from "playwright-core";
import { apiCaller, newAccount, signUp, withPage } from "./flows";
import { assert, eventually, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";
import { apiKeyByTaps, checkPhoneLayout, phone, phoneViewport, tapMenu } from "./phone";

const channel = "Canal Celular";
const segment = "Turma celular";
const launchName = "Lançamento no celular";
const campaignName = "Aviso pelo celular";
const lead = "5511987650042";

/** Waits for the page's own content (its h1) after a navigation. */
async function settled(page: Page) {
  await expectVisible(page.locator("main h1"), 20_000);
  await page.waitForLoadState("networkidle").catch(() => {});
  await expectVisible(page.locator("main h1"));
  // Queries that were loading have drawn their rows.
  await eventually(async () => assert((await page.getByText("Carregando…").count()) === 0, "still loading"), 20_000);
}

/** Taps a link of the page and checks the page it opens before anything is typed there. */
async function tapLinkAndCheck(page: Page, name: string, url: RegExp) {
  await page.getByRole("link", { name }).tap();
  await expectUrl(page, url);
  await settled(page);
  await checkPhoneLayout(page, url.source);
}

export const tests: E2ETest[] = [
  {
    name: "phone: a launch created and a campaign sent by taps alone; every page at 390×844 without sideways scroll, tap targets ≥ 44 px",
    async run(ctx) {
      const { baseUrl, log } = ctx;
      await withPage(
        ctx,
        async (page) => {
          await signUp(page, newAccount("phone"));
          // The menu is a bar with a button: the first screen shows the page, not the links.
          const bar = await page.locator(".sidebar").boundingBox();
          assert(bar && bar.height < 90, `the menu takes ${bar?.height} px of the first screen`);
          assert(!(await page.getByRole("navigation", { name: "Navegação principal" }).isVisible()), "the menu's links show before the button is tapped");
          const h1 = await page.locator("main h1").boundingBox();
          assert(h1 && h1.y < 200, `the page's title starts at ${h1?.y} px`);
          await ctx.screenshot(page, "phone-channels-first-screen");

          // An API key by taps, for the setup a script would do.
          const api = await apiKeyByTaps(page, baseUrl, "Chave do celular");

          // A channel by taps.
          await tapMenu(page, "Canais", /\/channels$/);
          await page.getByLabel("Nome do canal").fill(channel);
          await page.getByRole("button", { name: "Criar canal" }).tap();
          const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: channel, exact: true }) });
          await expectText(row, "Conectado", 30_000);
          const channelId = decodeURIComponent((await page.getByRole("link", { name: channel, exact: true }).getAttribute("href"))?.split("/").pop() ?? "");

          // No pauses, and a segment of 5 groups (set up as a script would; the segment pages are checked below).
          await api("PATCH", "/api/external/edit-settings", {
            dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 10, min_campaign_interval: 0, max_campaign_interval: 0 },
          });
          const groups = (await api("GET", `/api/external/list-groups/${channelId}`)).groups.slice(0, 5).map((g: { id_group: string }) => g.id_group);
          const seg = await api("POST", "/api/external/create-segment", { name: segment, id_channel: [channelId], groups });

          // A launch by taps alone.
          await tapMenu(page, "Lançamentos", /\/launches$/);
          await tapLinkAndCheck(page, "Novo lançamento", /\/launches\/new$/);
          await page.getByLabel("Nome do lançamento").fill(launchName);
          await page.getByRole("checkbox", { name: channel }).tap();
          assert(await page.getByRole("checkbox", { name: channel }).isChecked(), "tapping the channel did not check it");
          await page.getByLabel("Capacidade por grupo").fill("50");
          await page.getByLabel("Margem").fill("1");
          await page.getByLabel("Grupos criados agora").fill("1");
          await ctx.screenshot(page, "phone-launch-new");
          await page.getByRole("button", { name: "Criar lançamento" }).tap();
          await expectUrl(page, /\/launches\/launch_[0-9a-f-]+$/, 30_000);
          await expectVisible(page.getByRole("heading", { name: launchName, level: 1 }));
          const launchPath = new URL(page.url()).pathname;
          log("launch created by taps");

          // Someone follows the join link and joins (the simulator plays WhatsApp).
          const joinUrl = await page.getByTestId("join-url").inputValue();
          const clicked = await fetch(`${baseUrl}${new URL(joinUrl).pathname}`, {
            redirect: "manual",
            headers: { "user-agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Mobile/15E148" },
          });
          assert(clicked.status === 302, `the join link answered ${clicked.status}`);
          const invite = new URL(clicked.headers.get("location") ?? "").pathname.slice(1);
          await api("POST", `/api/simulator/invites/${encodeURIComponent(invite)}/join`, { participant: lead });

          // What a team watches live is the launch page's first screen: clicks, joins and the group filling now.
          await page.goto(launchPath);
          await settled(page);
          await expectText(page.getByTestId("total-joins"), /^1$/, 20_000);
          for (const id of ["total-clicks", "total-joins", "current-group"]) {
            const box = await page.getByTestId(id).boundingBox();
            assert(
              box && box.y + box.height <= phoneViewport.height,
              `${id} is not on the launch page's first screen (ends at ${box && box.y + box.height} px)`,
            );
          }
          await ctx.screenshot(page, "phone-launch-first-screen");
          // The days per day start on the launch's own day (it was created today): no day drawn before it existed.
          await page.getByText("Ver os números por dia").tap();
          await eventually(async () =>
            assert((await page.getByRole("table", { name: "Números por dia" }).locator("tbody tr").count()) === 1, "days before the launch are drawn"),
          );

          // A campaign sent by taps alone.
          await tapMenu(page, "Campanhas", /\/campaigns$/);
          await tapLinkAndCheck(page, "Nova campanha", /\/campaigns\/new$/);
          await page.getByLabel("Nome da campanha").fill(campaignName);
          await page.getByLabel("Segmento", { exact: true }).selectOption({ label: `${segment} (5 grupos)` });
          await page.getByLabel("Mensagem", { exact: true }).fill("Aula hoje às 20h!");
          await page.getByRole("button", { name: "Criar e enviar agora" }).tap();
          await expectUrl(page, /\/campaigns\/campaign_[0-9a-f-]+$/, 20_000);
          await expectText(page.getByTestId("campaign-status"), "Concluída", 60_000);
          const campaignPath = new URL(page.url()).pathname;
          log("campaign sent by taps");
          // A group action on the launch (its Cronograma and its own page are walked below).
          const action = await api("POST", "/api/external/create-group-action", {
            id_launch: decodeURIComponent(launchPath.split("/").pop() ?? ""),
            action: { type: "set_subject", subject: "Turma {n} — Aulas liberadas" },
          });
          const actionPath = `/acoes/${action.id_action}`;

          // Every dashboard page, as a phone shows it.
          const pages: [string, string][] = [
            ["overview", "/overview"],
            ["channels", "/channels"],
            ["channel", `/channels/${channelId}`],
            ["segments", "/segments"],
            ["segment-new", "/segments/new"],
            ["segment", `/segments/${seg.id_segment}`],
            ["launches", "/launches"],
            ["launch-new", "/launches/new"],
            ["launch", launchPath],
            ["campaigns", "/campaigns"],
            ["campaign-new", "/campaigns/new"],
            ["campaign", campaignPath],
            ["group-action", actionPath],
            ["blocklist", "/bloqueios"],
            ["integrations", "/integrations"],
            ["webhooks", "/webhooks"],
            ["apps", "/apps"],
            ["api-keys", "/api-keys"],
            ["settings", "/settings"],
            ["team", "/equipe"],
            ["activity-log", "/atividades"],
            ["account", "/account"],
          ];
          const failures: string[] = [];
          for (const [name, path] of pages) {
            await page.goto(path);
            await settled(page);
            if (name === "segment-new") await page.getByRole("checkbox", { name: channel }).tap();
            await ctx.screenshot(page, `phone-${name}`);
            try {
              await checkPhoneLayout(page, path);
            } catch (err) {
              failures.push((err as Error).message);
            }
            // The menu opened over the page fits too.
            if (name === "overview") {
              await page.getByRole("button", { name: "Menu" }).tap();
              await ctx.screenshot(page, "phone-menu-open");
              await checkPhoneLayout(page, `${path} with the menu open`).catch((err) => failures.push((err as Error).message));
              await page.getByRole("button", { name: "Menu" }).tap();
            }
          }
          assert(failures.length === 0, failures.join("\n"));
          log(`${pages.length} pages at ${phoneViewport.width}×${phoneViewport.height}: no sideways scroll, tap targets ≥ 44 px`);

          // The narrowest phones the issue names, on the pages that were widest.
          await page.setViewportSize({ width: 360, height: 740 });
          for (const path of ["/overview", "/channels", launchPath, "/launches/new", "/settings", campaignPath, actionPath, "/bloqueios"]) {
            await page.goto(path);
            await settled(page);
            await checkPhoneLayout(page, `${path} at 360 px`);
          }
        },
        phone(),
      );
    },
  },
  {
    name: "overview: after a campaign and a launch, what was done today on the home page (desktop and phone)",
    async run(ctx) {
      const { baseUrl, log } = ctx;
      await withPage(ctx, async (page) => {
        await signUp(page, newAccount("over"));
        // A brand-new account: nothing to look at yet, and nothing needing attention.
        await page.goto("/");
        await expectUrl(page, /\/overview$/);
        await expectVisible(page.getByRole("heading", { name: "Visão geral", level: 1 }));
        await expectVisible(page.getByTestId("attention-none"));
        // On a desktop the menu is open beside the page, without a button.
        assert(!(await page.getByRole("button", { name: "Menu" }).isVisible()), "the Menu button shows on a desktop");
        await expectVisible(page.getByRole("navigation", { name: "Navegação principal" }).getByRole("link", { name: "Visão geral" }));
        await expectText(page.getByTestId("overview-sends-today"), /^0$/);

        // Everything else as a script does it: a key, a channel, 6 groups, a campaign, a launch, a click and a join.
        await page.getByRole("navigation", { name: "Navegação principal" }).getByRole("link", { name: "Chaves de API" }).click();
        await page.getByLabel("Nome da chave").fill("Chave");
        await page.getByRole("button", { name: "Criar chave" }).click();
        const api = apiCaller(baseUrl, await page.getByLabel("Nova chave de API").inputValue());
        await api("PATCH", "/api/external/edit-settings", {
          dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 10, min_campaign_interval: 0, max_campaign_interval: 0 },
        });
        const ch = await api("POST", "/api/external/create-channel", { name: "Canal Visão" });
        await eventually(async () => assert((await api("GET", `/api/external/info-channel/${ch.id_channel}`)).status === "connected", "not paired"));
        await api("PUT", `/api/external/edit-channel/${ch.id_channel}`, { name: "Canal Visão", limits: { daily_message_cap: 200 } });
        const groups = (await api("GET", `/api/external/list-groups/${ch.id_channel}`)).groups.slice(0, 6).map((g: { id_group: string }) => g.id_group);
        const seg = await api("POST", "/api/external/create-segment", { name: "Seg visão", id_channel: [ch.id_channel], groups });
        const sent = await api("POST", "/api/external/create-campaign/message", { name: "Enviada", id_segment: seg.id_segment, message: "Oi!" });
        await eventually(
          async () => assert((await api("GET", `/api/external/info-campaign/${sent.id_campaign}`)).status === "completed", "not completed"),
          60_000,
        );
        const launch = await api("POST", "/api/external/create-launch", {
          name: "Turma Visão",
          id_channel: [ch.id_channel],
          group_template: { name: "Turma Visão #{n}", admins_only: false, admins: [] },
          capacity: 50,
          margin: 1,
          initial_groups: 1,
        });
        const click = await fetch(`${baseUrl}/g/${launch.slug}`, { redirect: "manual", headers: { "user-agent": "Mozilla/5.0 (Linux; Android 14) Mobile" } });
        assert(click.status === 302, `join link: ${click.status}`);
        const code = new URL(launch.groups[0].invite_url).pathname.slice(1);
        await api("POST", `/api/simulator/invites/${encodeURIComponent(code)}/join`, { participant: lead });
        await api("POST", `/api/simulator/channels/${(await api("POST", "/api/external/create-channel", { name: "Canal Banido" })).id_channel}/state`, {
          health: "banned",
        });

        // The home page follows (it polls): 6 sends on the number against its 200, the launch's click and join, the banned number.
        await page.getByRole("navigation", { name: "Navegação principal" }).getByRole("link", { name: "Visão geral" }).click();
        await expectUrl(page, /\/overview$/);
        await expectText(page.getByTestId("overview-sends-today"), /^6$/, 30_000);
        await expectText(page.getByTestId(`overview-number-${ch.id_channel}`), "6 / 200");
        const launchLine = page.getByTestId(`overview-launch-${launch.id_launch}`);
        await expectText(launchLine.getByTestId("launch-clicks-today"), /^1$/, 30_000);
        await expectText(launchLine.getByTestId("launch-joins-today"), /^1$/, 30_000);
        await expectText(page.getByTestId("overview-clicks-today"), /^1$/);
        await expectText(page.getByTestId("overview-joins-today"), /^1$/);
        await expectText(page.getByTestId("attention"), "Número banido: Canal Banido", 30_000);
        await expectVisible(page.getByRole("img", { name: /^Envios por hora hoje: 6 no total/ }));
        await expectVisible(page.getByRole("img", { name: /^Turma Visão, últimos 7 dias: .*1 cliques, 1 entradas$/ }));
        await ctx.screenshot(page, "overview-desktop");
        // The attention line leads to the number.
        await page.getByTestId("attention").getByRole("link", { name: "Ver canal" }).click();
        await expectUrl(page, /\/channels\/channel_/);
        log("overview: sends, the number's use against its cap, the launch's click and join, the banned number");

        // The same page on a phone: the session's cookies in a touch context.
        const cookies = await page.context().cookies();
        await withPage(
          ctx,
          async (onPhone) => {
            await onPhone.context().addCookies(cookies);
            await onPhone.goto("/");
            await expectUrl(onPhone, /\/overview$/);
            await expectText(onPhone.getByTestId("overview-sends-today"), /^6$/, 30_000);
            await expectText(onPhone.getByTestId("attention"), "Número banido");
            await checkPhoneLayout(onPhone, "/overview");
            await ctx.screenshot(onPhone, "overview-phone");
          },
          phone(),
        );
      });
    },
  },
];
