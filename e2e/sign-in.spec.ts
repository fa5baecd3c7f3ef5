/**
 * Sign-in throttling in the browser (docs/decisions.md#limits-abuse-retention, "Dashboard sign-in"): after ten wrong passwords for an account, the login
 * page refuses even the right one and says, in Portuguese, when to try again. And sessions ending together
 * (docs/security.md, "Sessions"): a password change on the Conta page signs out the user's other browser
 * and keeps this one; signing out ends every browser's session.
 */
import type { Page } from "playwright-core";
import { attemptSignIn } from "../test/auth/sign-in-client";
import { nav, newAccount, signUp, withPage } from "./flows";
import { assert, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

async function signIn(page: Page, email: string, password: string) {
  await page.goto("/login");
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Senha").fill(password);
  await page.getByRole("button", { name: "Entrar" }).click();
  await expectUrl(page, /\/overview$/, 30_000);
}

export const tests: E2ETest[] = [
  {
    name: "sign-in: ten wrong passwords lock the account; the login page says when to try again",
    async run(ctx) {
      const account = newAccount("lock");
      await withPage(ctx, (page) => signUp(page, account));
      // Ten failures the way a script would make them (the documented csrf + callback sign-in).
      for (let i = 0; i < 10; i++) {
        const a = await attemptSignIn(ctx.baseUrl, account.email, `errada-${i}-xxxxxx`);
        assert(a.error === "CredentialsSignin", `attempt ${i + 1}: ${a.error}`);
      }
      ctx.log("ten wrong passwords sent");
      await withPage(ctx, async (page) => {
        await page.goto("/login");
        await page.getByLabel("E-mail").fill(account.email);
        await page.getByLabel("Senha").fill(account.password);
        await page.getByRole("button", { name: "Entrar" }).click();
        await expectText(page.locator("p.alert-error"), /^Muitas tentativas\. Tente novamente em 1[45] minutos\.$/);
        await ctx.screenshot(page, "sign-in-locked");
        await expectUrl(page, /\/login/);
      });
    },
  },
  {
    name: "sessions: a password change signs the other browser out and keeps this one; signing out ends every browser",
    async run(ctx) {
      const account = newAccount("pw");
      const newPassword = "nova-senha-segura-456";
      await withPage(ctx, async (a) => {
        await signUp(a, account);
        await withPage(ctx, async (b) => {
          await signIn(b, account.email, account.password);

          await nav(a, "Conta").click();
          await expectUrl(a, /\/account$/);
          await a.getByLabel("Senha atual", { exact: true }).fill("nao-e-a-senha");
          await a.getByLabel("Nova senha", { exact: true }).fill(newPassword);
          await a.getByLabel("Confirme a nova senha", { exact: true }).fill(newPassword);
          await a.getByRole("button", { name: "Alterar senha" }).click();
          await expectText(a.locator("form").getByRole("alert"), "A senha atual está incorreta.");
          await a.getByLabel("Senha atual", { exact: true }).fill(account.password);
          await a.getByRole("button", { name: "Alterar senha" }).click();
          await expectText(a.getByRole("status"), "Senha alterada. As outras sessões foram encerradas.");
          await ctx.screenshot(a, "password-changed");

          // This browser got a new session cookie with the answer: it goes on.
          await nav(a, "Canais").click();
          await expectVisible(a.getByRole("heading", { name: "Canais", level: 1 }));
          // The other one is signed out on its next page, and signs in with the new password.
          await b.goto("/segments");
          await expectUrl(b, /\/login/);
          await signIn(b, account.email, newPassword);
          ctx.log("password changed: the other browser was sent to the login, this one stayed");

          // Signing out in A ends B's session too.
          await a.getByRole("button", { name: "Sair" }).click();
          await expectUrl(a, /\/login/);
          await b.goto("/segments");
          await expectUrl(b, /\/login/);
          ctx.log("signed out in one browser: the other was sent to the login");
        });
      });
    },
  },
];
