import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envTableRows } from "../../server/env";

const header = "| Variable | Default | Meaning |\n|---|---|---|\n";

/** The rows of docs/operations.md's configuration table. */
function documentedRows(markdown: string): string[] {
  const start = markdown.indexOf(header);
  if (start < 0) return [];
  const rows: string[] = [];
  for (const line of markdown.slice(start + header.length).split("\n")) {
    if (!line.startsWith("|")) break;
    rows.push(line);
  }
  return rows;
}

describe("docs/operations.md's configuration table", () => {
  it("is server/env.ts's variables, defaults and doc lines, row for row", () => {
    const markdown = readFileSync(path.resolve(__dirname, "../../docs/operations.md"), "utf8");
    expect(documentedRows(markdown)).toEqual(envTableRows());
  });
});
