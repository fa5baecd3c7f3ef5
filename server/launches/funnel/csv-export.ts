/**
 * The launches' CSV exports (launch-members, launch-leads) as a stream (docs/launches.md#exports): the BOM and the
 * header first, then one chunk per page of `csvPageRows` rows read by keyset (never OFFSET), each page fetched only
 * when the reader asks for more, so the server holds one page at a time whatever the number of rows. The REST facade
 * and the dashboard's download routes write the stream to the socket as it comes (Context.sendFile); no transport
 * gets the file collected into one string.
 */
import { BadRequest } from "../../errors";
import type { FileStream } from "../../trpc";

/**
 * One CSV field (CONTRACT §6): quoted when it holds either separator (`,` or `;`, whichever the file uses:
 * a spreadsheet in a `;` locale splits a comma file's unquoted `;`), a quote or a line break; a text a
 * spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) gets a leading `'` (OWASP's CSV
 * injection rule).
 */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[,;"\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** Rows read per query, and written per chunk, while a CSV streams. */
export const csvPageRows = 1000;

export interface CsvFile {
  content_type: string;
  file_name: string;
}

/**
 * A CSV file as a stream. `page(after)` reads the next `csvPageRows` rows after the cursor (null: from the start) and
 * answers their fields and the cursor of the last row; fewer rows than a page ends the file.
 */
export function csvStream<C>(columns: readonly string[], sep: string, page: (after: C | null) => Promise<{ rows: string[][]; last: C | null }>) {
  const encoder = new TextEncoder();
  let after: C | null = null;
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!started) {
          started = true;
          controller.enqueue(encoder.encode(`\uFEFF${columns.join(sep)}\r\n`));
          return;
        }
        const { rows, last } = await page(after);
        if (rows.length > 0) controller.enqueue(encoder.encode(rows.map((r) => `${r.map(csvField).join(sep)}\r\n`).join("")));
        after = last;
        if (rows.length < csvPageRows || last === null) controller.close();
      },
    },
    { highWaterMark: 1 },
  );
}

/**
 * The procedure's `{file}` answer: the stream handed to the transport that writes it as it comes (the content left
 * empty). A transport without one (/api/trpc) would have to hold the whole file: it is refused, the dashboard
 * downloads the file from its streamed routes (server/launches-http/launch-csv.ts).
 */
export function fileAnswer(file: CsvFile, body: ReadableStream<Uint8Array>, sendFile?: (f: FileStream) => void) {
  if (!sendFile) {
    void body.cancel().catch(() => {});
    throw new BadRequest(
      "format=csv is a download streamed by the REST API or the dashboard's /api/dashboard/launches/{id}/leads.csv and members.csv, not a tRPC answer.",
      "csv_download_only",
    );
  }
  sendFile({ ...file, body });
  return { file: { ...file, content: "" } };
}
