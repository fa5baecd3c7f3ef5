/** What `npm test` (scripts/test.ts) reads from its stages' output to name a failure in its summary. */

/**
 * Vitest's unhandled errors (a rejection after a test ended, a worker that died or timed out starting), named from its
 * output: they fail the run without failing a test, so the JSON report does not carry them.
 */
export function unhandledErrors(output: string): string[] {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes, when a terminal asked for them
  const lines = output.replace(/\x1b\[[0-9;]*m/g, "").split("\n");
  const found: string[] = [];
  lines.forEach((line, i) => {
    if (!/^⎯+ Unhandled (Error|Rejection) ⎯+\s*$/.test(line.trim())) return;
    const rest = lines.slice(i + 1, i + 60);
    const end = rest.findIndex((l) => /^⎯{3,}/.test(l.trim()));
    const body = end === -1 ? rest : rest.slice(0, end);
    const message =
      body
        .find((l) => l.trim() !== "")
        ?.trim()
        .slice(0, 300) ?? "?";
    const origin = body.map((l) => /This error originated in "([^"]+)"/.exec(l)?.[1]).find(Boolean);
    const latest = body.map((l) => /latest test that might've caused the error is "([^"]+)"/.exec(l)?.[1]).find(Boolean);
    found.push(`vitest unhandled error${origin ? ` in ${origin}` : ""}${latest ? ` (latest test: ${latest})` : ""}: ${message}`);
  });
  return found;
}

/** The last `n` non-empty lines of a text, joined by " | ", for a failure line. */
export function lastLines(text: string, n: number) {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(" | ")
    .slice(0, 400);
}
