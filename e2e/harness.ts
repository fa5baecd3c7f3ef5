/**
 * The little that the e2e specs need beside playwright-core: a test shape and a few waiting
 * assertions (playwright-core has auto-waiting locators but no `expect`).
 */
import type { Browser, Locator, Page } from "playwright-core";

export interface E2EContext {
  /** The server under test, e.g. http://127.0.0.1:3417 */
  baseUrl: string;
  browser: Browser;
  /** Where screenshots go (gitignored). */
  artifactsDir: string;
  /** Saves a full-page screenshot as <artifactsDir>/<name>.png. */
  screenshot(page: Page, name: string): Promise<void>;
  log(line: string): void;
}

export interface E2ETest {
  name: string;
  /** Longer than the runner's default (E2E_TEST_TIMEOUT_MS, 180 s) for a spec that restarts servers many times. */
  timeoutMs?: number;
  /**
   * The one database this test is about, when it is not both: the runner on the other one skips it (counted as
   * skipped, with the reason). `restart` is PGlite's lock; `two-processes` needs a database two servers share.
   */
  only?: { database: "pglite" | "postgres"; why: string };
  run(ctx: E2EContext): Promise<void>;
}

const defaultTimeout = 15_000;

export class AssertionError extends Error {
  override name = "AssertionError";
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message);
}

/** Retries `check` until it passes or the time is up; the last failure is the error. */
export async function eventually(check: () => Promise<void>, timeout = defaultTimeout): Promise<void> {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 150));
    }
  }
}

export async function expectVisible(locator: Locator, timeout = defaultTimeout) {
  try {
    await locator.first().waitFor({ state: "visible", timeout });
  } catch {
    throw new AssertionError(`expected to be visible: ${locator}`);
  }
}

export async function expectHidden(locator: Locator, timeout = defaultTimeout) {
  try {
    await locator.first().waitFor({ state: "hidden", timeout });
  } catch {
    throw new AssertionError(`expected to be hidden: ${locator}`);
  }
}

export async function expectText(locator: Locator, expected: string | RegExp, timeout = defaultTimeout) {
  let actual = "";
  await eventually(async () => {
    actual = (await locator.textContent({ timeout: 1000 })) ?? "";
    const ok = typeof expected === "string" ? actual.includes(expected) : expected.test(actual);
    assert(ok, `expected ${locator} to contain ${expected}, got ${JSON.stringify(actual)}`);
  }, timeout);
}

export async function expectCount(locator: Locator, count: number, timeout = defaultTimeout) {
  await eventually(async () => {
    const actual = await locator.count();
    assert(actual === count, `expected ${count} elements for ${locator}, got ${actual}`);
  }, timeout);
}

export async function expectUrl(page: Page, pattern: RegExp, timeout = defaultTimeout) {
  try {
    await page.waitForURL(pattern, { timeout });
  } catch {
    throw new AssertionError(`expected the URL to match ${pattern}, got ${page.url()}`);
  }
}
