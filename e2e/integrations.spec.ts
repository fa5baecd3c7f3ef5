/**
 * Integrations page: a marketplace is configured from the dashboard, its credentials are never shown
 * again (only which fields are set), and an edit replaces one field. The channel page of a simulated
 * channel shows it connected, with the disconnect action.
 */
import { createApiKey, createChannel, nav, newAccount, signUp, withPage } from "./flows";
import { assert, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

export const tests: E2ETest[] = [
  {
    name: "integrations: configure Hotmart, credentials stay hidden, edit one field",
    async run(ctx) {
      await withPage(ctx, async (page) => {
        await signUp(page, newAccount("integ"));
        await nav(page, "Integrações").click();
        await expectUrl(page, /\/integrations$/);
        await expectVisible(page.getByRole("heading", { name: "Integrações", level: 1 }));
        const hotmart = page.getByRole("region", { name: "Hotmart" });
        await expectText(hotmart, "não configurada");
        await hotmart.getByRole("button", { name: "Configurar" }).click();
        await hotmart.getByLabel("Client ID").fill("cid-e2e");
        await hotmart.getByLabel("Client Secret").fill("segredo-e2e-123");
        await hotmart.getByLabel("Token Basic").fill("Basic e2e");
        await hotmart.getByRole("button", { name: "Salvar" }).click();
        await expectVisible(hotmart.locator(".badge-connected"));
        await expectText(hotmart, "Client Secret: ✓ definido");
        await expectText(hotmart, "Hottok (autentica o webhook de vendas): — vazio");
        const html = await page.content();
        assert(!html.includes("segredo-e2e-123"), "a credential value is on the page");
        await ctx.screenshot(page, "integrations-configured");

        await hotmart.getByRole("button", { name: "Editar credenciais" }).click();
        await hotmart.getByLabel("Hottok (autentica o webhook de vendas)").fill("tok-e2e");
        await hotmart.getByRole("button", { name: "Salvar" }).click();
        await expectText(hotmart, "Hottok (autentica o webhook de vendas): ✓ definido");

        // The API still answers 501 for a create, and 409 now that Hotmart exists.
        const key = await createApiKey(page, "Integração");
        const res = await page.request.post("/api/external/create-integrations", {
          headers: { "x-api-key": key },
          data: { type: "hotmart", credentials: { client_id: "a", client_secret: "b", basic_token: "c" } },
        });
        assert(res.status() === 409, `expected 409, got ${res.status()}`);
        const other = await page.request.post("/api/external/create-integrations", {
          headers: { "x-api-key": key },
          data: { type: "braip", credentials: { api_token: "t" } },
        });
        assert(other.status() === 501, `expected 501, got ${other.status()}`);
        ctx.log("  integration configured and edited; API answers 409/501");

        await createChannel(page, "Canal Pareado");
        await page.getByRole("link", { name: "Canal Pareado", exact: true }).click();
        await expectVisible(page.getByRole("button", { name: "Desconectar" }));
        await ctx.screenshot(page, "channel-connected");
      });
    },
  },
];
