/**
 * The Cronograma (issue 34 item 5; docs/groups.md#dashboard) on a phone-sized touch screen: on a launch with groups, a
 * "Fechar grupos" added now by taps reaches "Concluída" on the launch's timeline (beside the campaign sent to its
 * segment), the action's page shows every group "Feito", and the simulator shows each group announce-only; a server
 * error lands under its field; an action scheduled for tomorrow is canceled by a tap. Both pages pass the phone checks
 * (no sideways scroll, tap targets ≥ 44 px), at 390 and at 360 px.
 */
import { newAccount, signUp, withPage } from "./flows";
import { assert, eventually, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";
import { apiKeyByTaps, checkPhoneLayout, phone } from "./phone";

export const tests: E2ETest[] = [
  {
    name: "cronograma: on a phone, Fechar grupos added now by taps reaches Concluída, every group Feito and announce-only; a scheduled one canceled",
    async run(ctx) {
      const { baseUrl, log } = ctx;
      await withPage(
        ctx,
        async (page) => {
          await signUp(page, newAccount("crono"));
          // An API key by taps, for the setup a script would do.
          const api = await apiKeyByTaps(page, baseUrl, "Chave do cronograma");

          // A launch with 3 groups its number created (so it is admin there), and a campaign to its segment, as a script would set them up.
          await api("PATCH", "/api/external/edit-settings", {
            dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 10, min_campaign_interval: 0, max_campaign_interval: 0 },
          });
          const ch = await api("POST", "/api/external/create-channel", { name: "Canal Cronograma" });
          await eventually(async () => assert((await api("GET", `/api/external/info-channel/${ch.id_channel}`)).status === "connected", "not paired"), 30_000);
          const launch = await api("POST", "/api/external/create-launch", {
            name: "Turma Cronograma",
            id_channel: [ch.id_channel],
            group_template: { name: "Turma Cronograma #{n}", admins_only: false, admins: [] },
            capacity: 50,
            margin: 1,
            initial_groups: 3,
          });
          const groups = (launch.groups as { id_group: string }[]).map((g) => g.id_group);
          assert(groups.length === 3, `the launch has ${groups.length} groups`);
          for (const g of groups) assert((await api("GET", `/api/simulator/groups/${encodeURIComponent(g)}`)).announce === false, `${g} starts closed`);
          const campaign = await api("POST", "/api/external/create-campaign/message", { name: "Aula 1 no ar", id_segment: launch.id_segment, message: "Oi!" });

          await page.goto(`/launches/${launch.id_launch}`);
          await expectVisible(page.getByRole("heading", { name: "Cronograma", level: 2 }), 20_000);
          const timeline = page.getByRole("list", { name: "Cronograma" });
          await expectVisible(timeline.getByTestId(`cronograma-${campaign.id_campaign}`), 20_000);

          // A server error is shown under its field: the picture must be https.
          await page.getByText("Adicionar ação nos grupos").tap();
          const form = page.getByRole("form", { name: "Nova ação nos grupos" });
          await form.getByLabel("O que fazer").selectOption({ label: "Foto" });
          await form.getByLabel("Endereço da foto (https)").fill("http://example.com/foto.jpg");
          await form.getByRole("button", { name: "Fazer agora" }).tap();
          await expectText(form.getByTestId("error-picture_url"), "deve ser um endereço https", 20_000);
          await checkPhoneLayout(page, "launch page with the Cronograma's form open");
          log("a server error under its field");

          // Fechar grupos, now, by taps.
          await form.getByLabel("O que fazer").selectOption({ label: "Fechar grupos (só admins enviam)" });
          await form.getByLabel("Nome (opcional)").fill("Fechar para a aula");
          await form.getByText("Agora", { exact: true }).tap();
          await form.getByRole("button", { name: "Fazer agora" }).tap();
          await expectVisible(form.getByRole("status").filter({ hasText: "Ação adicionada" }), 20_000);
          const item = timeline.locator("li").filter({ has: page.getByRole("link", { name: "Fechar para a aula" }) });
          await expectText(item.getByTestId("action-status"), "Concluída", 90_000);
          await expectText(item.getByTestId("action-groups"), "3 feitos · 0 com falha · 3 grupos");
          await ctx.screenshot(page, "cronograma-launch");
          log("Fechar grupos reached Concluída on the launch's Cronograma");

          // A rename scheduled for tomorrow, then canceled by a tap.
          await form.getByLabel("O que fazer").selectOption({ label: "Renomear" });
          await form.getByLabel("Nome (opcional)").fill("Renomear amanhã");
          await form.getByLabel("Novo nome dos grupos").fill("Turma {n} — Aulas liberadas");
          await form.getByText("Agendar", { exact: true }).tap();
          const tomorrow = new Date(Date.now() + 86_400_000).toLocaleDateString("en-CA", { timeZone: "America/Sao_Paulo" });
          await form.getByLabel("Data").fill(tomorrow);
          await form.getByLabel("Hora").fill("09:30");
          await form.getByRole("button", { name: "Agendar ação" }).tap();
          const scheduled = timeline.locator("li").filter({ has: page.getByRole("link", { name: "Renomear amanhã" }) });
          await expectText(scheduled.getByTestId("action-status"), "Agendada", 20_000);
          await expectText(scheduled.locator("time"), "09:30");
          await checkPhoneLayout(page, "launch page with its Cronograma");
          await scheduled.getByRole("button", { name: "Cancelar Renomear amanhã" }).tap();
          await expectText(scheduled.getByTestId("action-status"), "Cancelada", 20_000);
          log("a scheduled rename canceled");

          // The action's page: every group done, through the launch's number.
          await item.getByRole("link", { name: "Fechar para a aula" }).tap();
          await expectUrl(page, /\/acoes\/action_[0-9a-f-]+$/, 20_000);
          await expectText(page.getByTestId("action-status"), "Concluída", 20_000);
          const states = page.getByRole("table", { name: "Resultado por grupo" }).getByTestId("group-state");
          await eventually(async () => assert((await states.count()) === 3, `${await states.count()} result rows`));
          for (const s of await states.all()) await expectText(s, "Feito");
          await expectText(page.getByRole("table", { name: "Resultado por grupo" }), "Turma Cronograma #1");
          await expectText(page.getByRole("table", { name: "Resultado por grupo" }), "Canal Cronograma");
          await checkPhoneLayout(page, "the action's page");
          await ctx.screenshot(page, "cronograma-action");
          await page.setViewportSize({ width: 360, height: 740 });
          await checkPhoneLayout(page, "the action's page at 360 px");
          await page.goto(`/launches/${launch.id_launch}`);
          await expectText(timeline.locator("li").filter({ hasText: "Fechar para a aula" }).getByTestId("action-status"), "Concluída", 20_000);
          await checkPhoneLayout(page, "launch page at 360 px");

          // WhatsApp (the simulator) shows every group announce-only.
          for (const g of groups) {
            const sim = await api("GET", `/api/simulator/groups/${encodeURIComponent(g)}`);
            assert(sim.announce === true, `${g} is not announce-only: ${JSON.stringify(sim)}`);
          }
          log("the simulator shows the 3 groups announce-only");
        },
        phone(),
      );
    },
  },
];
