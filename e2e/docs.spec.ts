/**
 * The API reference at /docs renders in a browser from the live OpenAPI document (Scalar's bundle is
 * served by this server, no CDN), and lists the published endpoints.
 */
import { withPage } from "./flows";
import { assert, eventually, expectVisible, type E2ETest } from "./harness";

export const tests: E2ETest[] = [
  {
    name: "the interactive API reference renders the published endpoints",
    async run(ctx) {
      await withPage(ctx, async (page) => {
        const scripts: string[] = [];
        page.on("response", (r) => {
          if (r.url().endsWith(".js") || r.url().includes("openapi.json")) scripts.push(`${r.status()} ${new URL(r.url()).pathname}`);
        });
        await page.goto("/docs");
        await expectVisible(page.getByRole("heading", { name: /Group Messaging Campaign Service/ }), 30_000);
        await eventually(async () => {
          // biome-ignore lint/performance/useDomNodeTextContent: a Playwright locator, not a DOM node: innerText is the rendered text asserted on.
          const text = await page.locator("body").innerText();
          // Scalar opens the first tag group and lists the others by name.
          for (const op of [
            "Campaigns",
            "Channels",
            "Segments",
            "Settings",
            "Create a text or media campaign",
            "Create a carousel campaign",
            "Status and progress of a campaign",
          ]) {
            assert(text.includes(op), `the reference does not show ${op}`);
          }
        }, 30_000);
        assert(scripts.includes("200 /docs/scalar.js"), `Scalar bundle not served: ${scripts.join(", ")}`);
        assert(scripts.includes("200 /api/openapi.json"), `OpenAPI document not loaded: ${scripts.join(", ")}`);
        await ctx.screenshot(page, "docs-reference");
        ctx.log("  /docs shows the endpoints from /api/openapi.json");
      });
    },
  },
];
