/**
 * The dashboard on a phone (docs/dashboard.md#on-a-phone): a touch context at 390×844, navigation through
 * the menu button by taps, and the two checks every page must pass there: no horizontal scroll of the
 * page, and every control at least 44 px in both directions.
 */
import type { BrowserContextOptions, Page } from "playwright-core";
import { apiCaller } from "./flows";
import { assert, expectUrl, expectVisible } from "./harness";

export const phoneViewport = { width: 390, height: 844 };

/** A phone-sized touch context (Chromium, as the issue tried it): withPage's options. */
export const phone = (viewport = phoneViewport): BrowserContextOptions => ({
  viewport,
  hasTouch: true,
  isMobile: true,
  deviceScaleFactor: 2,
  userAgent: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
});

/** Opens a section of the menu by taps: the menu button, then the link; waits for the page. */
export async function tapMenu(page: Page, label: string, url: RegExp) {
  const menu = page.getByRole("button", { name: "Menu" });
  await menu.tap();
  assert((await menu.getAttribute("aria-expanded")) === "true", "the menu button did not open the menu");
  await page.getByRole("navigation", { name: "Navegação principal" }).getByRole("link", { name: label }).tap();
  await expectUrl(page, url);
  // Choosing a page closes the menu again.
  await expectVisible(page.locator(".sidebar:not(.open)"));
}

/** The page scrolls sideways: the widest culprits, for the failure message. */
export async function horizontalOverflow(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const root = document.documentElement;
    if (root.scrollWidth <= root.clientWidth) return null;
    const wide = [...document.querySelectorAll<HTMLElement>("body *")]
      .filter((el) => el.getBoundingClientRect().right > root.clientWidth + 1)
      .slice(0, 6)
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join(".")} (right ${Math.round(el.getBoundingClientRect().right)})`);
    return `scrollWidth ${root.scrollWidth} > clientWidth ${root.clientWidth}: ${wide.join(", ")}`;
  });
}

/**
 * Visible controls smaller than 44×44 px. A checkbox or radio counts by its label (the label is what a
 * finger hits); a link inside running text is exempt, as WCAG 2.5.8 exempts inline targets.
 */
export async function smallTapTargets(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const selector = "a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=tab]";
    const small: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>(selector)) {
      if (el.closest("[aria-hidden=true], .sr-only")) continue;
      let target: HTMLElement = el;
      if (el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio")) target = el.closest("label") ?? el;
      const style = getComputedStyle(target);
      if (style.visibility === "hidden" || style.display === "none") continue;
      const r = target.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (el.tagName === "A" && !el.classList.contains("btn") && style.display === "inline") continue;
      if (r.height < 43.5 || r.width < 43.5) {
        const name = (el.getAttribute("aria-label") ?? el.textContent ?? (el as HTMLInputElement).name ?? "").trim().slice(0, 40);
        small.push(
          `${target.tagName.toLowerCase()}${target.className ? `.${String(target.className).split(" ").join(".")}` : ""} "${name}" ${Math.round(r.width)}×${Math.round(r.height)}`,
        );
      }
    }
    return small;
  });
}

/** Both checks on the page as it is now; throws naming what is wrong. */
export async function checkPhoneLayout(page: Page, what: string) {
  const overflow = await horizontalOverflow(page);
  assert(overflow === null, `${what}: the page scrolls sideways at ${page.viewportSize()?.width} px: ${overflow}`);
  const small = await smallTapTargets(page);
  assert(small.length === 0, `${what}: ${small.length} tap targets under 44 px: ${small.slice(0, 8).join("; ")}`);
}

/** An API key made by taps on the Chaves de API page, for the setup a script would do: its REST caller. */
export async function apiKeyByTaps(page: Page, baseUrl: string, name: string) {
  await tapMenu(page, "Chaves de API", /\/api-keys$/);
  await page.getByLabel("Nome da chave").fill(name);
  await page.getByRole("button", { name: "Criar chave" }).tap();
  const keyField = page.getByLabel("Nova chave de API");
  await expectVisible(keyField);
  const api = apiCaller(baseUrl, await keyField.inputValue());
  await page.getByRole("button", { name: "Já copiei, fechar" }).tap();
  return api;
}
