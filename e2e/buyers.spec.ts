/**
 * Buyers in a real browser (docs/launches.md#buyers): the Integrações page shows each marketplace's webhook
 * URL (Hotmart and Kiwify; the others say why there is none); Hotmart configured with its hottok; a lead
 * joins a launch's group through the simulator; a signed Hotmart 2.0.0 PURCHASE_APPROVED posted to the URL
 * the page showed makes the launch page's "Compradores por grupo" show one buyer in that group.
 */
import { apiCaller, channelIdOf, createApiKey, createChannel, nav, newAccount, signUp, tallScreenshot, withPage } from "./flows";
import { assert, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

const buyer = "5511987650077";

export const tests: E2ETest[] = [
  {
    name: "buyers: each webhook URL on the integrations page; a signed Hotmart purchase shows as the group's buyer on the launch page",
    async run(ctx) {
      const { baseUrl, log } = ctx;
      await withPage(ctx, async (page) => {
        await signUp(page, newAccount("buyers"));
        const apiKey = await createApiKey(page, "Chave compradores");
        await createChannel(page, "Canal Compradores");
        const channelId = await channelIdOf(page, "Canal Compradores");

        await nav(page, "Integrações").click();
        await expectUrl(page, /\/integrations$/);
        const urls: Record<string, string> = {};
        for (const [type, label] of [
          ["hotmart", "Hotmart"],
          ["kiwify", "Kiwify"],
        ]) {
          const field = page.getByRole("region", { name: label }).getByLabel("URL do webhook de vendas");
          await expectVisible(field);
          urls[type] = await field.inputValue();
          assert(new RegExp(`/api/hooks/${type}/[0-9a-f]{64}$`).test(urls[type]), `${label}'s webhook URL: ${urls[type]}`);
        }
        for (const label of ["Eduzz", "Monetizze", "Braip"]) {
          await expectText(page.getByRole("region", { name: label }), "Webhook de vendas: ainda não disponível");
        }
        const hotmart = page.getByRole("region", { name: "Hotmart" });
        await hotmart.getByRole("button", { name: "Configurar" }).click();
        await hotmart.getByLabel("Client ID").fill("cid-e2e");
        await hotmart.getByLabel("Client Secret").fill("segredo-e2e-123");
        await hotmart.getByLabel("Token Basic").fill("Basic e2e");
        await hotmart.getByLabel("Hottok").fill("hottok-e2e");
        await hotmart.getByRole("button", { name: "Salvar" }).click();
        await expectText(hotmart, "Hottok (autentica o webhook de vendas): ✓ definido");
        await tallScreenshot(ctx, page, "integrations-webhook-urls");
        log("webhook URLs shown; Hotmart configured with its hottok");

        // A launch with one group; the buyer joins it through its invite (the simulator plays WhatsApp).
        const call = apiCaller(baseUrl, apiKey);
        const launch = await call("POST", "/api/external/create-launch", {
          name: "Turma Compradores",
          id_channel: [channelId],
          group_template: { name: "Turma Compradores #{n}", admins_only: false, admins: [] },
          initial_groups: 1,
        });
        const code = new URL(launch.groups[0].invite_url).pathname.slice(1);
        await call("POST", `/api/simulator/invites/${encodeURIComponent(code)}/join`, { participant: buyer });

        // Hotmart posts the purchase to the URL the page showed, with the account's hottok.
        const now = Date.now();
        const notice = await fetch(`${baseUrl}${new URL(urls.hotmart).pathname}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-hotmart-hottok": "hottok-e2e" },
          body: JSON.stringify({
            id: "e2e-evt-1",
            creation_date: now,
            event: "PURCHASE_APPROVED",
            version: "2.0.0",
            data: {
              product: { id: 1, name: "Curso Turma Compradores" },
              buyer: { email: "buyer@example.com", name: "Comprador E2E", checkout_phone: "11987650077" },
              purchase: { transaction: "HP-E2E-1", status: "APPROVED", approved_date: now, price: { value: 297, currency_value: "BRL" } },
            },
          }),
        });
        const answer = await notice.text();
        assert(notice.status === 200 && JSON.parse(answer).launches === 1, `the purchase answered ${notice.status}: ${answer}`);

        await page.goto(`${baseUrl}/launches/${launch.id_launch}`);
        await expectVisible(page.getByRole("heading", { name: "Compradores por grupo" }));
        const table = page.getByRole("table", { name: "Compradores por grupo" });
        const row = table.getByRole("row").filter({ hasText: "Turma Compradores #1" });
        await expectText(row.getByTestId("group-buyers"), /^1$/, 30_000);
        await expectText(page.getByTestId("buyers-total"), /^1$/);
        await tallScreenshot(ctx, page, "launch-buyers");
        log("the launch page shows the group's buyer");
      });
    },
  },
];
