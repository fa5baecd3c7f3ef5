/**
 * Webhooks in the browser: set a URL on the Webhooks page, test it, see a real channel_status event
 * arrive signed (verified with standardwebhooks), find it in the delivery log, rotate the secret.
 * The receiver listens on 127.0.0.1: scripts/e2e.ts sets only WEBHOOK_ALLOW_PRIVATE=1, which the
 * production server (the one `npm start` runs) honours.
 */
import { Webhook } from "standardwebhooks";
import { startReceiver, webhookHeadersOf } from "../test/webhooks/receiver";
import { createChannel, nav, newAccount, signUp, withPage } from "./flows";
import { assert, eventually, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

export const tests: E2ETest[] = [
  {
    name: "webhooks: configure, test, receive a signed channel_status, delivery log, rotate the secret",
    async run(ctx) {
      const receiver = await startReceiver();
      try {
        await withPage(ctx, async (page) => {
          await signUp(page, newAccount("wh"));
          await nav(page, "Webhooks").click();
          await expectUrl(page, /\/webhooks$/);
          await expectVisible(page.getByRole("heading", { name: "Webhooks", level: 1 }));

          await page.getByRole("textbox", { name: "Status do canal" }).fill(`${receiver.url}/canal`);
          await page.getByRole("button", { name: "Salvar URLs" }).click();
          await expectText(page.getByRole("status").filter({ hasText: "URLs salvas" }), "1 alterada");
          await page.getByRole("button", { name: "Testar Status do canal" }).click();
          await expectText(page.getByRole("status").filter({ hasText: "HTTP" }), "HTTP 200");
          await ctx.screenshot(page, "webhooks-settings");

          await page.getByRole("button", { name: "Mostrar" }).click();
          const secret = await page.getByLabel("Segredo de assinatura").inputValue();
          assert(secret.startsWith("whsec_"), `secret shown: ${secret}`);
          const test = receiver.received.find((r) => r.path === "/canal");
          assert(test, "the test payload arrived");
          const testEvent = new Webhook(secret).verify(test.body, webhookHeadersOf(test.headers)) as { test?: boolean };
          assert(testEvent.test === true, "the test payload says test: true");

          // A real event: a new channel pairs (connecting → connected).
          await createChannel(page, "Canal Webhook");
          await eventually(async () => {
            const events = receiver.received
              .filter((r) => r.path === "/canal")
              .map(
                (r) =>
                  new Webhook(secret).verify(r.body, webhookHeadersOf(r.headers)) as { type: string; test?: boolean; data: { status: string; name: string } },
              );
            assert(
              events.some((e) => !e.test && e.type === "channel_status" && e.data.status === "connected" && e.data.name === "Canal Webhook"),
              "channel_status connected received",
            );
          }, 20_000);

          await nav(page, "Webhooks").click();
          const row = page.getByRole("row").filter({ hasText: "Status do canal" }).first();
          await expectText(row, "Entregue", 15_000);
          await page.getByRole("combobox", { name: "Situação" }).selectOption("failed");
          await expectVisible(page.getByText("Nenhuma entrega ainda."));
          await page.getByRole("combobox", { name: "Situação" }).selectOption("");

          await page.getByRole("button", { name: "Trocar segredo" }).click();
          await page.getByRole("button", { name: "Confirmar troca" }).click();
          await expectText(page.getByRole("status").filter({ hasText: "Novo segredo" }), "continua assinando");
          await eventually(async () => {
            const rotated = await page.getByLabel("Segredo de assinatura").inputValue();
            assert(rotated.startsWith("whsec_") && rotated !== secret, `a new secret is shown (${rotated.slice(0, 10)}…)`);
          });
          await ctx.screenshot(page, "webhooks-rotated");
        });
      } finally {
        await receiver.close();
      }
    },
  },
];
