/**
 * A launch's CSV download in the dashboard session (server/launches-http/launch-csv.ts): a plain link the browser
 * follows and saves as it comes, so the file is never held whole in the page. `options` are the REST export's query
 * options (`status`, `delimiter`).
 */
export function launchCsvUrl(id: string, file: "leads" | "members", options: Record<string, string> = {}): string {
  const query = new URLSearchParams(options).toString();
  return `/api/dashboard/launches/${encodeURIComponent(id)}/${file}.csv${query ? `?${query}` : ""}`;
}
