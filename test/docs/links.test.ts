import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkLinks, slug } from "../../scripts/check-links";

const root = path.resolve(__dirname, "../..");

describe("documentation links", () => {
  it("every relative link and #anchor in README.md and docs/*.md leads somewhere", () => {
    const broken = checkLinks(root).map((b) => `${b.file}:${b.line}: ${b.target} — ${b.reason}`);
    expect(broken).toEqual([]);
  });
});

describe("the link checker", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "links-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("slugs headings as GitHub does", () => {
    expect(slug("Partner apps (OAuth 2.0)")).toBe("partner-apps-oauth-20");
    expect(slug("Partner apps' webhooks")).toBe("partner-apps-webhooks");
    expect(slug("Client address and proxies (`TRUST_PROXY`)")).toBe("client-address-and-proxies-trust_proxy");
    expect(slug("Limits, abuse, retention")).toBe("limits-abuse-retention");
  });

  it("reports a missing file, a missing anchor and a missing heading of the same file, and nothing else", () => {
    mkdirSync(path.join(dir, "docs"));
    writeFileSync(
      path.join(dir, "README.md"),
      [
        "# Title",
        "## Same heading",
        "## Same heading",
        "[ok](docs/a.md#section) [ok](#same-heading-1) [ok](https://example.com/#x) `[not a link](#nowhere)`",
        "[gone](docs/missing.md) [bad anchor](docs/a.md#nope) [bad local](#nope)",
        "```",
        "[in a code block](#ignored)",
        "```",
      ].join("\n"),
    );
    writeFileSync(path.join(dir, "docs", "a.md"), "# A\n\n## Section\n\n[back](../README.md#title)\n");
    const broken = checkLinks(dir).map((b) => `${b.file}:${b.line}: ${b.target}`);
    expect(broken).toEqual(["README.md:5: docs/missing.md", "README.md:5: docs/a.md#nope", "README.md:5: #nope"]);
  });
});
