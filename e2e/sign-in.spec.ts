/**
 * Sign-in throttling in the browser (docs/decisions.md#limits-abuse-retention, "Dashboard sign-in"): after ten wrong passwords for an account, the login
 * page refuses even the right one and says, in Portuguese, when to try again.
 */
import { attemptSignIn } from "../test/auth/sign-in-client";
import { newAccount, signUp, withPage } from "./flows";
import { assert, expectText, expectUrl, type E2ETest } from "./harness";

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
];
