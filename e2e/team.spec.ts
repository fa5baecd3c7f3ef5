/**
 * A team in one account (docs/team.md): the owner invites an editor on the Equipe page and copies the link; the
 * editor opens it in a fresh browser, signs up and sees the owner's campaigns; the admin sections are hidden from them,
 * and the settings and channels pages show them no save bar and no channel forms.
 */
import { apiCaller, createApiKey, nav, newAccount, signUp, withPage } from "./flows";
import { assert, expectHidden, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

export const tests: E2ETest[] = [
  {
    name: "team: the owner invites an editor; the link signs them up in a fresh browser and they see the owner's campaigns",
    async run(ctx) {
      const owner = newAccount("dona");
      let link = "";
      let campaignName = "";
      await withPage(ctx, async (page) => {
        await signUp(page, owner);
        const apiKey = await createApiKey(page, "e2e equipe");
        const api = apiCaller(ctx.baseUrl, apiKey);
        const channel = await api("POST", "/api/external/create-channel", { name: "Canal da equipe" });
        const groups = (await api("GET", `/api/external/list-groups/${channel.id_channel}`)).groups.slice(0, 1).map((g: { id_group: string }) => g.id_group);
        const segment = await api("POST", "/api/external/create-segment", { name: "Seg equipe", id_channel: [channel.id_channel], groups });
        campaignName = `Campanha da dona ${Date.now().toString(36)}`;
        await api("POST", "/api/external/create-campaign/message", {
          name: campaignName,
          id_segment: segment.id_segment,
          message: "Olá!",
          scheduled_at: undefined,
        });

        await nav(page, "Equipe").click();
        await expectUrl(page, /\/equipe$/);
        await page.getByLabel("E-mail").fill(`editor-${owner.email}`);
        await page.getByLabel("Papel").selectOption("editor");
        await page.getByRole("button", { name: "Gerar convite" }).click();
        const field = page.getByLabel(/Link do convite/);
        await expectVisible(field);
        link = await field.inputValue();
        assert(/\/convite\/[A-Za-z0-9_-]{43}$/.test(link), `invitation link: ${link}`);
        await ctx.screenshot(page, "team-invite");
      });

      await withPage(ctx, async (page) => {
        await page.goto(new URL(link).pathname);
        await expectText(page.locator("p").first(), /como editor/);
        await page.getByLabel("Seu nome").fill("Editora");
        await page.getByLabel("Senha").fill("senha-segura-123");
        await page.getByRole("button", { name: "Criar acesso e entrar" }).click();
        await expectUrl(page, /\/overview$/, 30_000);
        await nav(page, "Campanhas").click();
        await expectUrl(page, /\/campaigns$/);
        await expectVisible(page.getByText(campaignName));
        // An editor's menu has no admin sections.
        await expectHidden(nav(page, "Chaves de API"));
        await expectHidden(nav(page, "Equipe"));
        await ctx.screenshot(page, "team-editor-campaigns");
        // Settings and channels are an admin's: the editor reads them, without the save bar or the channel forms.
        await nav(page, "Configurações").click();
        await expectUrl(page, /\/settings$/);
        await expectVisible(page.getByText(/Somente proprietários e administradores/));
        await expectHidden(page.getByRole("button", { name: "Salvar alterações" }));
        await nav(page, "Canais").click();
        await expectUrl(page, /\/channels$/);
        await expectVisible(page.getByRole("link", { name: "Canal da equipe" }));
        await expectHidden(page.getByRole("button", { name: "Criar canal" }));
        await expectHidden(page.getByRole("button", { name: /Renomear o canal/ }));
      });

      // The link worked once.
      await withPage(ctx, async (page) => {
        await page.goto(new URL(link).pathname);
        await expectText(page.locator("p.alert-error"), /não é válido/);
      });
    },
  },
];
